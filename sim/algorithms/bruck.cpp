#include "sim/algorithms/bruck.hpp"

#include <algorithm>

#include "sim/algorithms/pipeline.hpp"

namespace ccsim::algo {

namespace {

void all_gather(int n, int r, const Part& part, std::uint64_t block, StepWriter& w) {
  // scratch block i holds rank (r + i) mod N's block.
  w.copy(Region{BufferId::input, part.offset, part.count}, block_region(BufferId::scratch, 0, block, part));
  for (int d = 1; d < n; d <<= 1) {
    const int count = std::min(d, n - d);
    w.send((r - d + n) % n, block_span(BufferId::scratch, 0, count, block, part));
    w.recv((r + d) % n, block_span(BufferId::scratch, d, d + count, block, part));
  }
  w.copy(block_span(BufferId::scratch, 0, n - r, block, part), block_span(BufferId::output, r, n, block, part));
  w.copy(block_span(BufferId::scratch, n - r, n, block, part), block_span(BufferId::output, 0, r, block, part));
}

void alltoall(int n, int r, const Part& part, std::uint64_t block, StepWriter& w) {
  // scratch block i starts as the block for rank (r + i) mod N and ends as the one from (r - i).
  w.copy(block_span(BufferId::input, r, n, block, part), block_span(BufferId::scratch, 0, n - r, block, part));
  w.copy(block_span(BufferId::input, 0, r, block, part), block_span(BufferId::scratch, n - r, n, block, part));
  for (int d = 1; d < n; d <<= 1) {
    std::vector<Region> moving;
    for (int i = 1; i < n; ++i)
      if (i & d) moving.push_back(block_region(BufferId::scratch, i, block, part));
    w.send((r + d) % n, moving);
    w.recv((r - d + n) % n, moving);
  }
  for (int i = 0; i < n; ++i)
    w.copy(block_region(BufferId::scratch, i, block, part), block_region(BufferId::output, (r - i + n) % n, block, part));
}

}  // namespace

Schedule bruck(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const int n = spec.nranks;
  Schedule schedule{spec, "bruck", {}, spec.count, {}};
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  for (int c = 0; c < options.channels; ++c) {
    const Part part = channel_part(block, options.channels, c);
    for (int r = 0; r < n; ++r) {
      Stream stream{r, c, {}};
      StepWriter w(stream, options.protocol, c);
      if (spec.kind == CollectiveKind::all_gather) all_gather(n, r, part, block, w);
      else alltoall(n, r, part, block, w);
      schedule.streams.push_back(std::move(stream));
    }
  }
  return schedule;
}

}  // namespace ccsim::algo
