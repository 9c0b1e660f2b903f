#pragma once
// Named machines. `ccsim topo list` prints this registry.
#include <optional>
#include <string>
#include <vector>

#include "sim/topology/topology.hpp"

namespace ccsim::topo {

struct PresetOptions {
  std::optional<int> gpus;  // for presets whose size is a parameter
};

struct PresetInfo {
  std::string name;
  std::string description;
  bool sized = false;  // takes PresetOptions::gpus
};

const std::vector<PresetInfo>& presets();
// Error naming the known presets when `name` is unknown, or when `gpus` is given to a fixed preset.
Topology make_preset(const std::string& name, const PresetOptions& options = {});

}  // namespace ccsim::topo
