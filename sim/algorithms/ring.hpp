#pragma once
// Ring algorithms (NCCL src/device/all_reduce.h and friends, reference/nccl-model.md §1.2): each
// channel has its own ring order and its own slice of the data, walked in chunk loops.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

// all_reduce, reduce_scatter, all_gather, broadcast, reduce.
Schedule ring(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
