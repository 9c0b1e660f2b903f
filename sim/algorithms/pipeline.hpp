#pragma once
// Building blocks shared by the algorithms: how NCCL cuts a buffer into per-channel, per-loop
// chunks, and how steps are written.
#include <cstdint>
#include <vector>

#include "sim/algorithms/registry.hpp"
#include "sim/schedule.hpp"

namespace ccsim::algo {

// One pass of a channel over its part of a loop: `pieces` consecutive chunks of `chunk` elements
// starting at `base` (NCCL's gridOffset + channel * nranks * realChunkSize).
struct ChunkLoop {
  std::uint64_t base = 0;
  std::uint64_t chunk = 0;
};

// NCCL's ring loop: the buffer is walked in loops of channels x pieces x chunk elements; the last
// loop shrinks its chunk to divUp(remaining, channels x pieces), rounded up to `align` elements.
std::vector<ChunkLoop> chunk_loops(std::uint64_t count, int pieces, int channels, int channel,
                                   std::uint64_t chunk_elems, std::uint64_t align_elems);

// Region of piece `j` of a loop, clipped to the buffer's `count` (possibly empty).
Region piece(BufferId buffer, const ChunkLoop& loop, int j, std::uint64_t count);

// The share of a block's threads that reduces up where NCCL splits the block between reducing up
// and broadcasting down (runTreeSplit and the CollNet chain, src/device/all_reduce.h): with Simple
// half its 512 threads plus two warps; with LL and LL128, 70%.
inline double split_reduce_share(Protocol p) { return p == Protocol::simple ? 320.0 / 512.0 : 0.7; }

// Elements per chunk for this protocol and type, and the alignment of chunk sizes (16 bytes).
std::uint64_t chunk_elements(const CollectiveSpec& spec, const AlgorithmOptions& options);
std::uint64_t align_elements(const CollectiveSpec& spec);

// The part of `count` elements that channel `c` of `channels` handles (contiguous, near-equal).
struct Part {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};
Part channel_part(std::uint64_t count, int channels, int c);
// Region of block `b` (blocks of `block` elements) restricted to a channel's part of the block.
Region block_region(BufferId buffer, int b, std::uint64_t block, const Part& part);

// Regions of blocks [lo, hi) restricted to a channel's part of each block: one region when the part
// is the whole block (consecutive blocks are contiguous), else one per block.
std::vector<Region> block_span(BufferId buffer, int lo, int hi, std::uint64_t block, const Part& part);

// GPUs per node for node-aware algorithms (all ranks when the options name none); Error naming
// `algorithm` when the ranks do not split into whole nodes.
int ranks_per_node(const CollectiveSpec& spec, const AlgorithmOptions& options, const std::string& algorithm);

// Ring order of channel `c` (identity when none is given).
std::vector<int> ring_order(const AlgorithmOptions& options, int channel, int nranks);

// The pieces in which one hop between two ranks carries a chunk. LL and LL128 flag every line, so
// inside a node a GPU passes each line on as soon as it arrives: a chunk crosses a hop in the pieces
// one thread block moves per pass (cut-through), and a chain of hops adds one piece's time per hop,
// not one chunk's. Simple posts a slice only when all of it is written, and between nodes NCCL's
// proxy sends whole FIFO steps: there a chunk is one piece (store and forward).
class Hops {
 public:
  Hops(const CollectiveSpec& spec, const AlgorithmOptions& options);
  // Whether a hop from rank `a` to rank `b` forwards line by line.
  bool cut_through(int a, int b) const;
  // `r` in the pieces the hop from `a` to `b` moves: one piece unless it cuts through.
  std::vector<Region> pieces(const Region& r, int a, int b) const;

 private:
  std::uint64_t granule_ = 0;  // elements per piece; 0: whole chunks
  int ppn_ = 0;                // ranks per node; 0: one node
};

// The piece of `like` at the place `part` holds in `whole`: the matching piece of another buffer
// region with the same layout (a chunk's input when `whole` is its output).
Region same_part(const Region& part, const Region& whole, const Region& like);

// Appends steps to a stream; every step carries the stream's protocol and tag.
class StepWriter {
 public:
  StepWriter(Stream& stream, Protocol protocol, int tag) : stream_(stream), protocol_(protocol), tag_(tag) {}
  void send(int peer, const Region& src, bool wait = false);
  // Piece `index` of a chunk that a hop forwards line by line: the first opens the chunk's FIFO
  // step, the later ones are parts of it (Step::part).
  void send_piece(int peer, const Region& src, std::size_t index);
  // Each piece in turn.
  void send_pieces(int peer, const std::vector<Region>& pieces);
  // A send whose latency another step of the same operation pays (Step::fused).
  void fused_send(int peer, const Region& src);
  void recv(int peer, const Region& dst, bool finalize = false);
  // dst = op(src, incoming)
  void recv_reduce(int peer, const Region& src, const Region& dst, bool finalize = false);
  void copy(const Region& src, const Region& dst, bool finalize = false);
  void set_tag(int tag) { tag_ = tag; }
  // Receives written between begin_overlap() and end_overlap() have their transfers run together.
  // With `sends`, so do the sends there: separate point-to-point operations of one kernel, each on
  // warps of its own, issued together (Step::overlap).
  void begin_overlap() { overlap_from_ = stream_.steps.size(); }
  void end_overlap(bool sends = false);
  // The same for lists of regions (block spans), region by region, in order; the regions of one
  // send form one packed message (fused after the first).
  void send(int peer, const std::vector<Region>& src, bool wait = false);
  void recv(int peer, const std::vector<Region>& dst);
  void copy(const std::vector<Region>& src, const std::vector<Region>& dst);

 private:
  Stream& stream_;
  Protocol protocol_;
  int tag_;
  std::size_t overlap_from_ = SIZE_MAX;
};

// Receives a chunk from `prev` into `dst` (combined with `src` when `reduce`) and, when `next` is
// a rank (not -1), sends the result on: piece by piece where both hops cut through, so the chunk
// streams through `self`, else once all of it is in.
void relay(StepWriter& w, const Hops& hops, int prev, int self, int next, const Region& src, const Region& dst,
           bool reduce, bool finalize);

}  // namespace ccsim::algo
