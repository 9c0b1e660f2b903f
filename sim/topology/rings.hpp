#pragma once
// Ring orders per channel, built from the topology the way NCCL's search lays them out
// (reference/nccl-model.md §1.2, §6.2): inside an NVSwitch node any order is as good as any other;
// inside other nodes (NVLink meshes, uniform or not, and PCIe trees) an exhaustive search finds the
// cycles whose narrowest hop is widest, with the fewest such hops (so NVLink-only rings on a DGX-1,
// and the fewest socket crossings on a PCIe box), and each channel takes the one whose links the
// channels before it used least (as NCCL's search takes each channel's bandwidth off its links).
// Across nodes every node-to-node hop stays on one rail (the exit GPU of a node and the entry GPU of
// the next share a NIC index), by walking nodes alternately forwards and backwards, and each channel
// starts where the NICs it leaves and re-enters by are the least loaded by earlier channels, so that
// all NICs carry traffic even when GPUs share them (4 NICs for 8 GPUs).
#include <vector>

#include "sim/topology/topology.hpp"

namespace ccsim::topo {

std::vector<std::vector<int>> rings(const Topology& topology, int nranks, int channels);

}  // namespace ccsim::topo
