#pragma once
// The timing model: every constant the engine uses to turn a schedule into time, each with a name,
// a unit, a value and the source it comes from. Models live in configs/models/*.json (compiled in);
// a user file may start from one ("base") and override any parameter.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/protocol.hpp"
#include "sim/units.hpp"

namespace ccsim {

// Latency classes of a route: the slowest kind of link it crosses decides the per-hop latency.
enum class LatencyClass { nvlink, pcie, net };
std::string_view to_string(LatencyClass c);
// The model parameter holding one step's latency: "hop_latency_us.<class>.<protocol>", with
// ".tree" for the tree algorithm's row.
std::string hop_latency_parameter(LatencyClass c, Protocol p, bool tree = false);

struct Parameter {
  double value = 0;
  std::string unit;
  std::string source;
};

struct ParameterSpec {
  std::string name;
  std::string unit;
  std::string meaning;
};
// Every parameter a complete model defines.
const std::vector<ParameterSpec>& model_parameter_specs();
// The spec of the parameter named `name`; nullptr where no model has one.
const ParameterSpec* find_parameter_spec(const std::string& name);
// What to tell someone who named a parameter no model has: its present name where it was renamed,
// else where every name is listed.
std::string unknown_parameter_advice(const std::string& name);

class Model {
 public:
  // A model shipped in configs/models (e.g. "hopper").
  static Model builtin(const std::string& name);
  static std::vector<std::string> builtin_names();
  // A JSON file; `origin` names it in error messages.
  static Model load_file(const std::string& path);
  // A built-in model's name ("ampere-nccl2.8"), or a JSON file's path (ends in .json or has a /).
  static Model named(const std::string& name_or_path);
  static Model from_json(const nlohmann::json& j, const std::string& origin);
  // The built-in model of GPU `family` under NCCL `nccl_version` ("2.26.6"): the one whose
  // "for_nccl" names that family and the release's major.minor (e.g. ampere-nccl2.8 for 2.7-2.8),
  // else the family's own. NCCL releases change kernels, not only tuning.
  static std::string builtin_name_for(const std::string& family, const std::string& nccl_version);
  // The built-in models that stand for older NCCL releases of GPU `family`: each name with the
  // releases its "for_nccl" lists ("2.7", "2.8").
  static std::vector<std::pair<std::string, std::vector<std::string>>> release_models(const std::string& family);

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }

  double get(const std::string& parameter) const;
  const std::map<std::string, Parameter>& parameters() const { return parameters_; }
  void set(const std::string& parameter, double value, const std::string& source);

  // Per-call cost paid once (kernel launch and set-up), added to the simulated makespan.
  double launch_latency_s(Protocol p) const;
  // The same for a call of NVLS kernels (NVLS, NVLS-tree), which run Simple steps.
  double nvls_launch_latency_s() const;
  // Host time one thread spends issuing a call of `channels` channels to each of its GPUs
  // (nccl-tests -g), plus each point-to-point operation it enqueues for them. nccl-tests issues its
  // iterations back to back and the GPUs queue them, so a call lasts at least this long however
  // fast the GPUs finish it.
  double host_issue_s(int gpus_per_thread, int p2p_ops = 0, int channels = 0) const;
  // Latency charged before each send, by the route's latency class; NCCL's tree steps have their
  // own (its hwLat table has a row per algorithm).
  double hop_latency_s(LatencyClass c, Protocol p, bool tree = false) const;
  // The latency of one step of `algorithm` (a registry name): NCCL's hwLat table has a row for
  // the tree and one for NVLS-tree's Simple network steps; a point-to-point operation's LL message
  // to another node has its own (the proxy's cost per operation), and so do the NVLS and NVLS-tree
  // kernels' Simple steps through the switch (their cost per chunk); every other step takes the ring's.
  double step_latency_s(LatencyClass c, Protocol p, std::string_view algorithm) const;
  // Fraction of a link's signalling rate that carries data (protocol headers, flow control).
  double nvlink_efficiency() const { return get("nvlink_efficiency"); }
  // A lane to an NVSwitch carries nvlink_efficiency x this: the switch hop's own loss.
  double nvswitch_efficiency() const { return get("nvswitch_efficiency"); }
  double pcie_efficiency() const { return get("pcie_efficiency"); }
  double net_efficiency(bool infiniband = false) const {
    return get(infiniband ? "net_efficiency.infiniband" : "net_efficiency");
  }
  double cpu_p2p_bandwidth_factor(bool amd_cpu = false) const {
    return get(amd_cpu ? "cpu_p2p_bandwidth_factor.amd" : "cpu_p2p_bandwidth_factor");
  }
  // A channel is one thread block; it cannot drive more than this on its own. 0: no cap.
  double channel_bandwidth_bytes_per_s(Protocol p) const;
  double hbm_bandwidth_bytes_per_s() const { return get("hbm_bandwidth_gbps") * 1e9; }
  int default_channels() const { return static_cast<int>(get("channels")); }
  Bytes chunk_bytes(Protocol p) const;

  nlohmann::json to_json() const;

 private:
  void check_complete(const std::string& origin) const;
  std::string name_;
  std::string description_;
  std::map<std::string, Parameter> parameters_;
  // "for_nccl": the GPU family and NCCL releases ("2.26") this model stands for; not inherited.
  std::string nccl_family_;
  std::vector<std::string> nccl_releases_;
};

}  // namespace ccsim
