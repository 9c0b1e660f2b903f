#include "sim/topology/presets.hpp"

#include <functional>

#include "sim/error.hpp"

namespace ccsim::topo {

namespace {

// GPUs joined by NVSwitch chips; lanes_per_switch[s] NVLink lanes go from every GPU to switch s.
Topology nvswitch_node(const std::string& name, int gpus, const std::string& arch, const std::string& nvlink_gen,
                       const std::vector<int>& lanes_per_switch, bool nvls) {
  Topology t(name);
  std::vector<DeviceId> gpu_ids, switch_ids;
  for (int g = 0; g < gpus; ++g) gpu_ids.push_back(t.add_device({"gpu" + std::to_string(g), DeviceKind::gpu, 0, arch, false}));
  for (std::size_t s = 0; s < lanes_per_switch.size(); ++s)
    switch_ids.push_back(t.add_device({"nvswitch" + std::to_string(s), DeviceKind::nvswitch, 0, "", nvls}));
  for (auto g : gpu_ids)
    for (std::size_t s = 0; s < switch_ids.size(); ++s)
      t.add_link(g, switch_ids[s], LinkKind::nvlink, nvlink_gen, lanes_per_switch[s]);
  return t;
}

struct Preset {
  PresetInfo info;
  std::function<Topology(const PresetOptions&)> build;
};

const std::vector<Preset>& registry() {
  static const std::vector<Preset> all = {
      {{"dgx-h100",
        "NVIDIA DGX H100: 8 H100 SXM, 18 NVLink4 lanes each to 4 NVSwitch chips (5/4/4/5), 450 GB/s per "
        "direction per GPU, NVLS-capable",
        false},
       [](const PresetOptions&) { return nvswitch_node("dgx-h100", 8, "hopper", "4", {5, 4, 4, 5}, true); }},
      {{"nvswitch-flat",
        "N Hopper GPUs (--gpus, default 8) on one non-blocking NVSwitch fabric, 18 NVLink4 lanes each: "
        "a contention-free reference for scaling studies",
        true},
       [](const PresetOptions& o) {
         const int n = o.gpus.value_or(8);
         return nvswitch_node("nvswitch-flat", n, "hopper", "4", {18}, true);
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
    return p.build(options);
  }
  std::string known;
  for (const auto& p : registry()) known += (known.empty() ? "" : ", ") + p.info.name;
  throw Error("unknown topology preset \"" + name + "\" (known: " + known + ")");
}

}  // namespace ccsim::topo
