#include "sim/topology/json_io.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/embedded_configs.hpp"
#include "sim/error.hpp"
#include "sim/text_file.hpp"
#include "sim/topology/gpu_models.hpp"
#include "sim/topology/import_xml.hpp"

namespace ccsim::topo {

namespace {

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

template <typename Enum> Enum parse_enum(const nlohmann::json& v, const std::string& path,
                                         const std::vector<std::pair<std::string, Enum>>& names) {
  std::string known;
  for (const auto& [n, e] : names) known += (known.empty() ? "" : ", ") + n;
  if (!v.is_string()) throw Error(path + ": expected one of " + known);
  for (const auto& [n, e] : names)
    if (n == v.get<std::string>()) return e;
  throw Error(path + ": unknown \"" + v.get<std::string>() + "\" (expected one of " + known + ")");
}

const std::vector<std::pair<std::string, DeviceKind>> kDeviceKinds = {
    {"gpu", DeviceKind::gpu}, {"nvswitch", DeviceKind::nvswitch}, {"pcie_switch", DeviceKind::pcie_switch},
    {"cpu", DeviceKind::cpu}, {"nic", DeviceKind::nic},           {"net_switch", DeviceKind::net_switch}};
const std::vector<std::pair<std::string, LinkKind>> kLinkKinds = {{"nvlink", LinkKind::nvlink}, {"pcie", LinkKind::pcie},
                                                                  {"c2c", LinkKind::c2c},       {"cpu", LinkKind::cpu},
                                                                  {"net", LinkKind::net}};

std::string string_field(const nlohmann::json& obj, const char* key, const std::string& path, bool required,
                         const std::string& fallback = "") {
  if (!obj.contains(key)) {
    if (required) throw Error(path + "." + key + ": missing (expected a string)");
    return fallback;
  }
  if (!obj[key].is_string()) throw Error(path + "." + key + ": expected a string");
  return obj[key].get<std::string>();
}

}  // namespace

Topology topology_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw Error(origin + ": expected a JSON object at the top level");
  require_known_keys(j, {"name", "description", "devices", "links", "pcie_p2p", "net_gdr_level", "p2p_level", "p2p_pxn_level"},
                     origin, "");
  if (!j.contains("name")) throw Error(origin + ": name: missing (expected a string)");
  Topology t(string_field(j, "name", origin + ":", true));
  if (!j.contains("devices") || !j["devices"].is_array() || j["devices"].empty())
    throw Error(origin + ": devices: expected a non-empty array");
  std::map<std::string, DeviceId> by_name;
  for (std::size_t i = 0; i < j["devices"].size(); ++i) {
    const auto& d = j["devices"][i];
    const std::string path = origin + ": devices[" + std::to_string(i) + "]";
    if (!d.is_object()) throw Error(path + ": expected an object with name and kind");
    require_known_keys(d, {"name", "kind", "arch", "node", "reduces", "latency_us"}, origin, "devices[" + std::to_string(i) + "]");
    Device dev;
    dev.name = string_field(d, "name", path, true);
    if (!d.contains("kind")) throw Error(path + ".kind: missing");
    dev.kind = parse_enum(d["kind"], path + ".kind", kDeviceKinds);
    dev.arch = string_field(d, "arch", path, dev.kind == DeviceKind::gpu);
    if (const auto& families = gpu_families();
        dev.kind == DeviceKind::gpu && std::find(families.begin(), families.end(), dev.arch) == families.end())
      throw Error(path + ".arch: expected the GPU's family, one of " + listed(families) + " (a timing model each; "
                  "a GPU of none: the closest, with perf --model FILE), got \"" + dev.arch + "\"");
    if (d.contains("node")) {
      if (!d["node"].is_number_integer() || d["node"].get<int>() < 0) throw Error(path + ".node: expected an integer >= 0");
      dev.node = d["node"].get<int>();
    }
    if (d.contains("reduces")) {
      if (!d["reduces"].is_boolean()) throw Error(path + ".reduces: expected true or false");
      dev.in_switch_reduction = d["reduces"].get<bool>();
    }
    if (d.contains("latency_us")) {
      if (!d["latency_us"].is_number() || d["latency_us"].get<double>() < 0)
        throw Error(path + ".latency_us: expected a number >= 0 (microseconds)");
      dev.latency_s = d["latency_us"].get<double>() * 1e-6;
    }
    if (by_name.count(dev.name)) throw Error(path + ".name: device \"" + dev.name + "\" is defined twice");
    by_name[dev.name] = t.add_device(dev);
  }
  if (!j.contains("links") || !j["links"].is_array()) throw Error(origin + ": links: expected an array");
  for (std::size_t i = 0; i < j["links"].size(); ++i) {
    const auto& l = j["links"][i];
    const std::string path = origin + ": links[" + std::to_string(i) + "]";
    if (!l.is_object()) throw Error(path + ": expected an object with from, to, kind, generation and lanes");
    // bandwidth_gbps: what `topo import --out` writes beside each link for the reader, derived
    // from the generation and lanes. source: where a link's figures come from, for the reader.
    require_known_keys(l, {"from", "to", "kind", "generation", "lanes", "bandwidth_gbps", "p2p_fraction", "source"}, origin,
                       "links[" + std::to_string(i) + "]");
    if (l.contains("source") && !l["source"].is_string()) throw Error(path + ".source: expected a string");
    auto endpoint = [&](const char* key) {
      const std::string name = string_field(l, key, path, true);
      auto it = by_name.find(name);
      if (it == by_name.end()) throw Error(path + "." + key + ": unknown device \"" + name + "\"");
      return it->second;
    };
    const DeviceId a = endpoint("from"), b = endpoint("to");
    if (a == b) throw Error(path + ": a link joins two different devices");
    if (!l.contains("kind")) throw Error(path + ".kind: missing");
    const LinkKind kind = parse_enum(l["kind"], path + ".kind", kLinkKinds);
    // What each kind of link joins: NVLink GPUs and NVSwitches, NVLink-C2C a GPU and its CPU, a
    // CPU link two sockets, the network NICs and network switches, PCIe anything but those.
    const DeviceKind ka = t.device(a).kind, kb = t.device(b).kind;
    auto both_in = [&](std::initializer_list<DeviceKind> kinds) {
      return std::find(kinds.begin(), kinds.end(), ka) != kinds.end() && std::find(kinds.begin(), kinds.end(), kb) != kinds.end();
    };
    const char* joins = nullptr;
    switch (kind) {
      case LinkKind::nvlink: joins = both_in({DeviceKind::gpu, DeviceKind::nvswitch}) ? nullptr : "GPUs and NVSwitches"; break;
      case LinkKind::c2c:
        joins = (ka == DeviceKind::gpu && kb == DeviceKind::cpu) || (ka == DeviceKind::cpu && kb == DeviceKind::gpu) ? nullptr : "a GPU and a CPU";
        break;
      case LinkKind::cpu: joins = both_in({DeviceKind::cpu}) ? nullptr : "two CPUs"; break;
      case LinkKind::net: joins = both_in({DeviceKind::nic, DeviceKind::net_switch}) ? nullptr : "NICs and network switches"; break;
      case LinkKind::pcie: joins = ka != DeviceKind::net_switch && kb != DeviceKind::net_switch ? nullptr : "devices of a node, not network switches"; break;
    }
    if (joins)
      throw Error(path + ".kind: " + std::string(to_string(kind)) + " joins " + joins + ", not a " +
                  std::string(to_string(ka)) + " and a " + std::string(to_string(kb)));
    const std::string generation = string_field(l, "generation", path, true);
    int lanes = 1;
    if (l.contains("lanes")) {
      if (!l["lanes"].is_number_integer() || l["lanes"].get<int>() < 1) throw Error(path + ".lanes: expected an integer >= 1");
      lanes = l["lanes"].get<int>();
    }
    LinkId id = 0;
    try {
      id = t.add_link(a, b, kind, generation, lanes);
    } catch (const Error& e) {
      throw Error(path + ".generation: " + e.what());
    }
    if (l.contains("p2p_fraction")) {
      const auto& f = l["p2p_fraction"];
      try {
        t.set_p2p_fraction(id, f.is_number() ? f.get<double>() : 0.0);  // not a number: out of range
      } catch (const Error& e) {
        throw Error(path + ".p2p_fraction: " + e.what());
      }
    }
  }
  if (j.contains("pcie_p2p")) {
    if (!j["pcie_p2p"].is_boolean()) throw Error(origin + ": pcie_p2p: expected true or false");
    t.set_pcie_p2p(j["pcie_p2p"].get<bool>());
  }
  for (const char* key : {"net_gdr_level", "p2p_level"}) {
    if (!j.contains(key)) continue;
    const auto level = j[key].is_string() ? parse_path_level(j[key].get<std::string>()) : std::nullopt;
    if (!level)
      throw Error(origin + ": " + key + ": expected one of LOC, NVL, NVB, PIX, PXB, PHB, SYS (NCCL_" +
                  (std::string(key) == "p2p_level" ? "P2P_LEVEL" : "NET_GDR_LEVEL") + ")");
    if (std::string(key) == "p2p_level") t.set_p2p_level(*level);
    else t.set_net_gdr_level(*level);
  }
  if (j.contains("p2p_pxn_level")) {
    const auto& v = j["p2p_pxn_level"];
    if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() > 2)
      throw Error(origin + ": p2p_pxn_level: expected 0, 1 or 2 (NCCL_P2P_PXN_LEVEL)");
    t.set_p2p_pxn_level(v.get<int>());
  }
  if (t.gpu_count() == 0) throw Error(origin + ": devices: no GPU");
  // Every GPU reaches the first one over the file's links (a GPU left unlinked would otherwise
  // fail later, as a route from another GPU).
  std::vector<std::vector<DeviceId>> next(t.devices().size());
  for (const auto& l : t.links()) {
    next[l.a].push_back(l.b);
    next[l.b].push_back(l.a);
  }
  std::vector<bool> reached(t.devices().size(), false);
  std::vector<DeviceId> todo{t.gpu(0)};
  reached[t.gpu(0)] = true;
  while (!todo.empty()) {
    const DeviceId d = todo.back();
    todo.pop_back();
    for (const DeviceId n : next[d])
      if (!reached[n]) {
        reached[n] = true;
        todo.push_back(n);
      }
  }
  for (std::size_t i = 0; i < t.devices().size(); ++i)
    if (t.device(i).kind == DeviceKind::gpu && !reached[i])
      throw Error(origin + ": devices[" + std::to_string(i) + "]: GPU \"" + t.device(i).name + "\" is joined to " +
                  t.device(t.gpu(0)).name + " by no path of links");
  try {
    t.gpu_arch();       // one GPU family, with a model
    t.gpus_per_node();  // GPUs ordered by node, equal per node
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  return t;
}

