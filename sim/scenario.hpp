#pragma once
// What-if scenarios (scenarios/*.json, schema in scenarios/README.md): a base machine, variants of
// it (other node counts or NICs, faster or slower links, failed devices, model parameters), and a
// sweep of collectives x algorithms x protocols x sizes to run on each. This file reads them and
// builds each variant's machine; `ccsim run` runs the sweeps.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/collective.hpp"
#include "sim/model.hpp"
#include "sim/nccl_tuning.hpp"
#include "sim/topology/presets.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim {

struct Sweep {
  std::vector<CollectiveKind> collectives = {CollectiveKind::all_reduce};
  std::vector<std::string> algorithms = {"auto"};  // registry names, or auto (NCCL's pick)
  std::vector<std::string> protocols = {"auto"};   // simple, ll, ll128, or auto
  std::vector<Bytes> sizes;                        // nccl-tests' size column, ascending
  DataType type = DataType::fp32;
  ReduceOp op = ReduceOp::sum;
  std::optional<int> channels;       // default: what NCCL would launch
  std::optional<Bytes> chunk_bytes;  // default: the model's
  nccl::EnvSettings nccl_env_settings;  // "nccl_env": NCCL_MAX_NCHANNELS and the like
  std::string select = "nccl";       // what auto means: nccl (its cost model) or fastest (simulate all)
  bool check = false;                // run the CPU executor's data check on each point (slow)
};

// The machine a variant runs on, before its changes.
struct MachineSpec {
  std::string topo = "dgx-h100";  // preset, shipped topology, or JSON file (relative to the scenario)
  topo::PresetOptions preset;
  std::optional<int> gpus_per_node;
  std::string model;                            // built-in name or file; empty: the GPU family's
  std::map<std::string, double> model_overrides;  // parameter -> value, on top of the model
};

// One edit of the machine, applied in the order listed.
struct Change {
  enum class Kind { scale_bandwidth, scale_latency, remove_device, remove_link, degrade_link };
  Kind kind = Kind::scale_bandwidth;
  std::string path;  // JSON path, for error messages: "variants[2].changes[0]"
  topo::LinkKind link_kind = topo::LinkKind::nvlink;        // scale_bandwidth
  LatencyClass latency_class = LatencyClass::nvlink;        // scale_latency
  std::vector<std::string> devices;                         // remove_device: names or "*.name"
  std::string a, b;                                         // remove_link / degrade_link endpoints
  double factor = 1;
};

struct Variant {
  std::string name;
  std::string description;
  MachineSpec machine;
  std::vector<Change> changes;
  Sweep sweep;
};

struct Scenario {
  std::string origin;  // the file, for error messages
  std::string name;
  std::string description;
  std::vector<Variant> variants;  // the first is the base the others are compared with
};

// `directory` resolves relative file names (topologies, models) in the scenario.
Scenario scenario_from_json(const nlohmann::json& j, const std::string& origin, const std::string& directory);
Scenario load_scenario(const std::string& path);

struct System {
  topo::Topology topology;
  Model model;
};
// The variant's machine and model with its changes applied. Errors name the scenario file and the
// JSON path of the change that failed.
System build_system(const Scenario& scenario, const Variant& variant);

// Device names a pattern selects: an exact name, or "*.name" for that device in every node of a
// multi-node machine (plain "name" on a one-node machine). Error when none matches.
std::vector<std::string> match_devices(const topo::Topology& t, const std::string& pattern);

}  // namespace ccsim
