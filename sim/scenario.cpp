#include "sim/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/algorithms/registry.hpp"
#include "sim/error.hpp"
#include "sim/nccl_system.hpp"
#include "sim/text_file.hpp"
#include "sim/topology/json_io.hpp"

namespace ccsim {

namespace {

using nlohmann::json;

// Reads one scenario file; every error names the file and the JSON path (json_io.cpp's style).
struct Reader {
  std::string origin;
  std::string directory;

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw Error(origin + ": " + path + ": " + what);
  }

  // Unknown keys are errors: a misspelt "node" must not silently run the base machine.
  void only_keys(const json& obj, const std::string& path, const std::vector<std::string>& allowed) const {
    if (!obj.is_object()) fail(path.empty() ? "(top level)" : path, "expected an object");
    require_known_keys(obj, allowed, origin, path);
  }

  static std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string() || v.get<std::string>().empty()) fail(path, "expected a non-empty string");
    return v.get<std::string>();
  }
  double positive(const json& v, const std::string& path) const {
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) fail(path, "expected a positive number");
    return v.get<double>();
  }
  int count(const json& v, const std::string& path, int least) const {
    if (!v.is_number_integer() || v.get<long long>() < least || v.get<long long>() > 1'000'000)
      fail(path, "expected an integer >= " + std::to_string(least));
    return v.get<int>();
  }
  bool boolean(const json& v, const std::string& path) const {
    if (!v.is_boolean()) fail(path, "expected true or false");
    return v.get<bool>();
  }
  Bytes bytes(const json& v, const std::string& path) const {
    if (v.is_number_integer() && v.get<long long>() > 0) return v.get<Bytes>();
    if (!v.is_string()) fail(path, "expected a size such as 8, \"64K\" or \"1G\"");
    try {
      return parse_bytes(v.get<std::string>());
    } catch (const Error& e) {
      fail(path, e.what());
    }
  }
  // A string or a list of strings.
  std::vector<std::string> strings(const json& v, const std::string& path) const {
    if (v.is_string()) return {string(v, path)};
    if (!v.is_array() || v.empty()) fail(path, "expected a string or a non-empty list of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(string(v[i], path + "[" + std::to_string(i) + "]"));
    return out;
  }
  std::string file(const std::string& name) const {
    const bool is_file = name.ends_with(".json") || name.find('/') != std::string::npos;
    if (!is_file || std::filesystem::path(name).is_absolute()) return name;
    return (std::filesystem::path(directory) / name).string();
  }

  void machine(const json& obj, const std::string& path, MachineSpec& m) const;
  std::vector<Change> changes(const json& v, const std::string& path) const;
  void sweep(const json& obj, const std::string& path, Sweep& s) const;
  std::vector<Bytes> sizes(const json& v, const std::string& path) const;
};

// A sweep is simulated point by point: thousands of sizes are a typo, not a plan.
constexpr std::size_t kMaxSizes = 1000;

const std::vector<std::string> kMachineKeys = {"topo", "gpus", "nodes", "gpus_per_node", "fabric", "nic", "spines",
                                               "leaf_ports", "oversubscription", "switch_latency_us", "sharp", "model"};

void Reader::machine(const json& obj, const std::string& path, MachineSpec& m) const {
  auto at = [&](const char* key) { return join(path, key); };
  if (obj.contains("topo")) m.topo = file(string(obj["topo"], at("topo")));
  if (obj.contains("gpus")) m.preset.gpus = count(obj["gpus"], at("gpus"), 1);
  if (obj.contains("nodes")) m.preset.nodes = count(obj["nodes"], at("nodes"), 1);
  if (obj.contains("gpus_per_node")) m.gpus_per_node = count(obj["gpus_per_node"], at("gpus_per_node"), 1);
  if (obj.contains("fabric")) {
    m.preset.fabric = string(obj["fabric"], at("fabric"));
    if (m.preset.fabric != "rail" && m.preset.fabric != "fat-tree" && m.preset.fabric != "fat-tree-3")
      fail(at("fabric"), "expected rail, fat-tree or fat-tree-3, found \"" + m.preset.fabric + "\"");
  }
  if (obj.contains("nic")) {
    m.preset.nic = string(obj["nic"], at("nic"));
    try {
      topo::lane_bandwidth_bytes_per_s(topo::LinkKind::net, m.preset.nic);
    } catch (const Error& e) {
      fail(at("nic"), e.what());
    }
  }
  if (obj.contains("spines")) m.preset.spines = count(obj["spines"], at("spines"), 1);
  if (obj.contains("leaf_ports")) m.preset.leaf_ports = count(obj["leaf_ports"], at("leaf_ports"), 2);
  if (obj.contains("oversubscription")) {
    m.preset.oversubscription = positive(obj["oversubscription"], at("oversubscription"));
    if (m.preset.oversubscription < 1) fail(at("oversubscription"), "expected a number >= 1 (down-link over up-link capacity)");
  }
  if (obj.contains("switch_latency_us")) {
    const auto& v = obj["switch_latency_us"];
    if (!v.is_number() || v.get<double>() < 0) fail(at("switch_latency_us"), "expected a number >= 0");
    m.preset.switch_latency_us = v.get<double>();
  }
  if (obj.contains("sharp")) m.preset.sharp = boolean(obj["sharp"], at("sharp"));
  if (obj.contains("model")) {
    const auto& v = obj["model"];
    if (v.is_string()) {
      m.model = file(string(v, at("model")));
    } else if (v.is_object()) {
      for (const auto& [key, value] : v.items()) {
        const std::string p = at("model") + "." + key;
        if (!find_parameter_spec(key)) fail(p, "unknown model parameter (" + unknown_parameter_advice(key) + ")");
        if (!value.is_number() || value.get<double>() < 0) fail(p, "expected a number >= 0");
        m.model_overrides[key] = value.get<double>();
      }
    } else {
      fail(at("model"), "expected a model name or file, or an object of parameter values");
    }
  }
}

