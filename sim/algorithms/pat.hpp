#pragma once
// PAT, Parallel Aggregated Trees (NCCL 2.23+; S. Jeaugey, arXiv 2506.20252): all_gather and
// reduce_scatter in ceil(log2 N) steps for any N. all_gather is Bruck's algorithm with its
// dimensions reversed, the farthest first, so the last steps (which carry the most blocks) go to
// the nearest ranks; reduce_scatter runs the transposed trees, nearest first. The blocks a step
// forwards to one peer form one aggregated message: one latency, several regions. NCCL bounds the
// staging buffer and aggregates fewer ranks at once when it is small; this schedule stages in a
// full-size scratch buffer. NCCL runs PAT only with one GPU per node; here it runs anywhere.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule pat(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
