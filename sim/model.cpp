#include "sim/model.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/embedded_configs.hpp"
#include "sim/error.hpp"
#include "sim/schedule.hpp"
#include "sim/text_file.hpp"

namespace ccsim {

std::string_view to_string(LatencyClass c) {
  switch (c) {
    case LatencyClass::nvlink: return "nvlink";
    case LatencyClass::pcie: return "pcie";
    case LatencyClass::net: return "net";
  }
  return "?";
}

std::string hop_latency_parameter(LatencyClass c, Protocol p, bool tree) {
  return "hop_latency_us." + std::string(to_string(c)) + "." + std::string(to_string(p)) + (tree ? ".tree" : "");
}

const std::vector<ParameterSpec>& model_parameter_specs() {
  static const std::vector<ParameterSpec> specs = [] {
    std::vector<ParameterSpec> v;
    for (auto p : all_protocols()) {
      const std::string proto(to_string(p));
      v.push_back({"launch_latency_us." + proto, "us", "fixed cost of one collective call"});
      for (auto c : {LatencyClass::nvlink, LatencyClass::pcie, LatencyClass::net}) {
        v.push_back({hop_latency_parameter(c, p), "us", "latency of one step over a route of this class"});
        v.push_back({hop_latency_parameter(c, p, true), "us",
                     "latency of one step of the tree algorithm over a route of this class"});
      }
      v.push_back({"channel_bandwidth_gbps." + proto, "GB/s",
                   "most one channel (thread block) moves on its own; 0 means no cap"});
      v.push_back({"chunk_bytes." + proto, "B", "data per pipelined ring step of one channel"});
    }
    v.push_back({"gpu_bandwidth_gbps.ll", "GB/s",
                 "what all of a GPU's thread blocks running LL share (0: no shared limit): with n blocks, "
                 "each moves 1 / (1 / channel_bandwidth_gbps.ll + n / this)"});
    v.push_back({"gpu_max_bandwidth_gbps.ll", "GB/s",
                 "the most all of a GPU's thread blocks running LL move together (0: no cap): with n blocks, each "
                 "moves at most this / n"});
    v.push_back({"gpu_max_bandwidth_gbps.ll128", "GB/s",
                 "the most all of a GPU's thread blocks running LL128 move together (0: no cap): with n blocks, "
                 "each moves at most this / n"});
    v.push_back({"channel_bandwidth_gbps.ll.net", "GB/s",
                 "most one thread block moves with LL to a GPU of another node (0: no cap beyond "
                 "channel_bandwidth_gbps.ll): NCCL keeps a network connection's LL send buffer in host memory, "
                 "so the block stores its lines over PCIe"});
    v.push_back({"channel_bandwidth_gbps.ll.net.p2p", "GB/s",
                 "the same for a point-to-point operation's block (sendrecv, alltoall, gather, scatter), which "
                 "only copies its part into the lines where a tree's block also receives and reduces"});
    v.push_back({"p2p_block_memory_gbps", "GB/s",
                 "bytes of loads and stores one thread block of a point-to-point (send/recv) kernel issues per "
                 "second (0: no cap): a block that sends one peer's part and receives another's loads and stores "
                 "each byte on both sides, so it moves a quarter of this each way; a collective's block copies the last "
                 "slice of its last receive out of a FIFO at it too"});
    v.push_back({"collective_block_memory_gbps", "GB/s",
                 "the same for one thread block of a ring or tree collective with Simple (0: no cap; the links "
                 "bound it): what it loads and stores per byte it sends sets the most it sends; a tree's "
                 "non-root block has it on the share of its threads that reduce up or broadcast down"});
    v.push_back({"nvlink_direct_hop_saving_us", "us",
                 "how much less a step's NVLink latency is over a lane between two GPUs than through an "
                 "NVSwitch (NCCL's NVLink latencies are those of NVSwitch systems)"});
    v.push_back({"hop_latency_us.net.simple.nvls_tree", "us",
                 "latency of one network step of the NVLS-tree algorithm (its tree between nodes)"});
    v.push_back({"hop_latency_us.nvlink.simple.nvls", "us",
                 "latency of one step of the NVLS and NVLS-tree kernels through the NVSwitch: a chunk handed "
                 "from the GPUs' scatter warps to the switch reduction and on to the gather warps"});
    v.push_back({"hop_latency_us.net.ll.p2p", "us",
                 "latency of one point-to-point operation's LL message to a GPU of another node (sendrecv, "
                 "alltoall, gather, scatter): what NCCL's proxy spends on each such operation"});
    v.push_back({"launch_latency_us.nvls", "us",
                 "fixed cost of one NVLS or NVLS-tree call, in place of the Simple protocol's: its kernels split "
                 "their warps into scatter, reduce and gather roles that hand every chunk over through the "
                 "switch's buffers"});
    v.push_back({"block_setup_us", "us",
                 "set-up time of each thread block (channel) of a collective kernel, on top of the launch "
                 "latency: a call of k blocks costs k times this more (NCCL 2.7-2.8 on A100; later NCCL: 0)"});
    v.push_back({"nvlink_efficiency", "fraction", "share of NVLink signalling rate that carries data"});
    v.push_back({"nvswitch_efficiency", "fraction",
                 "share of that data rate a lane into or out of an NVSwitch keeps (1: a switched lane carries "
                 "what a lane between two GPUs does)"});
    v.push_back({"pcie_efficiency", "fraction", "share of PCIe signalling rate that carries data"});
    v.push_back({"net_efficiency", "fraction", "share of a network port's rate that carries data (Ethernet: RoCE, EFA, Slingshot)"});
    v.push_back({"net_efficiency.infiniband", "fraction", "the same for an InfiniBand port"});
    v.push_back({"nvls_efficiency", "fraction",
                 "NVLS multimem loads and stores move data at this share of what plain NVLink writes move"});
    v.push_back({"nvls_efficiency.tree", "fraction",
                 "the same inside an NVLS-tree call (across nodes): NCCL's kernel splits each channel's warps "
                 "among more roles there (a non-root head also receives from the network and broadcasts), "
                 "leaving fewer to copy into and out of the switch's buffers (src/device/all_reduce.h)"});
    v.push_back({"cpu_p2p_bandwidth_factor", "fraction",
                 "GPU-to-GPU traffic through an Intel (or other) CPU runs at this share of its narrowest link"});
    v.push_back({"cpu_p2p_bandwidth_factor.amd", "fraction", "the same through an AMD CPU"});
    v.push_back({"shm_bandwidth_factor", "fraction",
                 "A GPU loads from host memory (NCCL's SHM transport without PCIe P2P; network receives without "
                 "GPUDirect RDMA) at this share of its link, whatever peers the data comes from"});
    v.push_back({"hbm_bandwidth_gbps", "GB/s", "GPU memory bandwidth available to reduce and copy steps"});
    v.push_back({"channels", "count", "channels used when the command line does not say"});
    v.push_back({"net_post_overhead_us", "us",
                 "GPU-side time of a network step on an Intel (or other) host: a sending stream holds at least "
                 "this long before its next step (Simple: 3x); what exceeds the NVLink hop latency is NCCL's "
                 "proxy posting the step, which does not delay the next of calls run back to back"});
    v.push_back({"net_post_overhead_us.amd", "us", "the same on an AMD host"});
    v.push_back({"host_issue_us", "us",
                 "host time to issue one rank's collective call (NCCL enqueue and kernel launch): a thread "
                 "driving G GPUs issues a call at most every G times this"});
    v.push_back({"host_channel_us", "us",
                 "host time per channel of a rank's collective call (NCCL's enqueue writes every channel's work "
                 "for the kernel): a call of c channels costs host_issue_us + c x this per GPU"});
    v.push_back({"host_p2p_op_us", "us",
                 "host time to enqueue one point-to-point operation (ncclSend or ncclRecv) of a call: "
                 "nccl-tests issues alltoall, gather, scatter and sendrecv as such operations, each paid on "
                 "top of host_issue_us"});
    return v;
  }();
  return specs;
}

std::string unknown_parameter_advice(const std::string& name) {
  static const std::map<std::string, std::string> renamed = {  // old name, present name
      {"ring_block_memory_gbps", "collective_block_memory_gbps"}};
  if (const auto it = renamed.find(name); it != renamed.end()) return "now named " + it->second;
  return "`ccsim model hopper` lists every parameter";
}

const ParameterSpec* find_parameter_spec(const std::string& name) {
  for (const auto& s : model_parameter_specs())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> Model::builtin_names() {
  std::vector<std::string> names;
  for (const auto& f : embedded_configs())
    if (f.path.starts_with("models/") && f.path.ends_with(".json"))
      names.emplace_back(f.path.substr(7, f.path.size() - 12));
  return names;
}

Model Model::builtin(const std::string& name) {
  for (const auto& f : embedded_configs())
    if (f.path == "models/" + name + ".json")
      return from_json(parse_json(std::string(f.content), "configs/" + std::string(f.path)),
                       "configs/" + std::string(f.path));
  std::string known;
  for (const auto& n : builtin_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown model \"" + name + "\" (built-in models: " + known + ")");
}

std::string Model::builtin_name_for(const std::string& family, const std::string& nccl_version) {
  // "2.26.6" -> "2.26"
  const auto first = nccl_version.find('.');
  const auto second = first == std::string::npos ? std::string::npos : nccl_version.find('.', first + 1);
  const std::string release = nccl_version.substr(0, second);
  if (!nccl_version.empty())
    for (const auto& name : builtin_names()) {
      const Model m = builtin(name);
      if (m.nccl_family_ == family && std::find(m.nccl_releases_.begin(), m.nccl_releases_.end(), release) != m.nccl_releases_.end())
        return name;
    }
  return family;
}

std::vector<std::pair<std::string, std::vector<std::string>>> Model::release_models(const std::string& family) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& name : builtin_names()) {
    const Model m = builtin(name);
    if (m.nccl_family_ == family && !m.nccl_releases_.empty()) out.emplace_back(name, m.nccl_releases_);
  }
  return out;
}

