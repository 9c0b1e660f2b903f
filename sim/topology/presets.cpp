#include "sim/topology/presets.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/error.hpp"

namespace ccsim::topo {

namespace {

std::string prefixed(int node, int nodes, const std::string& name) {
  return nodes > 1 ? "n" + std::to_string(node) + "." + name : name;
}

// GPUs joined by NVSwitch chips; lanes_per_switch[s] NVLink lanes go from every GPU to switch s.
std::vector<DeviceId> add_nvswitch_node(Topology& t, int node, int nodes, int gpus, const std::string& arch,
                                        const std::string& nvlink_gen, const std::vector<int>& lanes_per_switch,
                                        bool nvls) {
  std::vector<DeviceId> gpu_ids, switch_ids;
  for (int g = 0; g < gpus; ++g)
    gpu_ids.push_back(t.add_device({prefixed(node, nodes, "gpu" + std::to_string(g)), DeviceKind::gpu, node, arch, false}));
  for (std::size_t s = 0; s < lanes_per_switch.size(); ++s)
    switch_ids.push_back(
        t.add_device({prefixed(node, nodes, "nvswitch" + std::to_string(s)), DeviceKind::nvswitch, node, "", nvls}));
  for (auto g : gpu_ids)
    for (std::size_t s = 0; s < switch_ids.size(); ++s)
      t.add_link(g, switch_ids[s], LinkKind::nvlink, nvlink_gen, lanes_per_switch[s]);
  return gpu_ids;
}

// DGX H100 / H200 (reference/nccl-model.md §5.6): 8 GPUs on 4 NVSwitch chips (5/4/4/5 lanes), each
// GPU sharing a PCIe Gen5 switch with one 400G ConnectX-7 NIC, four GPU+NIC pairs per socket, two
// sockets joined by UPI. Returns the NICs in rail order.
// `lanes`: the NVLink4 lanes from each GPU to each of the 4 NVSwitch chips (H100/H200: 5/4/4/5;
// the export-limited H800: 8 lanes, 2 to each chip, reference/nccl-model.md §5.1).
std::vector<DeviceId> add_dgx_h100_node(Topology& t, int node, int nodes, const std::string& arch = "hopper",
                                        const std::vector<int>& lanes = {5, 4, 4, 5}) {
  const auto gpus = add_nvswitch_node(t, node, nodes, 8, arch, "4", lanes, true);
  const DeviceId cpu[2] = {t.add_device({prefixed(node, nodes, "cpu0"), DeviceKind::cpu, node, "", false}),
                           t.add_device({prefixed(node, nodes, "cpu1"), DeviceKind::cpu, node, "", false})};
  t.add_link(cpu[0], cpu[1], LinkKind::cpu, "upi-spr", 1);
  std::vector<DeviceId> nics;
  for (int i = 0; i < 8; ++i) {
    const DeviceId sw = t.add_device({prefixed(node, nodes, "pcie" + std::to_string(i)), DeviceKind::pcie_switch, node, "", false});
    const DeviceId nic = t.add_device({prefixed(node, nodes, "nic" + std::to_string(i)), DeviceKind::nic, node, "", false});
    t.add_link(gpus[static_cast<std::size_t>(i)], sw, LinkKind::pcie, "5", 16);
    t.add_link(nic, sw, LinkKind::pcie, "5", 16);
    t.add_link(sw, cpu[i / 4], LinkKind::pcie, "5", 16);
    nics.push_back(nic);
  }
  return nics;
}

DeviceId add_device(Topology& t, int node, int nodes, const std::string& name, DeviceKind kind,
                    const std::string& arch = "", bool reduces = false) {
  return t.add_device({prefixed(node, nodes, name), kind, node, arch, reduces});
}

std::vector<DeviceId> add_gpus(Topology& t, int node, int nodes, int count, const std::string& arch) {
  std::vector<DeviceId> g;
  for (int i = 0; i < count; ++i) g.push_back(add_device(t, node, nodes, "gpu" + std::to_string(i), DeviceKind::gpu, arch));
  return g;
}

// Every pair of `devices` joined by its own link.
void link_all_pairs(Topology& t, const std::vector<DeviceId>& devices, LinkKind kind, const std::string& generation,
                    int lanes) {
  for (std::size_t a = 0; a < devices.size(); ++a)
    for (std::size_t b = a + 1; b < devices.size(); ++b) t.add_link(devices[a], devices[b], kind, generation, lanes);
}

// Two sockets; `per_switch` GPUs and `nics_per_switch` NICs under each PCIe switch, switches split
// evenly over the sockets. Returns the NICs in rail order.
std::vector<DeviceId> add_pcie_tree(Topology& t, int node, int nodes, const std::vector<DeviceId>& gpus, int switches,
                                    int nics_per_switch, const std::string& pcie_gen, const std::string& cpu_link) {
  const DeviceId cpu0 = add_device(t, node, nodes, "cpu0", DeviceKind::cpu);
  const DeviceId cpu1 = add_device(t, node, nodes, "cpu1", DeviceKind::cpu);
  t.add_link(cpu0, cpu1, LinkKind::cpu, cpu_link, 1);
  const int per_switch = static_cast<int>(gpus.size()) / switches;
  std::vector<DeviceId> nics;
  for (int s = 0; s < switches; ++s) {
    const DeviceId sw = add_device(t, node, nodes, "pcie" + std::to_string(s), DeviceKind::pcie_switch);
    t.add_link(sw, s < switches / 2 ? cpu0 : cpu1, LinkKind::pcie, pcie_gen, 16);
    for (int g = 0; g < per_switch; ++g) t.add_link(gpus[static_cast<std::size_t>(s * per_switch + g)], sw, LinkKind::pcie, pcie_gen, 16);
    for (int k = 0; k < nics_per_switch; ++k) {
      const DeviceId nic = add_device(t, node, nodes, "nic" + std::to_string(nics.size()), DeviceKind::nic);
      t.add_link(nic, sw, LinkKind::pcie, pcie_gen, 16);
      nics.push_back(nic);
    }
  }
  return nics;
}

// DGX-1 with V100 (reference/nccl-model.md §5.6): the hybrid cube-mesh of NVLink2, with the NV1/NV2
// pairs of its `nvidia-smi topo -m`; 4 PCIe Gen3 switches with 2 GPUs and one EDR NIC each; 2 sockets.
std::vector<DeviceId> add_dgx1_node(Topology& t, int node, int nodes) {
  const auto g = add_gpus(t, node, nodes, 8, "volta");
  const int pairs[][3] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1}, {1, 5, 2},
                          {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2},
                          {5, 7, 1}, {6, 7, 2}};
  for (const auto& p : pairs) t.add_link(g[static_cast<std::size_t>(p[0])], g[static_cast<std::size_t>(p[1])], LinkKind::nvlink, "2", p[2]);
  return add_pcie_tree(t, node, nodes, g, 4, 1, "3", "qpi-bdw");
}

