#pragma once
// The options that choose a machine, shared by every command that takes one.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "sim/topology/presets.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim::cli {

struct TopologyArgs {
  std::string name = "dgx-h100";
  topo::PresetOptions preset;
  std::optional<int> gpus_per_node;  // use only the first K GPUs of each node
  std::optional<int> nics_per_node;  // keep only K NICs per node, spread over its ranks
};

void add_topology_options(CLI::App* cmd, TopologyArgs& args);
topo::Topology build_topology(const TopologyArgs& args);

}  // namespace ccsim::cli
