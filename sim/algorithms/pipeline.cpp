#include "sim/algorithms/pipeline.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "sim/error.hpp"

namespace ccsim::algo {

namespace {
std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
}  // namespace

std::vector<ChunkLoop> chunk_loops(std::uint64_t count, int pieces, int channels, int channel,
                                   std::uint64_t chunk_elems, std::uint64_t align_elems) {
  std::vector<ChunkLoop> loops;
  const std::uint64_t per_loop_pieces = static_cast<std::uint64_t>(pieces) * static_cast<std::uint64_t>(channels);
  const std::uint64_t loop_size = per_loop_pieces * chunk_elems;
  for (std::uint64_t grid = 0; grid < count; grid += loop_size) {
    std::uint64_t chunk = std::min(chunk_elems, div_up(count - grid, per_loop_pieces));
    chunk = div_up(chunk, align_elems) * align_elems;
    loops.push_back({grid + static_cast<std::uint64_t>(channel) * static_cast<std::uint64_t>(pieces) * chunk, chunk});
  }
  return loops;
}

Region piece(BufferId buffer, const ChunkLoop& loop, int j, std::uint64_t count) {
  const std::uint64_t offset = loop.base + static_cast<std::uint64_t>(j) * loop.chunk;
  if (offset >= count) return {buffer, count, 0};
  return {buffer, offset, std::min(loop.chunk, count - offset)};
}

std::uint64_t align_elements(const CollectiveSpec& spec) {
  return std::max<std::uint64_t>(1, 16 / element_bytes(spec.type));
}

std::uint64_t chunk_elements(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const std::uint64_t align = align_elements(spec);
  const std::uint64_t elems = options.chunk_bytes / element_bytes(spec.type);
  return std::max(align, elems / align * align);
}

namespace {
// Data one thread block moves per pass over a connection's FIFO (NCCL src/device/prims_ll.h,
// prims_ll128.h): LL, 512 threads (NCCL_LL_MAX_NTHREADS) each storing one 16-byte line of 8 data
// bytes; LL128, 640 threads (NCCL_LL128_MAX_NTHREADS, 20 warps) each moving 8 words
// (NCCL_LL128_SHMEM_ELEMS_PER_THREAD) of 128-byte lines that carry 120 data bytes. Line formats and
// thread counts: reference/nccl-model.md §1.7 and §2.
constexpr std::uint64_t kLlPassBytes = 512 * 8;
constexpr std::uint64_t kLl128PassBytes = 640 * 8 * 8 * 120 / 128;
}  // namespace

Hops::Hops(const CollectiveSpec& spec, const AlgorithmOptions& options) : ppn_(options.ranks_per_node) {
  const std::uint64_t bytes = options.protocol == Protocol::ll      ? kLlPassBytes
                              : options.protocol == Protocol::ll128 ? kLl128PassBytes
                                                                    : 0;
  const std::uint64_t align = align_elements(spec);
  // A stream of several identical blocks moves one pass of each at once.
  const std::uint64_t pass = bytes * static_cast<std::uint64_t>(std::max(1, options.blocks));
  if (pass > 0) granule_ = std::max(align, pass / element_bytes(spec.type) / align * align);
}

bool Hops::cut_through(int a, int b) const {
  return granule_ > 0 && (ppn_ <= 0 || a / ppn_ == b / ppn_);
}

std::vector<Region> Hops::pieces(const Region& r, int a, int b) const {
  if (!cut_through(a, b) || r.count <= granule_) return {r};
  std::vector<Region> out;
  for (std::uint64_t at = 0; at < r.count; at += granule_)
    out.push_back({r.buffer, r.offset + at, std::min(granule_, r.count - at)});
  return out;
}

Region same_part(const Region& part, const Region& whole, const Region& like) {
  return {like.buffer, like.offset + (part.offset - whole.offset), part.count};
}

int ranks_per_node(const CollectiveSpec& spec, const AlgorithmOptions& options, const std::string& algorithm) {
  const int n = spec.nranks;
  const int ppn = options.ranks_per_node > 0 ? std::min(options.ranks_per_node, n) : n;
  if (n % ppn != 0)
    throw Error(algorithm + ": " + std::to_string(n) + " ranks do not split into nodes of " + std::to_string(ppn));
  return ppn;
}

std::vector<int> ring_order(const AlgorithmOptions& options, int channel, int nranks) {
  if (!options.rings.empty()) return options.rings[static_cast<std::size_t>(channel)];
  std::vector<int> ring(static_cast<std::size_t>(nranks));
  std::iota(ring.begin(), ring.end(), 0);
  return ring;
}

Part channel_part(std::uint64_t count, int channels, int c) {
  const auto n = static_cast<std::uint64_t>(channels), i = static_cast<std::uint64_t>(c);
  const std::uint64_t begin = count * i / n, end = count * (i + 1) / n;
  return {begin, end - begin};
}

Region block_region(BufferId buffer, int b, std::uint64_t block, const Part& part) {
  return {buffer, static_cast<std::uint64_t>(b) * block + part.offset, part.count};
}

std::vector<Region> block_span(BufferId buffer, int lo, int hi, std::uint64_t block, const Part& part) {
  if (part.count == block)
    return {{buffer, static_cast<std::uint64_t>(lo) * block, static_cast<std::uint64_t>(hi - lo) * block}};
  std::vector<Region> out;
  for (int b = lo; b < hi; ++b) out.push_back(block_region(buffer, b, block, part));
  return out;
}

void StepWriter::send(int peer, const std::vector<Region>& src, bool wait) {
  // One packed message: its latency is paid once, by the first region.
  for (std::size_t i = 0; i < src.size(); ++i) {
    send(peer, src[i], wait && i + 1 == src.size());
    if (i > 0) stream_.steps.back().fused = true;
  }
}

void StepWriter::recv(int peer, const std::vector<Region>& dst) {
  for (const auto& r : dst) recv(peer, r);
}

void StepWriter::copy(const std::vector<Region>& src, const std::vector<Region>& dst) {
  for (std::size_t i = 0; i < src.size() && i < dst.size(); ++i) copy(src[i], dst[i]);
}

void StepWriter::send(int peer, const Region& src, bool wait) {
  Step s;
  s.wait = wait;
  s.kind = StepKind::send;
  s.protocol = protocol_;
  s.peer = peer;
  s.tag = tag_;
  s.src = src;
  stream_.steps.push_back(s);
}

void StepWriter::send_piece(int peer, const Region& src, std::size_t index) {
  send(peer, src);
  stream_.steps.back().part = index > 0;
}

void StepWriter::send_pieces(int peer, const std::vector<Region>& pieces) {
  for (std::size_t i = 0; i < pieces.size(); ++i) send_piece(peer, pieces[i], i);
}

void StepWriter::end_overlap(bool sends) {
  // Every step of `kind` since begin_overlap() goes with the next one of its kind.
  auto group = [this](StepKind kind) {
    Step* previous = nullptr;
    for (std::size_t i = overlap_from_; i < stream_.steps.size(); ++i) {
      if (stream_.steps[i].kind != kind) continue;
      if (previous) previous->overlap = true;
      previous = &stream_.steps[i];
    }
  };
  group(StepKind::recv);
  if (sends) group(StepKind::send);
  overlap_from_ = SIZE_MAX;
}

void StepWriter::fused_send(int peer, const Region& src) {
  send(peer, src);
  stream_.steps.back().fused = true;
}

void StepWriter::recv(int peer, const Region& dst, bool finalize) {
  Step s;
  s.kind = StepKind::recv;
  s.protocol = protocol_;
  s.peer = peer;
  s.tag = tag_;
  s.dst = dst;
  s.finalize = finalize;
  stream_.steps.push_back(s);
}

void StepWriter::recv_reduce(int peer, const Region& src, const Region& dst, bool finalize) {
  recv(peer, dst, finalize);
  stream_.steps.back().reduce = true;
  stream_.steps.back().src = src;
}

void StepWriter::copy(const Region& src, const Region& dst, bool finalize) {
  Step s;
  s.kind = StepKind::copy;
  s.protocol = protocol_;
  s.src = src;
  s.dst = dst;
  s.finalize = finalize;
  stream_.steps.push_back(s);
}

void relay(StepWriter& w, const Hops& hops, int prev, int self, int next, const Region& src, const Region& dst,
           bool reduce, bool finalize) {
  const std::vector<Region> in = hops.pieces(dst, prev, self);
  const bool stream = next >= 0 && in.size() > 1 && hops.cut_through(self, next);
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (reduce) w.recv_reduce(prev, same_part(in[i], dst, src), in[i], finalize);
    else w.recv(prev, in[i], finalize);
    if (stream) w.send_piece(next, in[i], i);
  }
  if (next >= 0 && !stream) w.send_pieces(next, hops.pieces(dst, self, next));
}

}  // namespace ccsim::algo
