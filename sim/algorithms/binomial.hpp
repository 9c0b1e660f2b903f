#pragma once
// Binomial trees rooted anywhere (MPICH's broadcast, reduce, gather and scatter): with relative
// rank v = (rank - root) mod N, v's parent is v minus its lowest set bit and its children are
// v + 2^k for every 2^k below that bit. ceil(log2 N) rounds; sends wait for delivery, as a
// blocking MPI send does, so a parent serves its children one after the other.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule binomial(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