// HGX B200 / B300: 8 Blackwell GPUs with 18 NVLink5 lanes each, 9 to each of 2 NVSwitch chips; each
// GPU behind a PCIe switch of `pcie_gen` with its NIC (B300: the ConnectX-8's own Gen6 switch), four
// GPU+NIC pairs per socket, two sockets joined by UPI. Returns the NICs in rail order.
std::vector<DeviceId> add_hgx_blackwell_node(Topology& t, int node, int nodes, const std::string& pcie_gen) {
  const auto g = add_nvswitch_node(t, node, nodes, 8, "blackwell", "5", {9, 9}, true);
  return add_pcie_tree(t, node, nodes, g, 8, 1, pcie_gen, "upi-spr");
}

// A 4-GPU V100 SXM2 server (the ABCI V-node, reference data/measured/INDEX.md): the four GPUs joined
// all-to-all by two NVLink2 lanes per pair (NV2: each GPU's six lanes); one PCIe Gen3 switch per
// socket with two GPUs and one 100G EDR NIC; 2 Skylake sockets.
std::vector<DeviceId> add_v100_quad_node(Topology& t, int node, int nodes) {
  const auto g = add_gpus(t, node, nodes, 4, "volta");
  link_all_pairs(t, g, LinkKind::nvlink, "2", 2);
  return add_pcie_tree(t, node, nodes, g, 2, 1, "3", "upi-skl");
}

