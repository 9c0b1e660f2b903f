#pragma once
// Hierarchical all_reduce: reduce-scatter inside each node, all_reduce of each GPU's shard across
// nodes (among the GPUs with the same local index), all-gather inside each node. Each level runs a
// registered algorithm (AlgorithmOptions::levels = {intra, inter}, default ring and ring), composed
// with compose.hpp. Elements that do not split evenly over a node's GPUs are reduced by the inter
// level's algorithm over all ranks.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule hierarchical(const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
