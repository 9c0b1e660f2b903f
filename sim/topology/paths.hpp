#pragma once
// Path classes in the vocabulary of `nvidia-smi topo -m` and NCCL (reference/nccl-model.md §6.3):
// NV# (# NVLink lanes, directly or through NVSwitch), NVB (NVLink through an intermediate GPU: NCCL
// only), PIX (one PCIe switch), PXB (several PCIe switches, no host bridge), PHB (through the host
// bridge of the CPU both hang off), NODE (between two host bridges of one CPU), SYS (across the
// CPU-CPU link), NET (across the network).
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/topology/topology.hpp"

namespace ccsim::topo {

// As nvidia-smi prints it (NVLink, else the PCIe path).
std::string path_class(const Topology& t, DeviceId a, DeviceId b);
// The PCIe (and network) path's class alone: PIX, PXB, PHB, NODE, SYS or NET.
std::string pcie_class(const Topology& t, DeviceId a, DeviceId b);
// As NCCL routes GPU-to-GPU traffic: path_class, or NVB where NVLink through a third GPU is used.
std::string route_class(const Topology& t, std::size_t gpu_a, std::size_t gpu_b);
// Signalling bandwidth per direction of the narrowest hop between two GPUs (by rank index), on
// NCCL's route, or without NVB detours (rings use only links between neighbours).
double route_bandwidth(const Topology& t, std::size_t gpu_a, std::size_t gpu_b, bool allow_nvb = true);

// The GPU and NIC matrix of one node, as `nvidia-smi topo -m` prints it.
std::string path_matrix(const Topology& t, int node = 0);
// A summary (devices and links by kind, GPUs per node) and the matrix of node 0.
std::string summary(const Topology& t);
nlohmann::json to_json(const Topology& t);
std::string to_dot(const Topology& t);

}  // namespace ccsim::topo
