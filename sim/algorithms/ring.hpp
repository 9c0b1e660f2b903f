#pragma once
// Ring algorithms (NCCL src/device/all_reduce.h runRing, reference/nccl-model.md §1.2).
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule ring_all_reduce(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