Model Model::load_file(const std::string& path) { return from_json(parse_json(read_text_file(path), path), path); }

Model Model::named(const std::string& name_or_path) {
  const bool file = name_or_path.ends_with(".json") || name_or_path.find('/') != std::string::npos;
  return file ? load_file(name_or_path) : builtin(name_or_path);
}

Model Model::from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw Error(origin + ": expected a JSON object at the top level");
  Model m;
  if (j.contains("base")) {
    if (!j["base"].is_string()) throw Error(origin + ": base: expected the name of a built-in model");
    m = builtin(j["base"].get<std::string>());
  }
  m.nccl_family_.clear();
  m.nccl_releases_.clear();
  if (j.contains("for_nccl")) {
    const auto& f = j["for_nccl"];
    const std::string where = origin + ": for_nccl";
    if (!f.is_object() || !f.contains("family") || !f["family"].is_string() || !f.contains("releases") ||
        !f["releases"].is_array() || f["releases"].empty())
      throw Error(where + ": expected {\"family\": a GPU family, \"releases\": [\"2.26\", ...]}");
    m.nccl_family_ = f["family"].get<std::string>();
    for (const auto& r : f["releases"]) {
      if (!r.is_string()) throw Error(where + ".releases: expected strings such as \"2.26\"");
      m.nccl_releases_.push_back(r.get<std::string>());
    }
  }
  if (j.contains("name")) {
    if (!j["name"].is_string()) throw Error(origin + ": name: expected a string");
    m.name_ = j["name"].get<std::string>();
  }
  if (j.contains("description")) {
    if (!j["description"].is_string()) throw Error(origin + ": description: expected a string");
    m.description_ = j["description"].get<std::string>();
  }
  if (!j.contains("parameters") || !j["parameters"].is_object())
    throw Error(origin + ": parameters: expected an object of {\"value\", \"unit\", \"source\"} entries");
  for (const auto& [key, entry] : j["parameters"].items()) {
    const std::string path = origin + ": parameters." + key;
    const ParameterSpec* spec = find_parameter_spec(key);
    if (!spec) throw Error(path + ": unknown parameter (" + unknown_parameter_advice(key) + ")");
    if (!entry.is_object()) throw Error(path + ": expected an object with value, unit and source");
    if (!entry.contains("value") || !entry["value"].is_number())
      throw Error(path + ".value: expected a number");
    if (!entry.contains("source") || !entry["source"].is_string() || entry["source"].get<std::string>().empty())
      throw Error(path + ".source: expected a non-empty string saying where the value comes from");
    const std::string unit = entry.value("unit", spec->unit);
    if (unit != spec->unit) throw Error(path + ".unit: expected \"" + spec->unit + "\", found \"" + unit + "\"");
    const double value = entry["value"].get<double>();
    if (value < 0) throw Error(path + ".value: expected a non-negative number");
    // A fraction of a link or a memory the machine keeps: none of it would stop every transfer.
    if (spec->unit == "fraction" && !(value > 0 && value <= 1))
      throw Error(path + ".value: expected a fraction above 0 and at most 1");
    if (key == "hbm_bandwidth_gbps" && value <= 0) throw Error(path + ".value: expected a bandwidth above 0");
    m.parameters_[key] = {value, unit, entry["source"].get<std::string>()};
  }
  m.check_complete(origin);
  if (m.get("channels") < 1) throw Error(origin + ": parameters.channels.value: expected at least 1");
  for (auto p : all_protocols())
    if (m.chunk_bytes(p) == 0)
      throw Error(origin + ": parameters.chunk_bytes." + std::string(to_string(p)) + ".value: expected at least 1");
  return m;
}

