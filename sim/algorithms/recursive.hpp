#pragma once
// Recursive doubling (all_reduce, all_gather) and recursive halving-doubling, Rabenseifner's
// all_reduce. A non-power-of-two N is folded first (MPICH's scheme): of the first 2*rem ranks
// (rem = N - p, p the largest power of two <= N) each even rank hands its data to the odd rank
// above it and gets the result back at the end; the p remaining ranks run the power-of-two
// algorithm.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule recursive_doubling(const CollectiveSpec& spec, const AlgorithmOptions& options);
Schedule halving_doubling(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
