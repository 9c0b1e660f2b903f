#include "sim/algorithms/ring.hpp"

#include <algorithm>

#include "sim/algorithms/pipeline.hpp"

namespace ccsim::algo {

namespace {

// The ring of one channel, seen from one of its positions.
struct RingView {
  std::vector<int> order;
  int n = 0;
  int pos = 0;
  int rank() const { return at(pos); }
  int next() const { return at(pos + 1); }
  int prev() const { return at(pos - 1); }
  int at(int position) const { return order[static_cast<std::size_t>(((position % n) + n) % n)]; }
};

// Rotates a ring so that `rank` sits at `position`.
std::vector<int> rotate_to(std::vector<int> order, int rank, int position) {
  const int n = static_cast<int>(order.size());
  const auto it = std::find(order.begin(), order.end(), rank);
  const int shift = (static_cast<int>(it - order.begin()) - position + n) % n;
  std::rotate(order.begin(), order.begin() + shift, order.end());
  return order;
}

// NCCL's runRing all_reduce: N-1 reduce-scatter steps, then N-1 all-gather steps, per chunk loop.
// The output buffer carries the partial sums in flight.
void all_reduce_stream(const CollectiveSpec& spec, const RingView& ring, const std::vector<ChunkLoop>& loops,
                       StepWriter& w) {
  const int n = ring.n, pos = ring.pos;
  for (const auto& loop : loops) {
    auto in = [&](int k) { return piece(BufferId::input, loop, ((k % n) + n) % n, spec.count); };
    auto out = [&](int k) { return piece(BufferId::output, loop, ((k % n) + n) % n, spec.count); };
    if (n == 1) {
      w.copy(in(0), out(0), true);
      continue;
    }
    w.send(ring.next(), in(pos - 1));
    for (int j = 2; j < n; ++j) {
      w.recv_reduce(ring.prev(), in(pos - j), out(pos - j));
      w.send(ring.next(), out(pos - j));
    }
    w.recv_reduce(ring.prev(), in(pos), out(pos), true);
    w.send(ring.next(), out(pos));
    for (int j = 1; j < n - 1; ++j) {
      w.recv(ring.prev(), out(pos - j));
      w.send(ring.next(), out(pos - j));
    }
    w.recv(ring.prev(), out(pos + 1));
  }
}

// Region of one rank's block (reduce_scatter input, all_gather output) for a chunk loop that walks
// the block: NCCL's AG/RS loops cover one block, at the same offset in every block.
Region block_piece(BufferId buffer, const ChunkLoop& loop, int block_index, std::uint64_t block) {
  const Region r = piece(buffer, loop, 0, block);
  return {buffer, static_cast<std::uint64_t>(block_index) * block + r.offset, r.count};
}

void reduce_scatter_stream(const CollectiveSpec& spec, const RingView& ring, const std::vector<ChunkLoop>& loops,
                           StepWriter& w) {
  const int n = ring.n, pos = ring.pos;
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  for (const auto& loop : loops) {
    auto in = [&](int k) { return block_piece(BufferId::input, loop, ring.at(k), block); };
    const Region mine = piece(BufferId::output, loop, 0, block);
    const Region partial = piece(BufferId::scratch, loop, 0, block);
    if (n == 1) {
      w.copy(in(pos), mine, true);
      continue;
    }
    w.send(ring.next(), in(pos - 1));
    for (int j = 2; j < n; ++j) {
      w.recv_reduce(ring.prev(), in(pos - j), partial);
      w.send(ring.next(), partial);
    }
    w.recv_reduce(ring.prev(), in(pos), mine, true);
  }
}

void all_gather_stream(const CollectiveSpec& spec, const RingView& ring, const std::vector<ChunkLoop>& loops,
                       StepWriter& w) {
  const int n = ring.n, pos = ring.pos;
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  for (const auto& loop : loops) {
    auto out = [&](int k) { return block_piece(BufferId::output, loop, ring.at(k), block); };
    const Region own = piece(BufferId::input, loop, 0, block);
    // NCCL sends its own block and writes it to its output in one pass (copySend), and the pass
    // costs about what the copy and the send would one after the other: out of place, measured
    // runs take 17% longer than in place with 2 ranks (B200, 8 GiB, shared data
    // gke-a4-b200-nvlink-2g) and 3% with 8 (A100, superbench), where the copy is 1 of 7 steps.
    // So the copy comes first. (A broadcast root, which receives nothing, writes its next chunk
    // while the last one travels: there the copy hides, as measured, in place or not.)
    w.copy(own, out(pos));
    if (n > 1) w.send(ring.next(), own);
    if (n == 1) continue;
    for (int j = 1; j < n - 1; ++j) {
      w.recv(ring.prev(), out(pos - j));
      w.send(ring.next(), out(pos - j));
    }
    w.recv(ring.prev(), out(pos + 1));
  }
}

// Broadcast and reduce pipeline chunks along the ring opened into a chain at the root; with LL and
// LL128 each GPU of a node passes a chunk on line by line (Hops).
void broadcast_stream(const CollectiveSpec& spec, const RingView& chain, const std::vector<ChunkLoop>& loops,
                      const Hops& hops, StepWriter& w) {
  const int n = chain.n, pos = chain.pos;
  for (const auto& loop : loops) {
    const Region in = piece(BufferId::input, loop, 0, spec.count);
    const Region out = piece(BufferId::output, loop, 0, spec.count);
    if (pos == 0) {
      // The root sends and writes its output in one pass (copySend): the copy does not delay the send.
      if (n > 1) w.send_pieces(chain.next(), hops.pieces(in, chain.rank(), chain.next()));
      w.copy(in, out);
    } else {
      relay(w, hops, chain.prev(), chain.rank(), pos < n - 1 ? chain.next() : -1, out, out, false, false);
    }
  }
}

void reduce_stream(const CollectiveSpec& spec, const RingView& chain, const std::vector<ChunkLoop>& loops,
                   const Hops& hops, StepWriter& w) {
  const int n = chain.n, pos = chain.pos;
  for (const auto& loop : loops) {
    const Region in = piece(BufferId::input, loop, 0, spec.count);
    const Region out = piece(BufferId::output, loop, 0, spec.count);
    const bool root = pos == n - 1;
    if (pos == 0) {
      if (root) w.copy(in, out, true);
      else w.send_pieces(chain.next(), hops.pieces(in, chain.rank(), chain.next()));
      continue;
    }
    relay(w, hops, chain.prev(), chain.rank(), root ? -1 : chain.next(), in, out, true, root);
  }
}

}  // namespace

Schedule ring(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const int n = spec.nranks;
  Schedule schedule{spec, "ring", {}, 0, {}};
  const std::uint64_t align = align_elements(spec);
  // NCCL's ring all_reduce/all_gather/reduce_scatter chunks are 4 FIFO steps with Simple, its
  // broadcast/reduce chunks 1 step (BROADCAST_CHUNKSTEPS; reference/nccl-model.md §1.2).
  const bool chain = spec.kind == CollectiveKind::broadcast || spec.kind == CollectiveKind::reduce;
  const std::uint64_t chunk = chain && options.protocol == Protocol::simple
                                  ? std::max(align, chunk_elements(spec, options) / 4 / align * align)
                                  : chunk_elements(spec, options);
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  const bool per_block = spec.kind == CollectiveKind::reduce_scatter || spec.kind == CollectiveKind::all_gather;
  if (spec.kind == CollectiveKind::reduce_scatter) schedule.scratch_count = block;
  const Hops hops(spec, options);

  for (int c = 0; c < options.channels; ++c) {
    RingView view{ring_order(options, c, n), n, 0};
    if (spec.kind == CollectiveKind::broadcast) view.order = rotate_to(view.order, spec.root, 0);
    if (spec.kind == CollectiveKind::reduce) view.order = rotate_to(view.order, spec.root, n - 1);
    const auto loops = per_block ? chunk_loops(block, 1, options.channels, c, chunk, align)
                       : spec.kind == CollectiveKind::all_reduce
                           ? chunk_loops(spec.count, n, options.channels, c, chunk, align)
                           : chunk_loops(spec.count, 1, options.channels, c, chunk, align);
    for (int pos = 0; pos < n; ++pos) {
      view.pos = pos;
      Stream stream{view.rank(), c, {}};
      StepWriter w(stream, options.protocol, c);
      switch (spec.kind) {
        case CollectiveKind::all_reduce: all_reduce_stream(spec, view, loops, w); break;
        case CollectiveKind::reduce_scatter: reduce_scatter_stream(spec, view, loops, w); break;
        case CollectiveKind::all_gather: all_gather_stream(spec, view, loops, w); break;
        case CollectiveKind::broadcast: broadcast_stream(spec, view, loops, hops, w); break;
        case CollectiveKind::reduce: reduce_stream(spec, view, loops, hops, w); break;
        default: break;  // the registry only sends the kinds above
      }
      schedule.streams.push_back(std::move(stream));
    }
  }
  return schedule;
}

}  // namespace ccsim::algo