std::vector<Change> Reader::changes(const json& v, const std::string& path) const {
  if (!v.is_array()) fail(path, "expected a list of changes");
  std::vector<Change> out;
  const std::vector<std::string> kinds = {"scale_bandwidth", "scale_latency", "remove_device", "remove_link", "degrade_link"};
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    only_keys(v[i], p, kinds);
    if (v[i].size() != 1) fail(p, "expected exactly one change per entry (one of scale_bandwidth, scale_latency, remove_device, remove_link, degrade_link)");
    const auto& [key, body] = *v[i].items().begin();
    Change c;
    c.path = p + "." + key;
    auto between = [&](std::vector<std::string> keys) {
      only_keys(body, c.path, keys);
      if (!body.contains("between") || !body["between"].is_array() || body["between"].size() != 2)
        fail(c.path + ".between", "expected two device names, e.g. [\"gpu0\", \"nvswitch0\"]");
      c.a = string(body["between"][0], c.path + ".between[0]");
      c.b = string(body["between"][1], c.path + ".between[1]");
    };
    if (key == "scale_bandwidth") {
      c.kind = Change::Kind::scale_bandwidth;
      only_keys(body, c.path, {"kind", "factor"});
      const std::vector<std::pair<std::string, topo::LinkKind>> names = {
          {"nvlink", topo::LinkKind::nvlink}, {"pcie", topo::LinkKind::pcie}, {"c2c", topo::LinkKind::c2c},
          {"cpu", topo::LinkKind::cpu}, {"net", topo::LinkKind::net}};
      const std::string kind = body.contains("kind") ? string(body["kind"], c.path + ".kind") : "";
      bool found = false;
      for (const auto& [n, k] : names)
        if (n == kind) c.link_kind = k, found = true;
      if (!found) fail(c.path + ".kind", "expected one of nvlink, pcie, c2c, cpu, net");
      if (!body.contains("factor")) fail(c.path + ".factor", "missing (expected a positive number)");
      c.factor = positive(body["factor"], c.path + ".factor");
    } else if (key == "scale_latency") {
      c.kind = Change::Kind::scale_latency;
      only_keys(body, c.path, {"class", "factor"});
      const std::string cls = body.contains("class") ? string(body["class"], c.path + ".class") : "";
      if (cls == "nvlink") c.latency_class = LatencyClass::nvlink;
      else if (cls == "pcie") c.latency_class = LatencyClass::pcie;
      else if (cls == "net") c.latency_class = LatencyClass::net;
      else fail(c.path + ".class", "expected one of nvlink, pcie, net");
      if (!body.contains("factor")) fail(c.path + ".factor", "missing (expected a positive number)");
      c.factor = positive(body["factor"], c.path + ".factor");
    } else if (key == "remove_device") {
      c.kind = Change::Kind::remove_device;
      c.devices = strings(body, c.path);
    } else if (key == "remove_link") {
      c.kind = Change::Kind::remove_link;
      between({"between"});
    } else {
      c.kind = Change::Kind::degrade_link;
      between({"between", "factor"});
      if (!body.contains("factor")) fail(c.path + ".factor", "missing (expected the share of bandwidth left, e.g. 0.5)");
      c.factor = positive(body["factor"], c.path + ".factor");
      if (c.factor > 1)
        fail(c.path + ".factor", "expected the share of bandwidth left, at most 1 (scale_bandwidth raises a class of links)");
    }
    out.push_back(c);
  }
  return out;
}