// A quad GH200 node (HPE Cray EX254n, the CSCS Alps node; shared data/measured/INDEX.md): the four
// Hopper GPUs joined all-to-all by 6 NVLink4 lanes per pair (each GPU's 18), every GPU on its own
// Grace CPU by NVLink-C2C, and each Grace with one Slingshot-11 NIC (Cassini, PCIe Gen4 x16): a
// GPU reaches its NIC through its CPU (NCCL's P2C path).
std::vector<DeviceId> add_gh200_quad_node(Topology& t, int node, int nodes) {
  const auto g = add_gpus(t, node, nodes, 4, "hopper");
  link_all_pairs(t, g, LinkKind::nvlink, "4", 6);
  std::vector<DeviceId> cpus, nics;
  for (std::size_t i = 0; i < g.size(); ++i) {
    cpus.push_back(add_device(t, node, nodes, "grace" + std::to_string(i), DeviceKind::cpu));
    t.add_link(g[i], cpus.back(), LinkKind::c2c, "grace-hopper", 1);
    nics.push_back(add_device(t, node, nodes, "nic" + std::to_string(i), DeviceKind::nic));
    t.add_link(nics.back(), cpus.back(), LinkKind::pcie, "4", 16);
  }
  // The Graces reach each other's memory over the NVLink between their GPUs (SYS in nvidia-smi).
  link_all_pairs(t, cpus, LinkKind::cpu, "grace-nvlink", 1);
  return nics;
}

// NVIDIA DGX Spark: one GB10 superchip, its Blackwell GPU on the CPU die by NVLink-C2C, and a
// ConnectX-7 in Socket Direct mode: the SoC gives a device at most a PCIe Gen5 x4 link, so the NIC
// is two PCIe functions on two x4 links, ~100 Gb/s each, the two halves of its 200G port (NVIDIA
// dgx-spark-playbooks: ibdev2netdev shows rocep1s0f1 and roceP2p1s0f1 for one cable; NCCL drives
// both when NCCL_IB_HCA names both, as the two-Spark playbook sets). Routes give a GPU one NIC, so
// the two functions are one NIC here: x8 of PCIe Gen5 behind a 200G port.
std::vector<DeviceId> add_dgx_spark_node(Topology& t, int node, int nodes) {
  const auto g = add_gpus(t, node, nodes, 1, "gb10");
  const DeviceId cpu = add_device(t, node, nodes, "cpu0", DeviceKind::cpu);
  t.add_link(g.front(), cpu, LinkKind::c2c, "gb10", 1);
  const DeviceId nic = add_device(t, node, nodes, "nic0", DeviceKind::nic);
  t.add_link(nic, cpu, LinkKind::pcie, "5", 8);
  return {nic};
}

// DGX-2 (reference/nccl-model.md §5.2): 16 V100, each with one NVLink2 lane to each of the 6 switch
// planes; a plane is the pair of NVSwitch chips (one per baseboard) whose trunk carries 8 lanes,
// enough for its 8 GPUs, so it is modelled as one non-blocking switch: NV6 between all pairs.
std::vector<DeviceId> add_dgx2_node(Topology& t, int node, int nodes) {
  const auto g = add_gpus(t, node, nodes, 16, "volta");
  for (int p = 0; p < 6; ++p) {
    const DeviceId sw = add_device(t, node, nodes, "nvswitch-plane" + std::to_string(p), DeviceKind::nvswitch);
    for (auto gpu : g) t.add_link(gpu, sw, LinkKind::nvlink, "2", 1);
  }
  return add_pcie_tree(t, node, nodes, g, 8, 1, "3", "upi-skl");
}

