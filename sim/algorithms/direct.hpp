#pragma once
// Every rank talks to every peer directly. "direct" posts all its sends, then all its receives
// (NCCL's p2p all-to-all, one-shot all_reduce); "pairwise" exchanges with one peer per round
// (MPI's pairwise exchange: partner r XOR k when N is a power of two, else send to r+k and
// receive from r-k).
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule direct(const CollectiveSpec& spec, const AlgorithmOptions& options);
Schedule pairwise(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