std::vector<Bytes> Reader::sizes(const json& v, const std::string& path) const {
  std::vector<Bytes> out;
  if (v.is_array()) {
    if (v.empty()) fail(path, "expected at least one size");
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(bytes(v[i], path + "[" + std::to_string(i) + "]"));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  only_keys(v, path, {"min", "max", "factor"});
  if (!v.contains("min") || !v.contains("max")) fail(path, "expected min and max (and factor, default 2), or a list of sizes");
  const Bytes lo = bytes(v["min"], path + ".min"), hi = bytes(v["max"], path + ".max");
  if (lo > hi) fail(path, "min is larger than max");
  const double factor = v.contains("factor") ? positive(v["factor"], path + ".factor") : 2.0;
  if (factor <= 1) fail(path + ".factor", "expected a number above 1");
  // Same rule as nccl-tests' -b -e -f: multiply until past the maximum.
  for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) * (1 + 1e-12); s *= factor) {
    out.push_back(static_cast<Bytes>(std::llround(s)));
    if (out.size() > kMaxSizes) fail(path, "more than " + std::to_string(kMaxSizes) + " sizes (raise the factor)");
  }
  return out;
}

void Reader::sweep(const json& obj, const std::string& path, Sweep& s) const {
  only_keys(obj, path, {"collectives", "algorithms", "protocols", "sizes", "type", "op", "channels", "chunk_bytes", "nccl_env", "select", "check"});
  auto at = [&](const char* key) { return join(path, key); };
  if (obj.contains("collectives")) {
    s.collectives.clear();
    const auto names = strings(obj["collectives"], at("collectives"));
    for (std::size_t i = 0; i < names.size(); ++i) try {
        s.collectives.push_back(parse_collective(names[i]));
      } catch (const Error& e) {
        fail(at("collectives") + "[" + std::to_string(i) + "]", e.what());
      }
  }
  if (obj.contains("algorithms")) {
    s.algorithms = strings(obj["algorithms"], at("algorithms"));
    for (std::size_t i = 0; i < s.algorithms.size(); ++i) try {
        if (s.algorithms[i] != "auto") algo::find_algorithm(s.algorithms[i]);
      } catch (const Error& e) {
        fail(at("algorithms") + "[" + std::to_string(i) + "]", e.what());
      }
  }
  if (obj.contains("protocols")) {
    s.protocols = strings(obj["protocols"], at("protocols"));
    for (std::size_t i = 0; i < s.protocols.size(); ++i) try {
        if (s.protocols[i] != "auto") parse_protocol(s.protocols[i]);
      } catch (const Error& e) {
        fail(at("protocols") + "[" + std::to_string(i) + "]", e.what());
      }
  }
  if (obj.contains("sizes")) s.sizes = sizes(obj["sizes"], at("sizes"));
  try {
    if (obj.contains("type")) s.type = parse_data_type(string(obj["type"], at("type")));
  } catch (const Error& e) {
    fail(at("type"), e.what());
  }
  try {
    if (obj.contains("op")) s.op = parse_reduce_op(string(obj["op"], at("op")));
  } catch (const Error& e) {
    fail(at("op"), e.what());
  }
  if (obj.contains("channels")) s.channels = count(obj["channels"], at("channels"), 1);
  if (obj.contains("chunk_bytes")) s.chunk_bytes = bytes(obj["chunk_bytes"], at("chunk_bytes"));
  if (obj.contains("nccl_env")) {
    const json& env = obj["nccl_env"];
    if (!env.is_object()) fail(at("nccl_env"), "expected an object of NCCL settings, e.g. {\"NCCL_MAX_NCHANNELS\": 16}");
    nccl::set_env_settings(s.nccl_env_settings, env, origin + ": " + at("nccl_env"));
  }
  if (obj.contains("select")) {
    s.select = string(obj["select"], at("select"));
    if (s.select != "nccl" && s.select != "fastest") fail(at("select"), "expected nccl or fastest");
  }
  if (obj.contains("check")) s.check = boolean(obj["check"], at("check"));
}

}  // namespace

