#pragma once
// NVLS (NVLink SHARP, NCCL 2.17+; reference/nccl-model.md §1.5): the NVSwitch reduces and
// multicasts. Every GPU is the head of 1/N of the buffer: the switch reads all GPUs' copies of the
// head's part and returns the reduction to it (multimem.ld_reduce), and the head's store of the
// result is replicated to every GPU by the switch (multimem.st). Each GPU moves S(N+1)/N each way,
// against 2S(N-1)/N for a ring.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule nvls(const CollectiveSpec& spec, const AlgorithmOptions& options);
// NVLSTree (NCCL 2.18+): NVLS reduction inside each node, a double binary tree across nodes among
// the GPUs heading the same part, then the NVLS multicast inside each node (all_reduce).
Schedule nvls_tree(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