Topology load_topology_file(const std::string& path) {
  const std::string text = read_text_file(path);
  // What `topo import` reads is not a topology file yet: say so rather than that it is bad JSON.
  const bool xml = looks_like_xml(text);
  const auto first = text.find_first_not_of(" \t\r\n\xef\xbb\xbf");
  const bool smi = !xml && (first == std::string::npos || text[first] != '{') && text.find("GPU0") != std::string::npos;
  if (xml || smi)
    throw Error(path + ": " + (xml ? "an NCCL topology dump (XML)" : "`nvidia-smi topo -m` output") +
                ", not a topology file: `ccsim topo import " + path + " --out FILE.json` makes one");
  return topology_from_json(parse_json(text, path), path);
}

std::vector<ShippedTopology> shipped_topologies() {
  constexpr std::string_view dir = "topologies/", ext = ".json";
  std::vector<ShippedTopology> out;
  for (const auto& f : embedded_configs())
    if (f.path.starts_with(dir) && f.path.ends_with(ext))
      out.push_back({std::string(f.path.substr(dir.size(), f.path.size() - dir.size() - ext.size())), f.content});
  return out;
}

bool is_topology_file(const std::string& name) {
  // .xml and .txt: what `topo import` reads, which loading says to import first.
  return (name.size() > 5 && name.ends_with(".json")) || (name.size() > 4 && (name.ends_with(".xml") || name.ends_with(".txt"))) ||
         name.find('/') != std::string::npos;
}

std::optional<ShippedTopology> shipped_topology(const std::string& name) {
  for (const auto& f : shipped_topologies())
    if (f.name == name) return f;
  return std::nullopt;
}

Topology resolve_topology(const std::string& name, const PresetOptions& options) {
  if (is_topology_file(name)) {
    if (options.nodes > 1) throw Error("--nodes applies to presets; a topology file describes every node itself");
    return load_topology_file(name);
  }
  if (const auto f = shipped_topology(name)) {
    if (options.nodes > 1) throw Error("--nodes applies to presets; " + name + " describes every node itself");
    return topology_from_json(nlohmann::json::parse(f->json), "configs/topologies/" + name + ".json");
  }
  return make_preset(name, options);
}

}  // namespace ccsim::topo
