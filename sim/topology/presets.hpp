#pragma once
// Named machines. `ccsim topo list` prints this registry.
#include <optional>
#include <string>
#include <vector>

#include "sim/topology/topology.hpp"

namespace ccsim::topo {

struct PresetOptions {
  std::optional<int> gpus;  // for presets whose size is a parameter
  int nodes = 1;            // > 1: that many copies joined by a rail-optimised fat tree
  std::string fabric = "rail";     // rail (one leaf per NIC index), fat-tree (2 tiers), fat-tree-3
  std::string nic;                // network generation (ndr, xdr, eth400, ...); empty: the preset's
  int spines = 8;                 // fat tree: spine (top-tier) switches
  int leaf_ports = 64;            // fat tree: switch radix, half down, half up (NVIDIA Quantum-2: 64 NDR ports)
  double oversubscription = 1.0;  // fat tree: leaf down-link capacity over up-link capacity
  double switch_latency_us = 0;   // per network switch crossed, beyond the model's NET hop latency
  bool sharp = false;             // fat tree: switches reduce in the network (InfiniBand SHARP)
};

struct PresetInfo {
  std::string name;
  std::string description;
  bool sized = false;      // takes PresetOptions::gpus
  bool networked = false;  // has NICs: can span nodes
};

const std::vector<PresetInfo>& presets();

// Other names of a preset's machine: the same GPU baseboard sold under another name (HGX boards in
// OEM servers, the DGX built on an HGX board). `--topo ALIAS` builds the preset it names.
struct PresetAlias {
  std::string name;
  std::string preset;
  std::string why;  // what the two machines share, and the part the preset takes from one of them
};
const std::vector<PresetAlias>& preset_aliases();
// Error naming the known presets when `name` is unknown, or when `gpus` is given to a fixed preset.
Topology make_preset(const std::string& name, const PresetOptions& options = {});

}  // namespace ccsim::topo