void Model::check_complete(const std::string& origin) const {
  for (const auto& s : model_parameter_specs())
    if (!parameters_.count(s.name))
      throw Error(origin + ": parameters." + s.name + ": missing (" + s.meaning + ", in " + s.unit + ")");
}

double Model::get(const std::string& parameter) const {
  auto it = parameters_.find(parameter);
  if (it == parameters_.end()) throw Error("model " + name_ + " has no parameter " + parameter);
  return it->second.value;
}

void Model::set(const std::string& parameter, double value, const std::string& source) {
  const ParameterSpec* spec = find_parameter_spec(parameter);
  if (!spec) throw Error("unknown model parameter " + parameter);
  // Nothing passes a link at none of its rate: the engine would wait forever.
  if (!(value >= 0) || ((spec->unit == "fraction" || parameter == "hbm_bandwidth_gbps") && value <= 0))
    throw Error("model parameter " + parameter + " = " + std::to_string(value) + " (" + source + "): expected " +
                (spec->unit == "fraction" ? "a fraction above 0" : parameter == "hbm_bandwidth_gbps" ? "a bandwidth above 0" : "a number >= 0"));
  parameters_[parameter] = {value, spec->unit, source};
}

double Model::host_issue_s(int gpus_per_thread, int p2p_ops, int channels) const {
  const double per_gpu = get("host_issue_us") + get("host_channel_us") * std::max(0, channels);
  return (per_gpu * std::max(1, gpus_per_thread) + get("host_p2p_op_us") * std::max(0, p2p_ops)) * 1e-6;
}

