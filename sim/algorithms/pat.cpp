#include "sim/algorithms/pat.hpp"

#include <algorithm>

#include "sim/algorithms/pipeline.hpp"

namespace ccsim::algo {

namespace {

int dimensions(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// Offsets (from a block's source) reached before the step of distance d in the all_gather order:
// sums of the dimensions above d, below N.
std::vector<int> offsets_above(int n, int d, int k) {
  std::vector<int> j{0};
  for (int dim = 1 << (k - 1); dim > d; dim >>= 1) {
    const std::size_t size = j.size();
    for (std::size_t i = 0; i < size; ++i)
      if (j[i] + dim < n) j.push_back(j[i] + dim);
  }
  std::sort(j.begin(), j.end());
  return j;
}

void all_gather(int n, int r, const Part& part, std::uint64_t block, Protocol protocol, int tag, Stream& stream) {
  StepWriter w(stream, protocol, tag);
  w.copy(Region{BufferId::input, part.offset, part.count}, block_region(BufferId::output, r, block, part));
  const int k = dimensions(n);
  for (int d = k > 0 ? 1 << (k - 1) : 0; d >= 1; d >>= 1) {
    bool first = true;
    for (int j : offsets_above(n, d, k))  // one aggregated message to r - d
      if (j + d < n) {
        const Region blk = block_region(BufferId::output, (r + j) % n, block, part);
        if (first) w.send((r - d + n) % n, blk);
        else w.fused_send((r - d + n) % n, blk);
        first = false;
      }
    w.begin_overlap();
    for (int j : offsets_above(n, d, k))
      if (j + d < n) w.recv((r + d) % n, block_region(BufferId::output, (r + d + j) % n, block, part));
    w.end_overlap();
  }
}

void reduce_scatter(int n, int r, const Part& part, std::uint64_t block, Protocol protocol, int tag, Stream& stream) {
  StepWriter w(stream, protocol, tag);
  for (int b = 0; b < n; ++b)  // partial sums start as this rank's own contribution
    w.copy(block_region(BufferId::input, b, block, part), block_region(BufferId::scratch, b, block, part));
  const int k = dimensions(n);
  for (int d = 1; d < (1 << k); d <<= 1) {
    const auto offsets = offsets_above(n, d, k);
    bool first = true;
    for (int j : offsets)  // partials of the blocks this rank forwards towards their owners
      if (j + d < n) {
        const Region blk = block_region(BufferId::scratch, (r + d + j) % n, block, part);
        if (first) w.send((r + d) % n, blk);
        else w.fused_send((r + d) % n, blk);
        first = false;
      }
    w.begin_overlap();
    for (int j : offsets)
      if (j + d < n) {
        const Region blk = block_region(BufferId::scratch, (r + j) % n, block, part);
        w.recv_reduce((r - d + n) % n, blk, blk);
      }
    w.end_overlap();
  }
  w.copy(block_region(BufferId::scratch, r, block, part), Region{BufferId::output, part.offset, part.count}, true);
}

}  // namespace

Schedule pat(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const int n = spec.nranks;
  Schedule schedule{spec, "pat", {}, spec.kind == CollectiveKind::reduce_scatter ? spec.count : 0, {}};
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  for (int c = 0; c < options.channels; ++c) {
    const Part part = channel_part(block, options.channels, c);
    for (int r = 0; r < n; ++r) {
      Stream stream{r, c, {}};
      if (spec.kind == CollectiveKind::all_gather) all_gather(n, r, part, block, options.protocol, c, stream);
      else reduce_scatter(n, r, part, block, options.protocol, c, stream);
      schedule.streams.push_back(std::move(stream));
    }
  }
  return schedule;
}

}  // namespace ccsim::algo