// DGX A100 (reference/nccl-model.md §5.6): 8 A100, 2 NVLink3 lanes to each of 6 NVSwitches (NV12);
// 4 PCIe Gen4 switch pairs, each with 2 GPUs under one switch and 2 HDR NICs under another (PXB
// from GPU to NIC); 2 AMD sockets.
std::vector<DeviceId> add_dgx_a100_node(Topology& t, int node, int nodes) {
  const auto g = add_gpus(t, node, nodes, 8, "ampere");
  for (int s = 0; s < 6; ++s) {
    const DeviceId sw = add_device(t, node, nodes, "nvswitch" + std::to_string(s), DeviceKind::nvswitch);
    for (auto gpu : g) t.add_link(gpu, sw, LinkKind::nvlink, "3", 2);
  }
  const DeviceId cpu0 = add_device(t, node, nodes, "cpu0", DeviceKind::cpu);
  const DeviceId cpu1 = add_device(t, node, nodes, "cpu1", DeviceKind::cpu);
  t.add_link(cpu0, cpu1, LinkKind::cpu, "xgmi", 1);
  std::vector<DeviceId> nics;
  for (int q = 0; q < 4; ++q) {
    const DeviceId top = add_device(t, node, nodes, "pcie" + std::to_string(q), DeviceKind::pcie_switch);
    const DeviceId gsw = add_device(t, node, nodes, "pcie" + std::to_string(q) + "-gpu", DeviceKind::pcie_switch);
    const DeviceId nsw = add_device(t, node, nodes, "pcie" + std::to_string(q) + "-nic", DeviceKind::pcie_switch);
    t.add_link(top, q < 2 ? cpu0 : cpu1, LinkKind::pcie, "4", 16);
    // The three switches are the bridges inside one PCIe switch package (nvidia-smi's PXB from a
    // GPU to its NICs); its internal fabric is not a bottleneck, so these internal links carry both
    // GPUs' (both NICs') x16 at once: each GPU reaches its own NIC at full x16, as NCCL sees it.
    t.add_link(gsw, top, LinkKind::pcie, "4", 32);
    t.add_link(nsw, top, LinkKind::pcie, "4", 32);
    for (int k = 0; k < 2; ++k) {
      t.add_link(g[static_cast<std::size_t>(2 * q + k)], gsw, LinkKind::pcie, "4", 16);
      const DeviceId nic = add_device(t, node, nodes, "nic" + std::to_string(nics.size()), DeviceKind::nic);
      t.add_link(nic, nsw, LinkKind::pcie, "4", 16);
      nics.push_back(nic);
    }
  }
  return nics;
}

DeviceId add_switch(Topology& t, const std::string& name, const PresetOptions& o) {
  Device d{name, DeviceKind::net_switch, 0, "", o.sharp};
  d.latency_s = o.switch_latency_us * 1e-6;
  return t.add_device(d);
}

// Lanes of one up-link so that `down` ports below a switch reach `uplinks` switches above it with
// the chosen oversubscription.
int uplink_lanes(int down, int uplinks, double oversubscription) {
  return std::max(1, static_cast<int>(std::lround(down / (uplinks * std::max(oversubscription, 1e-9)))));
}

