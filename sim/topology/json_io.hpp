#pragma once
// Custom topologies in JSON (configs/topologies/*.json; schema in configs/topologies/README.md).
// Errors name the file, the JSON path and what was expected, e.g.
// `my.json: links[3].to: unknown device "gpu9"`.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/topology/presets.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim::topo {

Topology topology_from_json(const nlohmann::json& j, const std::string& origin);
Topology load_topology_file(const std::string& path);

// The topologies shipped in configs/topologies (compiled in): each file's name without .json, and
// its JSON text.
struct ShippedTopology {
  std::string name;
  std::string_view json;
};
std::vector<ShippedTopology> shipped_topologies();

// What --topo names: a JSON file (a path ending in .json), a topology shipped in configs/topologies,
// or a preset.
Topology resolve_topology(const std::string& name, const PresetOptions& options);
// The first two describe every node themselves: the preset options that build nodes and the
// network between them (--nodes, --fabric, ...) do not apply to them.
bool is_topology_file(const std::string& name);
std::optional<ShippedTopology> shipped_topology(const std::string& name);

}  // namespace ccsim::topo
