#pragma once
// CollNet (NCCL with a SHARP network plugin; reference/nccl-model.md §1.4): the network switches
// reduce across nodes. Every node sends one copy of its partial result per rail to the rail's
// switch, which returns the reduction over all nodes.
//  - collnet_direct: every GPU heads 1/P of the buffer: the node's GPUs scatter their parts to the
//    heads over NVLink, each head reduces, sends through its own NIC to its rail's switch, and
//    broadcasts the result back to the node.
//  - collnet_chain: the node's GPUs reduce along a chain to the head that owns the channel's NIC;
//    the head exchanges with the switch, and the result runs back down the chain.
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

Schedule collnet_direct(const CollectiveSpec& spec, const AlgorithmOptions& options);
Schedule collnet_chain(const CollectiveSpec& spec, const AlgorithmOptions& options);

// The rail switch's side of a channel (endpoint `endpoint`, nodes x ppn ranks): per piece, take
// every node's partial from the GPU on rail `rail` (local index), combine, and return the result
// to all of them, one multicast the switch replicates. Shared with NVLS across nodes (nvls.cpp).
void sharp_switch_stream(Schedule& schedule, int endpoint, int rail, int channel, int nodes, int ppn,
                         const std::vector<Region>& pieces, Protocol protocol, int tag);

}  // namespace ccsim::algo