// The network joining the nodes' NICs.
//  rail:       leaf r holds NIC r of every node (NVIDIA's rail-optimised design); every leaf
//              reaches every spine.
//  fat-tree:   NICs fill leaves of leaf_ports/2 down-ports in node order; every leaf reaches every spine.
//  fat-tree-3: as fat-tree, leaves grouped in pods of leaf_ports/2 leaves, each pod with `spines`
//              aggregation switches, every aggregation switch reaching every core switch (`spines`).
void add_fabric(Topology& t, const std::vector<std::vector<DeviceId>>& nics_by_node, const PresetOptions& o,
                const std::string& generation) {
  const int nodes = static_cast<int>(nics_by_node.size());
  const int rails = static_cast<int>(nics_by_node.front().size());
  std::vector<DeviceId> spines;
  for (int s = 0; s < o.spines; ++s) spines.push_back(add_switch(t, "spine" + std::to_string(s), o));
  if (o.fabric == "rail") {
    for (int r = 0; r < rails; ++r) {
      const DeviceId leaf = add_switch(t, "leaf" + std::to_string(r), o);
      for (int n = 0; n < nodes; ++n)
        t.add_link(nics_by_node[static_cast<std::size_t>(n)][static_cast<std::size_t>(r)], leaf, LinkKind::net, generation, 1);
      for (auto s : spines) t.add_link(leaf, s, LinkKind::net, generation, uplink_lanes(nodes, o.spines, o.oversubscription));
    }
    return;
  }
  const int down = std::max(1, o.leaf_ports / 2);
  std::vector<DeviceId> all_nics;
  for (const auto& node : nics_by_node) all_nics.insert(all_nics.end(), node.begin(), node.end());
  const int leaves = (static_cast<int>(all_nics.size()) + down - 1) / down;
  std::vector<DeviceId> leaf_ids;
  for (int l = 0; l < leaves; ++l) {
    const DeviceId leaf = add_switch(t, "leaf" + std::to_string(l), o);
    for (int k = l * down; k < std::min<int>((l + 1) * down, static_cast<int>(all_nics.size())); ++k)
      t.add_link(all_nics[static_cast<std::size_t>(k)], leaf, LinkKind::net, generation, 1);
    leaf_ids.push_back(leaf);
  }
  if (o.fabric == "fat-tree") {
    for (auto leaf : leaf_ids)
      for (auto s : spines) t.add_link(leaf, s, LinkKind::net, generation, uplink_lanes(down, o.spines, o.oversubscription));
    return;
  }
  const int leaves_per_pod = down;
  for (int p = 0; p * leaves_per_pod < leaves; ++p) {
    std::vector<DeviceId> aggs;
    for (int a = 0; a < o.spines; ++a) aggs.push_back(add_switch(t, "pod" + std::to_string(p) + ".agg" + std::to_string(a), o));
    const int pod_leaves = std::min(leaves_per_pod, leaves - p * leaves_per_pod);
    for (int l = 0; l < pod_leaves; ++l)
      for (auto a : aggs)
        t.add_link(leaf_ids[static_cast<std::size_t>(p * leaves_per_pod + l)], a, LinkKind::net, generation,
                   uplink_lanes(down, o.spines, o.oversubscription));
    for (auto a : aggs)  // an aggregation switch carries its pod's share up, non-blocking above the leaves
      for (auto core : spines) t.add_link(a, core, LinkKind::net, generation, uplink_lanes(pod_leaves * down, o.spines * o.spines, o.oversubscription));
  }
}

struct Preset {
  PresetInfo info;
  std::function<Topology(const PresetOptions&)> build;
};

// A node preset replicated over --nodes and joined by a rail-optimised fat tree of `net_gen` ports.
std::function<Topology(const PresetOptions&)> networked(const std::string& name, const std::string& net_gen,
                                                        std::function<std::vector<DeviceId>(Topology&, int, int)> node) {
  return [=](const PresetOptions& o) {
    Topology t(o.nodes > 1 ? name + " x" + std::to_string(o.nodes) : name);
    std::vector<std::vector<DeviceId>> nics;
    for (int n = 0; n < o.nodes; ++n) nics.push_back(node(t, n, o.nodes));
    if (o.nodes > 1) add_fabric(t, nics, o, o.nic.empty() ? net_gen : o.nic);
    return t;
  };
}

