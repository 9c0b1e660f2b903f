#pragma once
// NCCL's tree (src/graph/trees.cc, reference/nccl-model.md §1.3): a chain of the GPUs inside each
// node, and a double binary tree across nodes, so that every node is a leaf in one of the two
// trees; even channels use tree 0, odd channels tree 1. all_reduce reduces up the tree and
// broadcasts down it, the two halves running concurrently on separate streams as NCCL's split
// thread groups do. broadcast and reduce run over tree 0, relabelled so the root heads it.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

// Parent of each of n nodes (-1 for the root) in tree 0 or 1 of the double binary tree.
std::vector<int> double_binary_tree(int n, int which);

Schedule tree(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
