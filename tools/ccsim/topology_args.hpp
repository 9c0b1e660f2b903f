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
  bool no_pcie_p2p = false;          // GPUs reach each other through host memory (Topology::pcie_p2p)
  std::string net_gdr_level;         // NCCL_NET_GDR_LEVEL (Topology::gdr); empty: the topology's
  std::string p2p_level;             // NCCL_P2P_LEVEL (Topology::p2p_level); empty: the topology's
  std::optional<int> p2p_pxn_level;  // NCCL_P2P_PXN_LEVEL (Topology::p2p_operation_route); unset: 2
  // Whether the command line named the machine and its node count; where it did not, a measured
  // log's device lines may (accuracy, calibrate).
  bool name_given = false;
  bool nodes_given = false;
};

void add_topology_options(CLI::App* cmd, TopologyArgs& args);
// The options that change the machine beyond its name and node count, as a command line writes them
// ("--nic eth400 --gpus-per-node 4 --no-pcie-p2p"), empty if none: for headers that name a machine.
std::string machine_adjustments(const TopologyArgs& args);
// For commands that read nccl-tests logs: --topo, --nodes and --gpus-per-node say that the log's
// device lines decide them when they are not given.
void say_machine_from_log(CLI::App* cmd);
topo::Topology build_topology(const TopologyArgs& args);
// A map entry names its log's machine (accuracy, calibrate --map); the options that adjust a machine
// which `cmd` was given (--nic, --fabric, --net-gdr-level, --nics-per-node, ...) are laid over it:
// what the command names wins. --topo, --nodes and --gpus name a machine, which the entry does:
// with map entries and no LOG files to take them, they are an error rather than ignored.
// Returns the options it laid over, as given ("--net-gdr-level LOC --nic ndr"), empty if none.
std::string overlay_given(const CLI::App& cmd, const TopologyArgs& given, TopologyArgs& entry);
void refuse_machine_for_map(const CLI::App& cmd);
// Whether --topo names a preset (not a topology file or a shipped topology, which describe their
// own nodes and links).
bool names_preset(const TopologyArgs& args);

// The options that shape the network a preset builds between its nodes (--fabric, --spines,
// --leaf-ports, --oversubscription, --switch-latency-us, --sharp) are an error where there is no
// such network: one node, or a topology file (it describes its own). --nic is an error on a topology
// file, whose NICs have their own links.
void refuse_idle_fabric_options(const CLI::App& cmd, const TopologyArgs& args);

}  // namespace ccsim::cli