const std::vector<Preset>& registry() {
  static const std::vector<Preset> all = {
      {{"dgx1-v100",
        "NVIDIA DGX-1 (V100): hybrid cube-mesh of NVLink2 (NV1/NV2 pairs, 6 lanes per GPU), 4 PCIe Gen3 "
        "switches with 2 GPUs and one 100G EDR NIC each, 2 Broadwell sockets",
        false, true},
       networked("dgx1-v100", "edr", add_dgx1_node)},
      {{"v100-sxm2-4gpu",
        "4 V100 SXM2 all-to-all by NVLink2 (NV2 per pair), one PCIe Gen3 switch per socket with 2 GPUs and "
        "one 100G EDR NIC, 2 Skylake sockets (e.g. the ABCI V-node)",
        false, true},
       networked("v100-sxm2-4gpu", "edr", add_v100_quad_node)},
      {{"dgx2-v100",
        "NVIDIA DGX-2: 16 V100, NVLink2 through 12 NVSwitch chips (6 planes), NV6 between all pairs, "
        "8 PCIe Gen3 switches with 2 GPUs and one EDR NIC each",
        false, true},
       networked("dgx2-v100", "edr", add_dgx2_node)},
      {{"dgx-a100",
        "NVIDIA DGX A100: 8 A100 SXM, NV12 through 6 NVSwitches (600 GB/s per GPU), 4 PCIe Gen4 switch "
        "pairs with 2 GPUs and 2 HDR 200G NICs each, 2 AMD sockets",
        false, true},
       networked("dgx-a100", "hdr", add_dgx_a100_node)},
      {{"dgx-h100",
        "NVIDIA DGX H100: 8 H100 SXM, 18 NVLink4 lanes each to 4 NVSwitch chips (5/4/4/5), 450 GB/s per "
        "direction per GPU, NVLS-capable; one 400G NDR NIC per GPU behind a PCIe Gen5 switch, 2 sockets",
        false, true},
       networked("dgx-h100", "ndr", [](Topology& t, int n, int ns) { return add_dgx_h100_node(t, n, ns); })},
      {{"dgx-h200", "NVIDIA DGX H200: as dgx-h100 with H200 GPUs (HBM3e, 4.8 TB/s)", false, true},
       networked("dgx-h200", "ndr", [](Topology& t, int n, int ns) { return add_dgx_h100_node(t, n, ns, "h200"); })},
      {{"hgx-h800",
        "HGX H800: as dgx-h100 with the export-limited H800, 8 NVLink4 lanes per GPU (2 to each NVSwitch "
        "chip, 200 GB/s per direction), NVLS-capable",
        false, true},
       networked("hgx-h800", "ndr",
                 [](Topology& t, int n, int ns) { return add_dgx_h100_node(t, n, ns, "hopper", {2, 2, 2, 2}); })},
      {{"hgx-b200",
        "NVIDIA HGX B200: 8 B200, 18 NVLink5 lanes each to 2 NVSwitch chips (900 GB/s per direction), "
        "NVLS-capable; one 400G NDR NIC per GPU behind a PCIe Gen5 switch, 2 sockets",
        false, true},
       networked("hgx-b200", "ndr", [](Topology& t, int n, int ns) { return add_hgx_blackwell_node(t, n, ns, "5"); })},
      // HGX B300 (NVIDIA's HGX B300 and DGX B300 datasheets): the B200's NVLink5 baseboard with
      // Blackwell Ultra GPUs, and one ConnectX-8 SuperNIC per GPU at 800 Gb/s, whose PCIe Gen6
      // switch the GPU sits behind.
      {{"hgx-b300",
        "NVIDIA HGX B300: 8 B300 (Blackwell Ultra), 18 NVLink5 lanes each to 2 NVSwitch chips (900 GB/s per "
        "direction), NVLS-capable; one 800G XDR ConnectX-8 NIC per GPU, the GPU behind its PCIe Gen6 switch, "
        "2 sockets",
        false, true},
       networked("hgx-b300", "xdr", [](Topology& t, int n, int ns) { return add_hgx_blackwell_node(t, n, ns, "6"); })},
      {{"gb200-nvl72",
        "NVIDIA GB200 NVL72 rack: 72 B200 in one NVLink5 domain (18 lanes each, one to each of 18 NVSwitch "
        "chips), NVLS-capable; 18 trays of 4 GPUs with 4 NICs (400G NDR) each. --nodes N: N racks",
        false, true},
       networked("gb200-nvl72", "ndr",
                 [](Topology& t, int n, int ns) {
                   const auto g = add_nvswitch_node(t, n, ns, 72, "gb200", "5", std::vector<int>(18, 1), true);
                   std::vector<DeviceId> nics;
                   for (int tray = 0; tray < 18; ++tray) {
                     const DeviceId cpu = add_device(t, n, ns, "grace" + std::to_string(tray), DeviceKind::cpu);
                     for (int k = 0; k < 4; ++k) {
                       const DeviceId nic = add_device(t, n, ns, "nic" + std::to_string(nics.size()), DeviceKind::nic);
                       t.add_link(g[static_cast<std::size_t>(4 * tray + k)], nic, LinkKind::pcie, "5", 16);
                       t.add_link(nic, cpu, LinkKind::pcie, "5", 16);
                       nics.push_back(nic);
                     }
                   }
                   return nics;
                 })},
      {{"gh200-quad",
        "4 GH200 Grace Hopper superchips (HPE Cray EX254n, e.g. CSCS Alps): NV6 (NVLink4) between every GPU "
        "pair, each GPU on its own Grace by NVLink-C2C, one 200G Slingshot-11 NIC per Grace on PCIe Gen4 x16",
        false, true},
       networked("gh200-quad", "ss11", add_gh200_quad_node)},
      {{"dgx-spark",
        "NVIDIA DGX Spark: one GB10 (Blackwell GPU and Arm CPU sharing 128 GB LPDDR5x by NVLink-C2C); its "
        "ConnectX-7 is two PCIe Gen5 x4 functions behind one 200G RoCE port. --nodes N: N Sparks on a switch",
        false, true},
       networked("dgx-spark", "eth200", add_dgx_spark_node)},
      {{"pcie-gen3-8gpu",
        "8 PCIe Gen3 GPUs of the Volta/Turing era (V100 PCIe, T4, RTX 20xx: NCCL's Volta tables, below SM 80), "
        "no NVLink: 4 PCIe Gen3 switches with 2 GPUs and one 100G EDR NIC each, 2 sockets (UPI)",
        false, true},
       networked("pcie-gen3-8gpu", "edr",
                 [](Topology& t, int n, int ns) { return add_pcie_tree(t, n, ns, add_gpus(t, n, ns, 8, "volta"), 4, 1, "3", "upi-skl"); })},
      {{"pcie-gen4-8gpu",
        "8 A100 PCIe, no NVLink: 4 PCIe Gen4 switches with 2 GPUs and one 200G HDR NIC each, 2 sockets (UPI)",
        false, true},
       networked("pcie-gen4-8gpu", "hdr",
                 [](Topology& t, int n, int ns) { return add_pcie_tree(t, n, ns, add_gpus(t, n, ns, 8, "ampere"), 4, 1, "4", "upi-skl"); })},
      {{"pcie-gen5-8gpu",
        "8 H100 PCIe, no NVLink: 4 PCIe Gen5 switches with 2 GPUs and one 400G NDR NIC each, 2 sockets (UPI)",
        false, true},
       networked("pcie-gen5-8gpu", "ndr",
                 [](Topology& t, int n, int ns) { return add_pcie_tree(t, n, ns, add_gpus(t, n, ns, 8, "hopper"), 4, 1, "5", "upi-spr"); })},
      {{"pcie-gen4-4gpu-nvbridge",
        "4 A100 PCIe in two NVLink-bridged pairs (NV12 within a pair), each pair on its own socket: SYS "
        "between pairs (Azure NC A100 v4 layout); one HDR NIC per socket",
        false, true},
       networked("pcie-gen4-4gpu-nvbridge", "hdr",
                 [](Topology& t, int n, int ns) {
                   const auto g = add_gpus(t, n, ns, 4, "ampere");
                   t.add_link(g[0], g[1], LinkKind::nvlink, "3", 12);
                   t.add_link(g[2], g[3], LinkKind::nvlink, "3", 12);
                   return add_pcie_tree(t, n, ns, g, 2, 1, "4", "upi-skl");
                 })},
      {{"nvswitch-flat",
        "N Hopper GPUs (--gpus, default 8) on one non-blocking NVSwitch fabric, 18 NVLink4 lanes each: "
        "a contention-free reference for scaling studies",
        true, false},
       [](const PresetOptions& o) {
         Topology t("nvswitch-flat");
         add_nvswitch_node(t, 0, 1, o.gpus.value_or(8), "hopper", "4", {18}, true);
         return t;
       }},
  };
  return all;
}

}  // namespace

