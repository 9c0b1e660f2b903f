#include "ccsim/topology_args.hpp"

#include <cmath>
#include <sstream>

#include "ccsim/validators.hpp"
#include "sim/error.hpp"
#include "sim/topology/json_io.hpp"

namespace ccsim::cli {

void add_topology_options(CLI::App* cmd, TopologyArgs& a) {
  const auto level_check = [](const std::string& v) {
    return topo::parse_path_level(v) ? std::string() : "expected LOC, NVL, NVB, PIX, PXB, PHB or SYS, got " + v;
  };
  cmd->add_option("--topo", a.name, "Preset (`ccsim topo list`), a shipped topology, or a JSON file")
      ->capture_default_str()
      ->each([&a](const std::string&) { a.name_given = true; });
  cmd->add_option("--gpus", a.preset.gpus, "GPU count of a sized preset such as nvswitch-flat");
  cmd->add_option("--nodes", a.preset.nodes, "Nodes of a networked preset, joined by the fabric")
      ->capture_default_str()
      ->each([&a](const std::string&) { a.nodes_given = true; });
  cmd->add_option("--fabric", a.preset.fabric, "rail (one leaf per NIC index), fat-tree, fat-tree-3")->capture_default_str();
  cmd->add_option("--nic", a.preset.nic, "Network generation: edr hdr ndr xdr eth100 eth200 eth400 eth800 gib400 (GCP RoCE, gIB plugin) ss11 (Slingshot-11) efa100 efa400 (AWS EFA) (default: the preset's)");
  cmd->add_option("--spines", a.preset.spines, "Fat tree: spine (top-tier) switches")->capture_default_str();
  cmd->add_option("--leaf-ports", a.preset.leaf_ports, "Fat tree: switch radix (half down, half up)")->capture_default_str();
  cmd->add_option("--oversubscription", a.preset.oversubscription, "Fat tree: leaf down/up capacity ratio")
      ->check(finite_number(1.0))
      ->capture_default_str();
  cmd->add_option("--switch-latency-us", a.preset.switch_latency_us,
                  "Latency per network switch crossed, beyond the model's network hop latency")
      ->check(finite_number(0.0))
      ->capture_default_str();
  cmd->add_option("--gpus-per-node", a.gpus_per_node,
                  "Use only the first K GPUs of every node (a job on part of each node)");
  cmd->add_option("--nics-per-node", a.nics_per_node,
                  "Keep only K of each node's NICs, spread over its GPUs (a machine cabled with fewer NICs than "
                  "the preset, e.g. 4 HDR on a DGX A100-like node)");
  cmd->add_flag("--no-pcie-p2p", a.no_pcie_p2p,
                "GPUs cannot reach each other's memory over PCIe (GeForce cards on the stock driver, "
                "NCCL_P2P_DISABLE=1): what NVLink does not carry goes through host memory (NCCL's SHM transport)");
  cmd->add_option("--net-gdr-level", a.net_gdr_level,
                  "NCCL_NET_GDR_LEVEL: LOC, PIX, PXB, PHB or SYS, the farthest GPU-NIC path at which the NIC reads "
                  "and writes GPU memory (GPUDirect RDMA); farther, network traffic is staged in host memory "
                  "(default: the topology's, else NCCL's PXB)")
      ->check(level_check);
  cmd->add_option("--p2p-level", a.p2p_level,
                  "NCCL_P2P_LEVEL: LOC, NVL, NVB, PIX, PXB, PHB or SYS, the farthest path at which GPUs of a node "
                  "use P2P; farther pairs, NVLink ones included, go through host memory (SHM). LOC is "
                  "NCCL_P2P_DISABLE=1 (default: the topology's, else SYS)")
      ->check(level_check);
  cmd->add_option("--p2p-pxn-level", a.p2p_pxn_level,
                  "NCCL_P2P_PXN_LEVEL (0 is also NCCL_PXN_DISABLE=1): how point-to-point operations (alltoall, "
                  "sendrecv, gather, scatter) reach a peer on another node. 2 (NCCL's default): through the NIC "
                  "of the peer's rail, handing the data over NVLink to the GPU next to it; 1: that NIC too, but "
                  "the sender drives it itself where it is within PXB of it; 0: the sender's own NIC")
      ->check(CLI::Range(0, 2));
  cmd->add_flag("--sharp", a.preset.sharp, "The fabric's switches reduce in the network (SHARP), for collnet_*");
}

void say_machine_from_log(CLI::App* cmd) {
  cmd->get_option("--topo")
      ->default_str("")
      ->description("Preset (`ccsim topo list`), a shipped topology, or a JSON file (default: the preset the GPU of "
                    "the log's device lines comes in, or where they name none ccsim knows the GPU its file name names, e.g. "
                    "hgx-b200 for B200, dgx-h100 for H100 SXM; for a summary table of "
                    "Azure's benchmarking guide, the VM size it names, e.g. ND H100 V5: dgx-h100, ND GB200 v6: one 4-GPU "
                    "tray of gb200-nvl72; for PCIe cards, with a warning, the generic PCIe preset of their era, "
                    "pcie-gen3/4/5-8gpu, with --no-pcie-p2p for GeForce RTX cards unless the run sets NCCL_P2P_LEVEL or "
                    "NCCL's INFO lines connect them by P2P)");
  cmd->get_option("--nodes")
      ->default_str("")
      ->description("Nodes of a networked preset, joined by the fabric (default: one per host the log's device lines "
                    "name, where its ranks need more than one node or --topo is not given; where they name no host, "
                    "the file name's <nodes>n<ranks>g (2n16g), else as many whole nodes as the ranks fill; else 1)");
  cmd->get_option("--gpus-per-node")
      ->description("Use only the first K GPUs of every node (default on several nodes: the ranks each host of the "
                    "log's device lines lists, else that the file name's <nodes>n<ranks>g gives)");
}

std::string machine_adjustments(const TopologyArgs& args) {
  std::ostringstream out;
  const topo::PresetOptions defaults;
  const auto& p = args.preset;
  if (!p.nic.empty()) out << " --nic " << p.nic;
  if (p.nodes > 1 && p.fabric != defaults.fabric) out << " --fabric " << p.fabric;
  if (p.nodes > 1 && p.fabric != defaults.fabric && p.spines != defaults.spines) out << " --spines " << p.spines;
  if (p.nodes > 1 && p.oversubscription != defaults.oversubscription) out << " --oversubscription " << p.oversubscription;
  if (p.switch_latency_us != defaults.switch_latency_us) out << " --switch-latency-us " << p.switch_latency_us;
  if (p.sharp) out << " --sharp";
  if (args.gpus_per_node) out << " --gpus-per-node " << *args.gpus_per_node;
  if (args.nics_per_node) out << " --nics-per-node " << *args.nics_per_node;
  if (args.no_pcie_p2p) out << " --no-pcie-p2p";
  if (!args.net_gdr_level.empty()) out << " --net-gdr-level " << args.net_gdr_level;
  if (!args.p2p_level.empty()) out << " --p2p-level " << args.p2p_level;
  if (args.p2p_pxn_level) out << " --p2p-pxn-level " << *args.p2p_pxn_level;
  const std::string s = out.str();
  return s.empty() ? s : s.substr(1);
}

topo::Topology build_topology(const TopologyArgs& a) {
  topo::Topology t = topo::resolve_topology(a.name, a.preset);
  if (a.gpus_per_node) t.keep_gpus_per_node(*a.gpus_per_node);
  if (a.nics_per_node) t.keep_nics_per_node(*a.nics_per_node);
  if (a.no_pcie_p2p) t.set_pcie_p2p(false);
  if (!a.net_gdr_level.empty()) t.set_net_gdr_level(*topo::parse_path_level(a.net_gdr_level));
  if (!a.p2p_level.empty()) t.set_p2p_level(*topo::parse_path_level(a.p2p_level));
  if (a.p2p_pxn_level) t.set_p2p_pxn_level(*a.p2p_pxn_level);
  return t;
}

std::string overlay_given(const CLI::App& cmd, const TopologyArgs& given, TopologyArgs& entry) {
  std::string applied;
  auto set = [&](const char* option, auto apply) {
    if (cmd.count(option) == 0) return;
    apply();
    applied += (applied.empty() ? "" : " ") + std::string(option);
    for (const auto& value : cmd.get_option(option)->results()) applied += " " + value;
  };
  set("--fabric", [&] { entry.preset.fabric = given.preset.fabric; });
  set("--nic", [&] { entry.preset.nic = given.preset.nic; });
  set("--spines", [&] { entry.preset.spines = given.preset.spines; });
  set("--leaf-ports", [&] { entry.preset.leaf_ports = given.preset.leaf_ports; });
  set("--oversubscription", [&] { entry.preset.oversubscription = given.preset.oversubscription; });
  set("--switch-latency-us", [&] { entry.preset.switch_latency_us = given.preset.switch_latency_us; });
  set("--sharp", [&] { entry.preset.sharp = given.preset.sharp; });
  set("--gpus-per-node", [&] { entry.gpus_per_node = given.gpus_per_node; });
  set("--nics-per-node", [&] { entry.nics_per_node = given.nics_per_node; });
  set("--no-pcie-p2p", [&] { entry.no_pcie_p2p = given.no_pcie_p2p; });
  set("--net-gdr-level", [&] { entry.net_gdr_level = given.net_gdr_level; });
  set("--p2p-level", [&] { entry.p2p_level = given.p2p_level; });
  set("--p2p-pxn-level", [&] { entry.p2p_pxn_level = given.p2p_pxn_level; });
  return applied;
}

void refuse_machine_for_map(const CLI::App& cmd) {
  for (const char* option : {"--topo", "--nodes", "--gpus"})
    if (cmd.count(option) > 0)
      throw Error(std::string(option) +
                  " names the machine of LOG files; each --map entry names its own (edit the map, or pass the log "
                  "as a LOG file)");
}

bool names_preset(const TopologyArgs& args) {
  return !topo::is_topology_file(args.name) && !topo::shipped_topology(args.name);
}

void refuse_idle_fabric_options(const CLI::App& cmd, const TopologyArgs& a) {
  const bool preset = names_preset(a);
  // A topology file's NICs carry their own rates; a preset's one node keeps its NICs (and --nic's).
  if (!preset && cmd.count("--nic") > 0)
    throw Error("--nic sets the network generation of a preset's NICs, and " + a.name +
                " describes its own (edit its NICs' links)");
  if (preset && a.preset.nodes > 1) return;
  for (const char* option : {"--fabric", "--spines", "--leaf-ports", "--oversubscription", "--switch-latency-us", "--sharp"})
    if (cmd.count(option) > 0)
      throw Error(std::string(option) + " shapes the network a preset builds between its nodes, and " +
                  (preset ? std::string("one node (--nodes 1) has none") : a.name + " describes its own"));
}

}  // namespace ccsim::cli
