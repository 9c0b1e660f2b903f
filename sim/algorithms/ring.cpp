#include "sim/algorithms/ring.hpp"

#include "sim/algorithms/pipeline.hpp"

namespace ccsim::algo {

Schedule ring_all_reduce(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const int n = spec.nranks;
  Schedule schedule{spec, "ring", {}, 0};
  const std::uint64_t count = spec.count;
  const std::uint64_t chunk = chunk_elements(spec, options);
  const std::uint64_t align = align_elements(spec);

  for (int c = 0; c < options.channels; ++c) {
    const std::vector<int> ring = ring_order(options, c, n);
    const auto loops = chunk_loops(count, n, options.channels, c, chunk, align);
    for (int pos = 0; pos < n; ++pos) {
      Stream stream{ring[static_cast<std::size_t>(pos)], c, {}};
      StepWriter w(stream, options.protocol, c);
      const int next = ring[static_cast<std::size_t>((pos + 1) % n)];
      const int prev = ring[static_cast<std::size_t>((pos + n - 1) % n)];
      auto ring_chunk = [&](int back) { return (pos + n - back) % n; };  // chunk ring position pos - back
      for (const auto& loop : loops) {
        auto in = [&](int j) { return piece(BufferId::input, loop, j, count); };
        auto out = [&](int j) { return piece(BufferId::output, loop, j, count); };
        if (n == 1) {
          w.copy(in(0), out(0), true);
          continue;
        }
        // Reduce-scatter: pass partial sums around the ring; the output buffer holds them in flight.
        w.send(next, in(ring_chunk(1)));
        for (int j = 2; j < n; ++j) {
          const int k = ring_chunk(j);
          w.recv_reduce(prev, in(k), out(k));
          w.send(next, out(k));
        }
        // This rank completes its own chunk, then the all-gather forwards finished chunks.
        w.recv_reduce(prev, in(pos), out(pos), true);
        w.send(next, out(pos));
        for (int j = 1; j < n - 1; ++j) {
          const int k = ring_chunk(j);
          w.recv(prev, out(k));
          w.send(next, out(k));
        }
        w.recv(prev, out(ring_chunk(n - 1)));
      }
      schedule.streams.push_back(std::move(stream));
    }
  }
  return schedule;
}

}  // namespace ccsim::algo