const std::vector<PresetInfo>& presets() {
  static const std::vector<PresetInfo> infos = [] {
    std::vector<PresetInfo> v;
    for (const auto& p : registry()) v.push_back(p.info);
    return v;
  }();
  return infos;
}

const std::vector<PresetAlias>& preset_aliases() {
  static const std::vector<PresetAlias> all = {
      {"hgx-a100", "dgx-a100",
       "the HGX A100 8-GPU board DGX A100 is built on (same NV12 through 6 NVSwitches); NICs and sockets as "
       "DGX A100's, which OEM servers vary"},
      {"hgx-h100", "dgx-h100",
       "the HGX H100 8-GPU board DGX H100 is built on (same NVLink4 and NVSwitches); NICs and sockets as "
       "DGX H100's, which OEM servers vary"},
      {"hgx-h200", "dgx-h200",
       "the HGX H200 8-GPU board DGX H200 is built on; NICs and sockets as DGX H200's, which OEM servers vary"},
      {"dgx-b200", "hgx-b200",
       "DGX B200 is the HGX B200 board with one 400G NIC per GPU on two Intel sockets, as the preset has it"},
  };
  return all;
}

Topology make_preset(const std::string& name, const PresetOptions& options) {
  for (const auto& a : preset_aliases())
    if (a.name == name) return make_preset(a.preset, options);
  for (const auto& p : registry()) {
    if (p.info.name != name) continue;
    if (options.gpus && !p.info.sized)
      throw Error("preset " + name + " has a fixed GPU count; --gpus applies to sized presets only");
    if (options.gpus && *options.gpus < 1) throw Error("--gpus must be at least 1");
    if (options.nodes < 1) throw Error("--nodes must be at least 1");
    if (options.nodes > 1 && !p.info.networked)
      throw Error("preset " + name + " has no NICs: it cannot span nodes");
    if (options.spines < 1) throw Error("a fat tree needs at least one spine");
    if (options.fabric != "rail" && options.fabric != "fat-tree" && options.fabric != "fat-tree-3")
      throw Error("unknown fabric \"" + options.fabric + "\" (expected rail, fat-tree or fat-tree-3)");
    if (options.leaf_ports < 2) throw Error("a switch needs at least 2 ports");
    if (options.oversubscription < 1) throw Error("oversubscription must be at least 1");
    if (options.switch_latency_us < 0) throw Error("switch latency must not be negative");
    if (!options.nic.empty()) lane_bandwidth_bytes_per_s(LinkKind::net, options.nic);  // unknown: clear error
    return p.build(options);
  }
  std::string known;
  for (const auto& p : registry()) known += (known.empty() ? "" : ", ") + p.info.name;
  for (const auto& a : preset_aliases()) known += ", " + a.name;
  throw Error("unknown topology preset \"" + name + "\" (known: " + known + ")");
}

}  // namespace ccsim::topo