double Model::launch_latency_s(Protocol p) const {
  return get("launch_latency_us." + std::string(to_string(p))) * 1e-6;
}

double Model::nvls_launch_latency_s() const { return get("launch_latency_us.nvls") * 1e-6; }

double Model::step_latency_s(LatencyClass c, Protocol p, std::string_view algorithm) const {
  if (algorithm == "nvls_tree" && c == LatencyClass::net && p == Protocol::simple)
    return get("hop_latency_us.net.simple.nvls_tree") * 1e-6;
  if (is_point_to_point_kernel(algorithm) && c == LatencyClass::net && p == Protocol::ll)
    return get("hop_latency_us.net.ll.p2p") * 1e-6;
  if ((algorithm == "nvls" || algorithm == "nvls_tree") && c == LatencyClass::nvlink && p == Protocol::simple)
    return get("hop_latency_us.nvlink.simple.nvls") * 1e-6;
  return hop_latency_s(c, p, algorithm == "tree");
}

double Model::hop_latency_s(LatencyClass c, Protocol p, bool tree) const {
  return get(hop_latency_parameter(c, p, tree)) * 1e-6;
}

double Model::channel_bandwidth_bytes_per_s(Protocol p) const {
  return get("channel_bandwidth_gbps." + std::string(to_string(p))) * 1e9;
}

Bytes Model::chunk_bytes(Protocol p) const {
  return static_cast<Bytes>(get("chunk_bytes." + std::string(to_string(p))));
}

nlohmann::json Model::to_json() const {
  nlohmann::json j{{"name", name_}, {"description", description_}};
  if (!nccl_family_.empty()) j["for_nccl"] = {{"family", nccl_family_}, {"releases", nccl_releases_}};
  auto& params = j["parameters"] = nlohmann::json::object();
  for (const auto& [key, p] : parameters_) params[key] = {{"value", p.value}, {"unit", p.unit}, {"source", p.source}};
  return j;
}

}  // namespace ccsim
