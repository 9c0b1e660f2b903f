#pragma once
// Bruck's algorithms (Bruck et al., IEEE TPDS 1997): ceil(log2 N) rounds for any N. all_gather
// doubles the blocks it holds each round; alltoall rotates its blocks, then in round k forwards
// every block whose index has bit k set to rank + 2^k, then rotates them into place.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule bruck(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
