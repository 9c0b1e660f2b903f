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
std::vector<DeviceId> add_dgx_h100_node(Topology& t, int node, int nodes) {
  const auto gpus = add_nvswitch_node(t, node, nodes, 8, "hopper", "4", {5, 4, 4, 5}, true);
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

// Rail-optimised two-tier fat tree: NIC i of every node on leaf i (its rail), every leaf joined to
// every spine with enough lanes to carry its nodes' traffic divided by the oversubscription.
void add_rail_fat_tree(Topology& t, const std::vector<std::vector<DeviceId>>& nics_by_node, const PresetOptions& o,
                       const std::string& generation) {
  const int nodes = static_cast<int>(nics_by_node.size());
  const int rails = static_cast<int>(nics_by_node.front().size());
  std::vector<DeviceId> spines;
  for (int s = 0; s < o.spines; ++s)
    spines.push_back(t.add_device({"spine" + std::to_string(s), DeviceKind::net_switch, 0, "", o.sharp}));
  const int uplink_lanes =
      std::max(1, static_cast<int>(std::lround(nodes / (o.spines * std::max(o.oversubscription, 1e-9)))));
  for (int r = 0; r < rails; ++r) {
    const DeviceId leaf = t.add_device({"leaf" + std::to_string(r), DeviceKind::net_switch, 0, "", o.sharp});
    for (int n = 0; n < nodes; ++n) t.add_link(nics_by_node[static_cast<std::size_t>(n)][static_cast<std::size_t>(r)], leaf, LinkKind::net, generation, 1);
    for (auto s : spines) t.add_link(leaf, s, LinkKind::net, generation, uplink_lanes);
  }
}

struct Preset {
  PresetInfo info;
  std::function<Topology(const PresetOptions&)> build;
};

const std::vector<Preset>& registry() {
  static const std::vector<Preset> all = {
      {{"dgx-h100",
        "NVIDIA DGX H100: 8 H100 SXM, 18 NVLink4 lanes each to 4 NVSwitch chips (5/4/4/5), 450 GB/s per "
        "direction per GPU, NVLS-capable; one 400G NDR NIC per GPU behind a PCIe Gen5 switch, 2 sockets. "
        "--nodes N joins N of them with a rail-optimised NDR fat tree",
        false, true},
       [](const PresetOptions& o) {
         Topology t(o.nodes > 1 ? "dgx-h100 x" + std::to_string(o.nodes) : "dgx-h100");
         std::vector<std::vector<DeviceId>> nics;
         for (int n = 0; n < o.nodes; ++n) nics.push_back(add_dgx_h100_node(t, n, o.nodes));
         if (o.nodes > 1) add_rail_fat_tree(t, nics, o, "ndr");
         return t;
       }},
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

Topology make_preset(const std::string& name, const PresetOptions& options) {
  for (const auto& p : registry()) {
    if (p.info.name != name) continue;
    if (options.gpus && !p.info.sized)
      throw Error("preset " + name + " has a fixed GPU count; --gpus applies to sized presets only");
    if (options.gpus && *options.gpus < 1) throw Error("--gpus must be at least 1");
    if (options.nodes < 1) throw Error("--nodes must be at least 1");
    if (options.nodes > 1 && !p.info.networked)
      throw Error("preset " + name + " has no NICs: it cannot span nodes");
    if (options.spines < 1) throw Error("a fat tree needs at least one spine");
    return p.build(options);
  }
  std::string known;
  for (const auto& p : registry()) known += (known.empty() ? "" : ", ") + p.info.name;
  throw Error("unknown topology preset \"" + name + "\" (known: " + known + ")");
}

}  // namespace ccsim::topo
