#include "ccsim/log_machine.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "sim/error.hpp"
#include "sim/text.hpp"
#include "sim/topology/gpu_models.hpp"
#include "sim/topology/json_io.hpp"

namespace ccsim::cli {

namespace {

// The one GPU model the device lines name, when ccsim knows it.
std::optional<topo::GpuModel> logged_gpu(const NcclLog& log) {
  if (log.gpu.empty() || log.gpu.find(", ") != std::string::npos) return std::nullopt;
  return topo::identify_gpu(log.gpu);
}

int gpus_per_node_of(const std::string& preset) {
  return topo::resolve_topology(preset, {}).gpus_per_node();
}

// A node of this machine spans several hosts: a GB200 NVL72 rack is one NVLink domain of 18 trays.
bool rack_scale(const std::string& machine, const NcclLog& log) {
  const auto gpu = logged_gpu(log);
  return machine == "gb200-nvl72" || (gpu && gpu->preset == "gb200-nvl72");
}

// The nodes the log's hosts make: one per host, but racks of a rack-scale machine; device lines
// that show only some ranks may name only some hosts, so at least as many as the ranks need.
int nodes_of_hosts(const NcclLog& log, int node_gpus, bool racks) {
  const int ranks = log.ranks.value_or(0);
  const int needed = std::max(1, (ranks + node_gpus - 1) / node_gpus);
  if (racks) return needed;
  const int hosts = static_cast<int>(log.hosts.size());
  return log.ranks_per_host ? hosts : std::max(hosts, needed);
}

// Where the device lines name no hosts (or one, for only some of the ranks): the nodes, and GPUs of
// each, that the file name's <nodes>n<ranks>g gives when it agrees with the log's ranks, else as
// many whole nodes as the ranks fill, said as an assumption. Empty when neither tells: ranks that
// fit one node and a file name that says nothing, a count that fills no whole number of nodes, or
// a file name's layout that the preset's nodes cannot hold (uneven, or more GPUs a node than it has).
struct HostlessLayout {
  int nodes = 1;
  std::optional<int> gpus_per_node;  // fewer than the node has
  std::string how;
};
std::optional<HostlessLayout> layout_without_hosts(const NcclLog& log, int node_gpus) {
  const int ranks = log.ranks.value_or(0);
  if (ranks <= 0 || log.hosts.size() > 1 || (log.hosts.size() == 1 && log.ranks_per_host)) return std::nullopt;
  const bool named = log.file_nodes && log.file_ranks && *log.file_ranks == ranks;
  if (named && (ranks % *log.file_nodes != 0 || ranks / *log.file_nodes > node_gpus))
    return std::nullopt;  // a layout the preset cannot take: the user says which (--nodes, --gpus-per-node)
  if (named) {
    HostlessLayout l;
    l.nodes = *log.file_nodes;
    const int per_node = ranks / l.nodes;
    if (per_node < node_gpus) l.gpus_per_node = per_node;
    l.how = std::to_string(l.nodes) + (l.nodes == 1 ? " node" : " nodes") + " of " + std::to_string(per_node) +
            " GPUs, as the file name's " + file_layout_word(log) + " says";
    return l;
  }
  if (ranks <= node_gpus || ranks % node_gpus != 0) return std::nullopt;
  HostlessLayout l;
  l.nodes = ranks / node_gpus;
  l.how = std::to_string(l.nodes) + " whole nodes for its " + std::to_string(ranks) +
          " ranks (the log names no hosts: --nodes and --gpus-per-node, or a map entry's nodes and gpus_per_node, "
          "say otherwise)";
  return l;
}

// The machine of an Azure ND VM size as a summary table of Azure's AI benchmarking guide names it
// ("ND H100 V5"), or by its size name ("Standard_ND96isr_H100_v5"). Azure's VM size pages: ND A100
// v4 (Standard_ND96asr_v4) and NDm A100 v4 (Standard_ND96amsr_A100_v4) are 8 A100 SXM on an HGX
// board with 8 HDR 200G, ND H100 v5 (Standard_ND96isr_H100_v5) and ND H200 v5
// (Standard_ND96isr_H200_v5) 8 H100 / H200 SXM with 8 NDR 400G: one node of the preset. ND GB200
// v6 (Standard_ND128isr_NDR_GB200_v6) is one compute tray of an NVL72 rack, 4 GB200 GPUs with 4 NDR
// 400G: the first tray of the gb200-nvl72 preset. Nothing for anything else.
struct AzureVm {
  std::string preset;
  int gpus = 0;  // of each node of the preset; 0: all
};
std::optional<AzureVm> azure_vm(const std::string& system) {
  std::string key;
  for (const char ch : system)
    if (std::isalnum(static_cast<unsigned char>(ch))) key += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (key.rfind("standard", 0) == 0) key.erase(0, 8);
  static const std::map<std::string, AzureVm> vms = {
      {"nda100v4", {"dgx-a100", 0}},       {"ndma100v4", {"dgx-a100", 0}},       {"ndh100v5", {"dgx-h100", 0}},
      {"ndh200v5", {"dgx-h200", 0}},       {"nd96asrv4", {"dgx-a100", 0}},       {"nd96amsra100v4", {"dgx-a100", 0}},
      {"nd96isrh100v5", {"dgx-h100", 0}},  {"nd96isrh200v5", {"dgx-h200", 0}},  {"ndgb200v6", {"gb200-nvl72", 4}},
      {"nd128isrndrgb200v6", {"gb200-nvl72", 4}}};
  const auto it = vms.find(key);
  if (it == vms.end()) return std::nullopt;
  return it->second;
}

// Whether the file name has `word` as a word of its own (dell-bf3-h100-roce-2n16g-...: "roce"), as
// the shared dataset names its runs' networks.
bool file_name_says(const std::string& path, const std::string& word) {
  std::string name = ascii_lower(std::filesystem::path(path).stem().string());
  for (char& c : name)
    if (c == '_' || c == '.') c = '-';
  return ("-" + name + "-").find("-" + word + "-") != std::string::npos;
}

// "pcie-gen3-8gpu --gpus-per-node 2 --no-pcie-p2p": the machine as a command line names it.
std::string named_with_options(const TopologyArgs& m) {
  const std::string options = machine_adjustments(m);
  return m.name + (options.empty() ? "" : " " + options);
}

// GPUs sold as PCIe cards go into servers of every layout, none of which a preset is: the machine
// taken is the generic PCIe preset of the card's era (Volta/Turing Gen3, Ampere/Ada Gen4, Hopper and
// later Gen5: two GPUs a switch, four a socket, a NIC a switch) with as many GPUs a node as a host of
// the log runs, said in a warning, so that a log can be read before its machine is described. Whether
// the cards reach each other's memory (P2P) follows, in order: NCCL's INFO lines (P2P or SHM
// connections), a GeForce RTX card's stock driver (no P2P over PCIe: NVIDIA/nccl-tests issue 117,
// whose RTX 2080 Ti "CANNOT Access Peer"), unless the run sets NCCL_P2P_LEVEL (what runs on a driver
// patched to open P2P to GeForce cards set; the stock one ignores it).
// `per_host`: the GPUs a host of the log runs (machine_from_log's count).
void take_generic_pcie_machine(const NcclLog& log, const topo::GpuModel& gpu, int per_host, const std::string& path,
                               const std::string& name_it, TopologyArgs& m) {
  const std::string cards = gpu.name + " (SM " + std::to_string(gpu.sm) + ") PCIe cards";
  if (gpu.name.find("NVL") != std::string::npos)
    throw Error(path + ": its GPUs are " + cards + ", which come joined by NVLink bridges no preset describes" + name_it);
  const std::string bridged_turing =
      gpu.sm == 75 && per_host == 2 ? "; two TU102 cards on an NVLink bridge: `--topo ws-2gpu-turing-nvbridge`" : "";
  for (const char* word : {"nvlink", "nvbridge"})
    if (file_name_says(path, word))
      throw Error(path + ": its GPUs are " + cards + ", and its file name says \"" + word +
                  "\": cards joined by NVLink bridges, which the generic PCIe machines lack" + name_it + bridged_turing);
  const int gen = gpu.sm < 80 ? 3 : gpu.sm < 90 ? 4 : 5;
  m.name = "pcie-gen" + std::to_string(gen) + "-8gpu";
  const topo::Topology generic = topo::resolve_topology(m.name, {});
  const int node_gpus = generic.gpus_per_node();
  if (per_host > node_gpus && (log.ranks_per_host || log.hosts.size() == 1))
    throw Error(path + ": its GPUs are " + cards + ", " + std::to_string(per_host) + " on a host, more than " + m.name +
                ", the generic PCIe machine, has (" + std::to_string(node_gpus) + ")" + name_it);
  // Ranks a host lists, or all of them where the log is taken for one node (no hosts named and no
  // file name's <nodes>n<ranks>g of several, which lays the ranks out itself).
  const bool one_node = !log.ranks_per_host && log.hosts.size() <= 1 && log.file_nodes.value_or(1) == 1;
  if (!m.gpus_per_node && (log.ranks_per_host || one_node) && per_host > 0 && per_host < node_gpus)
    m.gpus_per_node = per_host;
  std::string p2p;
  // GeForce cards from Turing (RTX 20) on. The GTX cards before them keep P2P: NVIDIA/nccl issue
  // 175 has a GTX 1080 Ti lose it in a VM, where the driver saw no chipset it supports, not on
  // bare metal.
  const bool rtx_geforce = gpu.geforce && gpu.sm >= 75;
  const auto level = log.nccl_env.find("NCCL_P2P_LEVEL");
  const bool level_asks_p2p =
      level != log.nccl_env.end() && topo::parse_path_level(level->second).value_or(topo::PathLevel::loc) != topo::PathLevel::loc;
  if (m.no_pcie_p2p) {
    p2p = "no P2P over PCIe, as given";
  } else if (log.peer_transports.count("P2P")) {
    p2p = "P2P between them, as NCCL's INFO lines connect them";
  } else if (log.peer_transports.count("SHM")) {
    m.no_pcie_p2p = true;
    p2p = "no P2P over PCIe: NCCL's INFO lines connect them through host memory (SHM)";
  } else if (rtx_geforce && level_asks_p2p) {
    p2p = "P2P over PCIe, which GeForce RTX cards have only on a patched driver: the run sets NCCL_P2P_LEVEL=" + level->second;
  } else if (rtx_geforce) {
    m.no_pcie_p2p = true;
    p2p = "no P2P over PCIe: NVIDIA's stock driver gives GeForce RTX cards none";
  } else {
    p2p = "P2P over PCIe";
  }
  // The PCIe Blackwell cards (RTX 5090, RTX PRO 6000) run the Gen5 preset's Hopper figures, which
  // the shared RTX 5090 and RTX 6000D runs fit; Blackwell's are its NVLink baseboards'.
  const std::string arch = generic.gpu_arch();
  const std::string timed = gpu.family == arch ? "" : ", timed with its " + arch + " GPUs' figures";
  std::cerr << "ccsim: warning: " << path << ": its GPUs are " << cards << ", whose server no preset describes: simulated on "
            << named_with_options(m) << ", the generic machine of their era (two GPUs a PCIe switch, four a socket"
            << timed << "), with " << p2p << ";" << name_it.substr(1) << bridged_turing << "\n";
}

// The machine a log ran on, from its device lines: the preset its GPU comes in, one node per host,
// the GPUs each host lists; for a summary table of Azure's guide, the VM size it names. Error,
// saying what to pass, where they do not tell.
TopologyArgs machine_from_log(const NcclLog& log, const TopologyArgs& given, const std::string& path,
                             const std::string& map_entry, std::string& how) {
  const std::string name_it = map_entry.empty() ? ": name the machine with --topo (`ccsim topo list`, or a JSON file)"
                                                : ": name the machine with \"topo\" in " + map_entry +
                                                      " (`ccsim topo list`, or a JSON file)";
  if (log.gpu.empty() && log.summary_table) {
    if (const auto vm = azure_vm(log.summary_system)) {
      TopologyArgs m = given;
      m.name = vm->preset;
      if (vm->gpus > 0 && !m.gpus_per_node) m.gpus_per_node = vm->gpus;
      how = vm->preset + ", from the summary table's " + log.summary_system +
            (vm->gpus > 0 ? " (an Azure VM of " + std::to_string(vm->gpus) + " of the " + vm->preset + "'s GPUs)"
                          : " (an Azure VM of one " + vm->preset + "-like node)");
      return m;
    }
  }
  if (log.gpu.empty() && log.summary_table && ascii_lower(log.summary_system).find("mi3") != std::string::npos)
    throw Error(path + ": its table is of " + log.summary_system + ", AMD Instinct GPUs (RCCL): ccsim simulates NVIDIA GPUs and NCCL");
  if (log.gpu.find(", ") != std::string::npos)
    throw Error(path + ": its device lines name several GPU models (" + log.gpu + "), which no one preset has" + name_it);
  // Where the device lines do not tell the GPU (a log published without them, or a name ccsim does
  // not know, such as a pre-release driver's "NVIDIA Graphics Device"), the file name's words may:
  // vultr-hgx-b200-8g-allreduce-1.log names a B200 as a device line would.
  auto gpu = logged_gpu(log);
  std::string gpu_source = "the device lines'";
  if (!gpu) {
    gpu = topo::identify_gpu(std::filesystem::path(path).stem().string());
    gpu_source = log.gpu.empty() ? "the file name's (the log has no device lines)"
                                 : "the file name's (its device lines name \"" + log.gpu + "\", which ccsim does not know)";
  }
  if (!gpu && log.gpu.empty())
    throw Error(path + ": the log has no device lines to tell its machine by, nor a GPU in its file name" + name_it);
  if (!gpu) throw Error(path + ": ccsim does not know the GPU \"" + log.gpu + "\" of its device lines" + name_it);
  const int per_host = log.ranks_per_host.value_or(log.ranks.value_or(0));
  if (gpu->preset.empty() && !gpu->card)
    throw Error(path + ": its GPUs are " + gpu->name + " (SM " + std::to_string(gpu->sm) +
                "), a baseboard part whose machine no preset describes" + name_it);
  TopologyArgs m = given;
  if (gpu->preset.empty()) {
    take_generic_pcie_machine(log, *gpu, per_host, path, name_it, m);
    how = named_with_options(m) + ", the generic PCIe machine of the era of " + gpu_source + " " + gpu->name +
          " cards (no preset is their server)";
  } else {
    m.name = gpu->preset;
    if (m.name == "dgx1-v100" && per_host > 0 && per_host <= 4) m.name = "v100-sxm2-4gpu";
    how = m.name + ", from " + gpu_source + " " + gpu->name + " GPUs";
  }
  const int node_gpus = gpus_per_node_of(m.name);
  const int ranks = log.ranks.value_or(0);
  const bool racks = rack_scale(m.name, log);
  if (!m.nodes_given) {
    const auto hostless = racks ? std::nullopt : layout_without_hosts(log, node_gpus);
    if (hostless) {
      m.preset.nodes = hostless->nodes;
      if (!m.gpus_per_node) m.gpus_per_node = hostless->gpus_per_node;
      how += ", " + hostless->how;
      return m;
    }
    if (log.hosts.size() == 1 && !racks && ranks > node_gpus)
      throw Error(path + ": its " + std::to_string(ranks) + " ranks are on one host, which one " + m.name + " node (" +
                  std::to_string(node_gpus) + " GPUs) cannot hold: give " +
                  (map_entry.empty() ? std::string("--topo (and --nodes)") : "\"topo\" (and \"nodes\") in " + map_entry));
    if (log.hosts.empty() && !racks && ranks > node_gpus)
      throw Error(path + ": its " + std::to_string(ranks) + " ranks need more than one " + m.name +
                  " node, fill no whole number of them, and its device lines name no hosts: give " +
                  (map_entry.empty() ? std::string("--nodes (or --topo)") : "\"nodes\" (or \"topo\") in " + map_entry));
    m.preset.nodes = nodes_of_hosts(log, node_gpus, racks);
  }
  if (m.preset.nodes > 1)
    how += racks ? " (" + std::to_string(m.preset.nodes) + " racks of " + std::to_string(node_gpus) + ")"
                 : " on " + std::to_string(m.preset.nodes) + " hosts";
  return m;
}

// The log's GPUs against the machine they are simulated on: a family that differs (a B200 log on
// an H100 preset) times the wrong links and kernels, which a user should hear about.
void warn_if_other_gpu(const PreparedLog& p) {
  const auto gpu = logged_gpu(p.log);
  // A card's generic PCIe machine was chosen here, its GPUs' timing said with it.
  if (!gpu || (gpu->card && !p.c.topology.name_given)) return;
  const std::string arch = p.topology.gpu_arch();
  if (gpu->family == arch) return;
  std::cerr << "ccsim: warning: " << p.c.log << ": its GPUs are " << gpu->name << " (SM " << gpu->sm << ", "
            << gpu->family << "), topology " << p.topology.name() << " has " << arch
            << " GPUs: the simulation times those" << (gpu->preset.empty() ? "" : " (" + gpu->preset + " has " + gpu->name + " GPUs)")
            << "\n";
}

// The generation of the machine's network (its NICs' links), empty on one node.
std::string network_generation(const topo::Topology& t) {
  for (const auto& l : t.links())
    if (l.kind == topo::LinkKind::net) return l.generation;
  return "";
}

// A multi-node log whose file name says the network is on a cloud's own transport (AWS EFA, Google's
// gIB) and that nothing else names: that network (configs/links.json), with the NICs per node the
// instance of its GPU generation has. EFA: p3dn.24xlarge one 100 Gb/s device (V100), p4d/p4de four
// (A100), p5/p5e/p6 eight 400 Gb/s rails (H100/H200/B200); gIB: GCP A3 Ultra / A4, one 400 Gb/s NIC a
// GPU (the `nic` sources in configs/links.json). Only a preset's network changes: a topology file's
// NICs have their own links, and one node's join no network.
void follow_file_name_network(PreparedLog& p, TopologyArgs& machine) {
  if (network_generation(p.topology).empty() || !names_preset(machine) || !machine.preset.nic.empty() ||
      !p.log.net_link_layers.empty())
    return;
  const std::string arch = p.topology.gpu_arch();
  std::string nic, said;
  std::optional<int> nics;
  if (file_name_says(p.c.log, "efa")) {
    said = "EFA";
    if (arch == "volta") nic = "efa100", nics = 1;
    else if (arch == "ampere") nic = "efa100", nics = 4;
    else nic = "efa400";
  } else if (file_name_says(p.c.log, "gib")) {
    said = "gIB";
    nic = "gib400";
  }
  if (nic.empty()) return;
  machine.preset.nic = nic;
  if (nics && !machine.nics_per_node && *nics < static_cast<int>(p.topology.nics_of_node(0).size())) machine.nics_per_node = nics;
  p.topology = build_topology(machine);
  p.machine_from_log += std::string(p.machine_from_log.empty() ? "" : "; ") + nic + " network" +
                        (machine.nics_per_node ? " (" + std::to_string(*machine.nics_per_node) + " a node)" : std::string()) +
                        ": the file name says " + said;
}

// RoCE or InfiniBand, as NCCL's INFO lines list its NICs (or, without them, the file name's "roce") ("NET/IB : Using [0]mlx5_0:1/RoCE"): a
// machine whose network generation neither the command nor the map named takes the link layer they
// say, at its preset's rate (an NDR preset's RoCE is eth400); one they named is kept, with a
// warning where the lines say otherwise.
void follow_network_report(PreparedLog& p, TopologyArgs& machine) {
  // NCCL's INFO lines say which link layer its NICs ran; without them, the file name may (one node,
  // whose NICs join no network, has no generation below and is left alone).
  const bool from_file_name = p.log.net_link_layers.empty() && file_name_says(p.c.log, "roce");
  const std::set<std::string> layers = from_file_name ? std::set<std::string>{"RoCE"} : p.log.net_link_layers;
  const std::string source = from_file_name ? "the file name says RoCE" : "NCCL's INFO lines list RoCE NICs";
  if (layers.size() != 1) return;
  const std::string generation = network_generation(p.topology);
  if (generation.empty()) return;
  const bool roce = *layers.begin() == "RoCE";
  if (roce != topo::is_infiniband(generation)) return;  // the machine already has that link layer
  static const std::map<std::string, std::string> ethernet_of = {
      {"edr", "eth100"}, {"hdr", "eth200"}, {"ndr", "eth400"}, {"xdr", "eth800"}};
  const auto it = ethernet_of.find(generation);
  if (from_file_name && (!machine.preset.nic.empty() || !names_preset(machine))) return;  // named, or a file's own
  if (!names_preset(machine)) {
    std::cerr << "ccsim: warning: " << p.c.log << ": NCCL's INFO lines list " << *layers.begin() << " NICs; "
              << machine.name << " describes its own network (" << generation << "), which is kept\n";
    return;
  }
  if (!machine.preset.nic.empty() || !roce || it == ethernet_of.end()) {
    std::cerr << "ccsim: warning: " << p.c.log << ": " << (from_file_name ? "its file name says " : "NCCL's INFO lines list ")
              << *layers.begin() << " NICs; "
              << (machine.preset.nic.empty() ? "the preset's network is " + generation + " (name the one it ran on with --nic)"
                                             : "the network named for it, " + generation + ", is kept")
              << "\n";
    return;
  }
  machine.preset.nic = it->second;
  p.topology = build_topology(machine);
  p.machine_from_log += std::string(p.machine_from_log.empty() ? "" : "; ") + it->second + " network: " + source;
}

// NCCL_IB_HCA on the command line: a list of the HCAs (ports) NCCL may use. One that names fewer
// than a node of the machine has leaves the rest idle, so the machine keeps that many NICs per node
// (as --nics-per-node does) where neither the command nor the map said how many; an exclusion
// (^...) or a list as long as the node's says nothing about the count. Across nodes only: one node
// sends nothing through its NICs.
void follow_hca_list(PreparedLog& p, TopologyArgs& machine) {
  const auto it = p.log.nccl_env.find("NCCL_IB_HCA");
  if (it == p.log.nccl_env.end() || it->second.empty() || it->second.front() == '^' || machine.nics_per_node) return;
  const std::string_view list = std::string_view(it->second).substr(it->second.front() == '=' ? 1 : 0);
  const int listed = static_cast<int>(split_list(list).size());
  const int node_gpus = p.topology.gpus_per_node();
  const bool nodes = static_cast<int>(p.topology.gpu_count()) > node_gpus;
  const int nics = static_cast<int>(p.topology.nics_of_node(0).size());
  if (!nodes || listed == 0 || listed >= nics) return;
  machine.nics_per_node = listed;
  p.topology = build_topology(machine);
  const bool reported = p.log.nccl_env_reported.count("NCCL_IB_HCA") > 0;
  p.from_report = p.from_report || reported;
  p.from_command += std::string(p.from_command.empty() ? "" : "; ") + "NCCL_IB_HCA=" + it->second +
                    (reported ? " (NCCL's report)" : "") + ": " + std::to_string(listed) + " of a node's " +
                    std::to_string(nics) + " NICs";
}

}  // namespace

// The command line's NCCL_ALGO, NCCL_PROTO, NCCL_NET_GDR_LEVEL, NCCL_P2P_LEVEL and NCCL_P2P_DISABLE,
// where the map or the command did not choose: the run measured what they forced. Said in the
// log's header.
void apply_command_settings(PreparedLog& p) {
  const auto& env = p.log.nccl_env;
  auto note = [&](const std::string& text) { p.from_command += (p.from_command.empty() ? "" : "; ") + text; };
  auto setting = [&](const char* name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  // "NAME=value", and where NCCL's debug output reported it rather than the command line, so.
  auto said = [&](const std::string& name, const std::string& value) {
    const bool reported = p.log.nccl_env_reported.count(name) > 0;
    p.from_report = p.from_report || reported;
    const bool exported = p.log.nccl_env_exported.count(name) > 0;
    return name + "=" + value + (reported ? " (NCCL's report)" : exported ? " (exported)" : "");
  };
  auto level_setting = [&](const std::string& name, std::string& field, std::optional<std::string> value) {
    if (!value) return;
    const auto level = topo::parse_path_level(*value);
    if (!field.empty()) note(said(name, *value) + " overridden");
    else if (!level) note(said(name, *value) + " not understood");
    else {
      field = std::string(topo::to_string(*level));
      note(said(name, *value));
    }
  };
  level_setting("NCCL_NET_GDR_LEVEL", p.c.topology.net_gdr_level, setting("NCCL_NET_GDR_LEVEL"));
  // NCCL_P2P_DISABLE=1 is P2P level LOC (ncclGetLevel reads both; the level wins when both are set).
  auto p2p = setting("NCCL_P2P_LEVEL");
  if (!p2p && setting("NCCL_P2P_DISABLE") == std::optional<std::string>("1")) {
    if (p.c.topology.p2p_level.empty()) {
      p.c.topology.p2p_level = "LOC";
      note(said("NCCL_P2P_DISABLE", "1"));
    } else {
      note(said("NCCL_P2P_DISABLE", "1") + " overridden");
    }
  }
  level_setting("NCCL_P2P_LEVEL", p.c.topology.p2p_level, p2p);
  // NCCL_PXN_DISABLE=1 is level 0 whatever NCCL_P2P_PXN_LEVEL says (ncclPxnDisable).
  const bool pxn_off = setting("NCCL_PXN_DISABLE") == std::optional<std::string>("1");
  const char* pxn_name = pxn_off ? "NCCL_PXN_DISABLE" : "NCCL_P2P_PXN_LEVEL";
  if (const auto value = setting(pxn_name)) {
    const std::string level = pxn_off ? "0" : *value;
    if (p.c.topology.p2p_pxn_level) note(said(pxn_name, *value) + " overridden");
    else if (level != "0" && level != "1" && level != "2") note(said(pxn_name, *value) + " not understood");
    else {
      p.c.topology.p2p_pxn_level = std::stoi(level);
      note(said(pxn_name, *value));
    }
  }
  // Channel settings, NCCL_NVLS_ENABLE, NCCL_ALGO and NCCL_PROTO: the old NCCL_MIN/MAX_NRINGS
  // first, which the new names override as in NCCL. NCCL_ALGO / NCCL_PROTO leave NCCL's cost
  // model what they allow (nccl::enabled_algos), unless the map or the command fixed the algorithm
  // or protocol.
  p.nccl_env_settings = p.c.nccl_env_settings;
  std::vector<std::string> names = {"NCCL_MIN_NRINGS", "NCCL_MAX_NRINGS"};
  for (const auto& name : nccl::env_setting_names()) names.push_back(name);
  for (const auto& name : names) {
    const auto value = setting(name.c_str());
    if (!value) continue;
    if (const auto given = nccl::env_setting(p.c.nccl_env_settings, name)) {
      note(said(name, *value) + " overridden (" + *given + " from the map or --nccl-env)");
      continue;
    }
    const std::string& fixed = name == "NCCL_ALGO" ? p.c.algorithm : name == "NCCL_PROTO" ? p.c.protocol : "auto";
    if (fixed != "auto") {
      note(said(name, *value) + " overridden by " + fixed);
      continue;
    }
    try {
      nccl::set_env_setting(p.nccl_env_settings, name, *value);
      // CollNet needs switches that reduce, which a machine has only where it says so (--sharp).
      const bool no_sharp = name == "NCCL_COLLNET_ENABLE" && *value != "0" && !p.topology.has_sharp();
      note(said(name, *value) + (no_sharp ? " (no CollNet: the machine's switches do not reduce; --sharp says they do)" : ""));
    } catch (const Error& e) {
      // A value NCCL may take but ccsim's bounds do not (NCCL_BUFFSIZE=32768): said with why.
      note(said(name, *value) + " not followed (" + e.what() + ")");
    }
  }
  // Settings that change how NCCL runs which ccsim does not follow: said, so that a log's errors are
  // not taken for the model's. A value that asks for what ccsim does anyway (NCCL's default
  // cross-NIC choice) needs no saying.
  static const std::map<std::string, std::string> kAsModelled = {{"NCCL_CROSS_NIC", "2"}};
  for (const char* name : {"NCCL_NTHREADS", "NCCL_LL128_NTHREADS", "NCCL_CROSS_NIC", "NCCL_IB_QPS_PER_CONNECTION",
                           "NCCL_TREE_THRESHOLD", "NCCL_LL_THRESHOLD"}) {
    const auto value = setting(name);
    const auto modelled = kAsModelled.find(name);
    if (value && (modelled == kAsModelled.end() || modelled->second != *value)) note(said(name, *value) + " not followed");
  }
  // NCCL_IB_DISABLE=1 (or NCCL_NET=Socket) sends between nodes over TCP sockets, through host memory
  // and the kernel's network stack, which ccsim does not model: the run still crosses the machine's
  // RDMA NICs, so what its network sizes take is not what the log measured. Said, never silently.
  // A log of one host has no network to speak of.
  const auto net = setting("NCCL_NET");
  const bool ib_off = setting("NCCL_IB_DISABLE") == std::optional<std::string>("1");
  if ((ib_off || ascii_lower(net.value_or("")) == "socket") && p.log.hosts.size() != 1)
    note(said(ib_off ? "NCCL_IB_DISABLE" : "NCCL_NET", ib_off ? "1" : *net) +
         " not followed (TCP sockets between nodes: ccsim models RDMA networks only)");
  else if (ascii_lower(p.log.nccl_network) == "socket" && p.log.hosts.size() != 1) {
    p.from_report = true;
    note("NCCL's report \"Using network Socket\" not followed (TCP sockets between nodes: ccsim models RDMA "
         "networks only)");
  }
}

void decide_machine(PreparedLog& p) {
  TopologyArgs machine = p.c.topology;
  if (!machine.name_given) {
    machine = machine_from_log(p.log, p.c.topology, p.c.log, p.c.map_entry, p.machine_from_log);
    if (p.c.system_class == p.c.topology.name) p.c.system_class = machine.name;
  }
  try {
    p.topology = build_topology(machine);
  } catch (const Error& e) {
    if (p.c.map_entry.empty()) throw;
    throw Error(p.c.map_entry + ": " + e.what());  // the entry that named the machine
  }
  const int node_gpus = p.topology.gpus_per_node();
  // A topology file of several nodes describes them itself: only a one-node machine takes the
  // log's hosts as its node count.
  const bool one_node = static_cast<int>(p.topology.gpu_count()) == node_gpus;
  if (!machine.nodes_given && p.log.hosts.size() > 1 && machine.preset.nodes == 1 && one_node) {
    const int hosts = static_cast<int>(p.log.hosts.size());
    const bool racks = rack_scale(machine.name, p.log);
    if (p.log.ranks.value_or(0) > node_gpus) {
      machine.preset.nodes = nodes_of_hosts(p.log, node_gpus, racks);
      p.machine_from_log = std::to_string(machine.preset.nodes) +
                           (racks ? " nodes, as many as the ranks need" : " nodes, one per host of the device lines");
      p.topology = build_topology(machine);
    } else if (!racks && p.log.file_nodes == hosts && p.log.file_ranks == p.log.ranks && p.log.ranks_per_host) {
      // The file name's <nodes>n<ranks>g says the hosts are nodes of their own.
      machine.preset.nodes = hosts;
      if (!machine.gpus_per_node && *p.log.ranks_per_host < node_gpus) machine.gpus_per_node = *p.log.ranks_per_host;
      p.machine_from_log = std::to_string(hosts) + " nodes, one per host of the device lines, as the file name's " +
                           file_layout_word(p.log) + " says";
      p.topology = build_topology(machine);
    } else if (!racks) {
      // The ranks fit one node: they may share one NVLink domain across hosts (a GB200 rack's
      // trays), or be that many machines; only the user knows.
      std::cerr << "ccsim: warning: " << p.c.log << ": the device lines list " << hosts << " hosts; simulated as one "
                << machine.name << " node (pass --nodes " << hosts << " if each host is a node of its own)\n";
    }
  }
  if (!machine.nodes_given && machine.preset.nodes == 1 && one_node && !rack_scale(machine.name, p.log)) {
    if (const auto hostless = layout_without_hosts(p.log, node_gpus);
        hostless && (hostless->nodes > 1 || (hostless->gpus_per_node && !machine.gpus_per_node))) {
      machine.preset.nodes = hostless->nodes;
      if (!machine.gpus_per_node) machine.gpus_per_node = hostless->gpus_per_node;
      p.machine_from_log += std::string(p.machine_from_log.empty() ? "" : "; ") + hostless->how;
      p.topology = build_topology(machine);
    }
  }
  const int nodes = static_cast<int>(p.topology.gpu_count()) / node_gpus;
  if (!machine.gpus_per_node && p.log.ranks_per_host && nodes > 1 && *p.log.ranks_per_host < node_gpus &&
      nodes * *p.log.ranks_per_host == p.log.ranks.value_or(0)) {
    // As many GPUs of each node as each host lists (a job on part of every node).
    machine.gpus_per_node = *p.log.ranks_per_host;
    p.topology = build_topology(machine);
  }
  follow_file_name_network(p, machine);
  follow_network_report(p, machine);
  follow_hca_list(p, machine);
  p.c.topology = machine;
  warn_if_other_gpu(p);
}

bool is_azure_summary(const NcclLog& log) { return log.summary_table && azure_vm(log.summary_system).has_value(); }

}  // namespace ccsim::cli