Scenario scenario_from_json(const json& j, const std::string& origin, const std::string& directory) {
  const Reader r{origin, directory};
  r.only_keys(j, "", {"name", "description", "base", "variants", "sweep"});
  Scenario s;
  s.origin = origin;
  s.name = j.contains("name") ? r.string(j["name"], "name") : std::filesystem::path(origin).stem().string();
  if (j.contains("description")) s.description = r.string(j["description"], "description");
  MachineSpec base;
  if (j.contains("base")) {
    r.only_keys(j["base"], "base", kMachineKeys);
    r.machine(j["base"], "base", base);
  }
  Sweep sweep;
  if (!j.contains("sweep")) r.fail("sweep", "missing (expected collectives, algorithms, protocols and sizes)");
  r.sweep(j["sweep"], "sweep", sweep);
  if (sweep.sizes.empty()) r.fail("sweep.sizes", "missing (expected {\"min\", \"max\", \"factor\"} or a list of sizes)");

  const json variants = j.contains("variants") ? j["variants"] : json::array({json{{"name", "base"}}});
  if (!variants.is_array() || variants.empty()) r.fail("variants", "expected a non-empty list of variants");
  std::set<std::string> names;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const std::string p = "variants[" + std::to_string(i) + "]";
    std::vector<std::string> keys = kMachineKeys;
    keys.insert(keys.end(), {"name", "description", "changes", "sweep"});
    r.only_keys(variants[i], p, keys);
    Variant v;
    if (!variants[i].contains("name")) r.fail(p + ".name", "missing (expected a short name such as \"base\")");
    v.name = r.string(variants[i]["name"], p + ".name");
    if (!names.insert(v.name).second) r.fail(p + ".name", "\"" + v.name + "\" names another variant too");
    if (variants[i].contains("description")) v.description = r.string(variants[i]["description"], p + ".description");
    v.machine = base;
    r.machine(variants[i], p, v.machine);
    if (variants[i].contains("changes")) v.changes = r.changes(variants[i]["changes"], p + ".changes");
    v.sweep = sweep;
    if (variants[i].contains("sweep")) r.sweep(variants[i]["sweep"], p + ".sweep", v.sweep);
    s.variants.push_back(std::move(v));
  }
  return s;
}

Scenario load_scenario(const std::string& path) {
  const json j = read_json_file(path);
  return scenario_from_json(j, path, std::filesystem::path(path).parent_path().string());
}

std::vector<std::string> match_devices(const topo::Topology& t, const std::string& pattern) {
  std::vector<std::string> out;
  if (pattern.starts_with("*.")) {
    const std::string tail = pattern.substr(2);
    for (const auto& d : t.devices())
      if (d.name == tail || d.name.ends_with("." + tail)) out.push_back(d.name);
    if (out.empty()) t.device_named(tail);  // throws, naming devices that look alike
    return out;
  }
  return {t.device(t.device_named(pattern)).name};
}

System build_system(const Scenario& scenario, const Variant& variant) {
  const MachineSpec& m = variant.machine;
  const std::string where = scenario.origin + ": variant \"" + variant.name + "\": ";
  auto machine = [&] {
    try {
      topo::Topology t = topo::resolve_topology(m.topo, m.preset);
      if (m.gpus_per_node) t.keep_gpus_per_node(*m.gpus_per_node);
      return t;
    } catch (const Error& e) {
      throw Error(where + e.what());
    }
  };
  System s{machine(), Model{}};
  try {
    s.model = m.model.empty() ? Model::builtin(s.topology.gpu_arch()) : Model::named(m.model);
    for (const auto& [key, value] : m.model_overrides) s.model.set(key, value, "scenario " + scenario.name);
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
  for (const Change& c : variant.changes) {
    try {
      switch (c.kind) {
        case Change::Kind::scale_bandwidth:
          if (s.topology.scale_links(c.link_kind, c.factor) == 0)
            throw Error("the machine has no " + std::string(topo::to_string(c.link_kind)) + " link");
          break;
        case Change::Kind::scale_latency:
          for (auto p : all_protocols())
            for (bool tree : {false, true}) {
              const std::string key = hop_latency_parameter(c.latency_class, p, tree);
              s.model.set(key, s.model.get(key) * c.factor, "scenario " + scenario.name);
            }
          break;
        case Change::Kind::remove_device:
          for (const auto& pattern : c.devices)
            for (const auto& name : match_devices(s.topology, pattern)) s.topology.remove_device(s.topology.device_named(name));
          break;
        case Change::Kind::remove_link:
        case Change::Kind::degrade_link: {
          // Pairs of the two patterns that a link joins ("*.gpu0" with "*.pcie0": in each node).
          std::vector<std::pair<std::string, std::string>> pairs;
          for (const auto& a : match_devices(s.topology, c.a))
            for (const auto& b : match_devices(s.topology, c.b))
              if (!s.topology.links_between(s.topology.device_named(a), s.topology.device_named(b)).empty()) pairs.emplace_back(a, b);
          if (pairs.empty()) throw Error("no link joins " + c.a + " and " + c.b);
          for (const auto& [a, b] : pairs) {
            if (c.kind == Change::Kind::remove_link) s.topology.remove_link(s.topology.device_named(a), s.topology.device_named(b));
            else s.topology.scale_link(s.topology.device_named(a), s.topology.device_named(b), c.factor);
          }
          break;
        }
      }
    } catch (const Error& e) {
      throw Error(scenario.origin + ": " + c.path + ": " + e.what());
    }
  }
  return s;
}

}  // namespace ccsim
