#include "kernels/bench_model.hpp"

#include <cstdio>

#include "sim/model.hpp"
#include "sim/text_file.hpp"

namespace ccsim::kernels::gpu {

std::string arch_of(int major, int /*minor*/) {
  if (major >= 10) return "blackwell";
  if (major == 9) return "hopper";
  if (major == 8) return "ampere";
  return "volta";
}

namespace {

nlohmann::json points_json(const std::vector<BandwidthPoint>& points) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& p : points) a.push_back({{"bytes", p.bytes}, {"seconds", p.seconds}, {"gbps", p.gbps}});
  return a;
}

// "file.json:" + "device" reads "file.json: device"; "file.json: bench" + "device" reads
// "file.json: bench.device".
std::string join(const std::string& path, const std::string& key) {
  return !path.empty() && path.back() == ':' ? path + " " + key : path + "." + key;
}

const nlohmann::json& field(const nlohmann::json& j, const std::string& key, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) throw Error(join(path, key) + ": missing");
  return j.at(key);
}

double number(const nlohmann::json& j, const std::string& key, const std::string& path) {
  const auto& v = field(j, key, path);
  if (!v.is_number()) throw Error(join(path, key) + ": expected a number");
  return v.get<double>();
}

std::vector<BandwidthPoint> points_from(const nlohmann::json& j, const std::string& path) {
  if (!j.is_array()) throw Error(path + ": expected an array of {bytes, seconds, gbps}");
  std::vector<BandwidthPoint> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    out.push_back({static_cast<std::uint64_t>(number(j[i], "bytes", p)), number(j[i], "seconds", p), number(j[i], "gbps", p)});
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

nlohmann::json to_json(const BenchResult& b) {
  nlohmann::json j;
  j["device"] = {{"index", b.device.index},
                 {"name", b.device.name},
                 {"compute_capability", std::to_string(b.device.cc_major) + "." + std::to_string(b.device.cc_minor)},
                 {"memory_bytes", b.device.memory_bytes},
                 {"multiprocessors", b.device.multiprocessors},
                 {"pci_bus_id", b.device.pci_bus_id},
                 {"memory_bandwidth_gbps", b.device.memory_bandwidth_gbps},
                 {"l2_bytes", b.device.l2_bytes}};
  j["copy"] = points_json(b.copy);
  j["copy_kernel"] = points_json(b.copy_kernel);
  j["reduce_copy"] = nlohmann::json::array();
  for (const auto& r : b.reduce_copy)
    j["reduce_copy"].push_back({{"type", std::string(to_string(r.type))}, {"points", points_json(r.points)}});
  j["launch_us"] = b.launch_us;
  j["event_us"] = b.event_us;
  j["step_us"] = b.step_us;
  j["peers"] = nlohmann::json::array();
  for (const auto& p : b.peers)
    j["peers"].push_back({{"from", p.from}, {"to", p.to}, {"link_class", p.link_class}, {"latency_us", p.latency_us}, {"gbps", p.gbps}});
  return j;
}

BenchResult bench_from_json(const nlohmann::json& j, const std::string& origin) {
  BenchResult b;
  const auto& d = field(j, "device", origin);
  b.device.index = static_cast<int>(number(d, "index", join(origin, "device")));
  if (!field(d, "name", join(origin, "device")).is_string()) throw Error(join(origin, "device.name") + ": expected a string");
  b.device.name = d["name"].get<std::string>();
  const auto& cc = field(d, "compute_capability", join(origin, "device"));
  if (!cc.is_string() || std::sscanf(cc.get<std::string>().c_str(), "%d.%d", &b.device.cc_major, &b.device.cc_minor) != 2)
    throw Error(join(origin, "device.compute_capability") + ": expected \"major.minor\"");
  b.device.multiprocessors = static_cast<int>(number(d, "multiprocessors", join(origin, "device")));
  if (d.contains("l2_bytes")) {  // files from before it was recorded have none
    const double l2 = number(d, "l2_bytes", join(origin, "device"));
    if (l2 < 0) throw Error(join(origin, "device.l2_bytes") + ": expected a size in bytes (0: not known), got " + d["l2_bytes"].dump());
    b.device.l2_bytes = static_cast<std::uint64_t>(l2);
  }
  b.copy = points_from(field(j, "copy", origin), join(origin, "copy"));
  b.copy_kernel = points_from(field(j, "copy_kernel", origin), join(origin, "copy_kernel"));
  const auto& rc = field(j, "reduce_copy", origin);
  if (!rc.is_array()) throw Error(join(origin, "reduce_copy") + ": expected an array");
  for (std::size_t i = 0; i < rc.size(); ++i) {
    const std::string p = join(origin, "reduce_copy[" + std::to_string(i) + "]");
    ReduceCopyBench r;
    if (!field(rc[i], "type", p).is_string()) throw Error(p + ".type: expected a data type name");
    r.type = parse_data_type(rc[i]["type"].get<std::string>());
    r.points = points_from(field(rc[i], "points", p), p + ".points");
    b.reduce_copy.push_back(r);
  }
  b.launch_us = number(j, "launch_us", origin);
  b.event_us = number(j, "event_us", origin);
  b.step_us = number(j, "step_us", origin);
  if (j.contains("peers")) {
    if (!j["peers"].is_array()) throw Error(join(origin, "peers") + ": expected an array");
    for (std::size_t i = 0; i < j["peers"].size(); ++i) {
      const std::string p = join(origin, "peers[" + std::to_string(i) + "]");
      const auto& e = j["peers"][i];
      PeerBench pb;
      pb.from = static_cast<int>(number(e, "from", p));
      pb.to = static_cast<int>(number(e, "to", p));
      pb.link_class = e.value("link_class", "");
      pb.latency_us = number(e, "latency_us", p);
      pb.gbps = number(e, "gbps", p);
      b.peers.push_back(pb);
    }
  }
  if (b.copy_kernel.empty() || b.reduce_copy.empty() || b.reduce_copy.front().points.empty())
    throw Error(origin + ": the bench has no copy or reduce-copy measurement");
  return b;
}

nlohmann::json model_from_bench(const BenchResult& b) {
  const std::string arch = arch_of(b.device.cc_major, b.device.cc_minor);
  const std::string where = "ccsim gpu bench on " + b.device.name + " (device " + std::to_string(b.device.index) + ")";
  nlohmann::json params = nlohmann::json::object();
  auto set = [&](const std::string& name, double value, const std::string& unit, const std::string& how) {
    params[name] = {{"value", value}, {"unit", unit}, {"source", where + ": " + how}};
  };
  // The engine charges a reduce-copy its bytes read plus written at this rate.
  const ReduceCopyBench* fp32 = &b.reduce_copy.front();
  for (const auto& r : b.reduce_copy)
    if (r.type == DataType::fp32) fp32 = &r;
  const BandwidthPoint& big = fp32->points.back();
  set("hbm_bandwidth_gbps", big.gbps, "GB/s",
      "2-source " + std::string(to_string(fp32->type)) + " sum reduce-copy of " + std::to_string(big.bytes >> 20) +
          " MiB, bytes read plus written per second");
  for (const char* p : {"simple", "ll", "ll128"})
    set(std::string("launch_latency_us.") + p, b.launch_us, "us", "one kernel launch, back to back in a stream");
  for (auto cls : {LatencyClass::nvlink, LatencyClass::pcie})
    for (auto p : all_protocols())
      for (bool tree : {false, true})
        set(hop_latency_parameter(cls, p, tree), b.step_us, "us",
            "one dependent step of the CUDA executor (a small copy kernel and an event hand-off to another stream, in a CUDA graph)");
  nlohmann::json not_measured = nlohmann::json::array();
  const std::vector<std::string> measured{"hbm_bandwidth_gbps", "launch_latency_us", "hop_latency_us"};
  for (const auto& spec : model_parameter_specs()) {
    bool hit = false;
    for (const auto& m : measured) hit = hit || spec.name.rfind(m, 0) == 0;
    if (!hit) not_measured.push_back(spec.name);
  }
  nlohmann::json j;
  j["base"] = arch;
  j["name"] = "gpu-bench-" + arch;
  j["description"] = "Measured by " + where + "; parameters in not_measured keep the " + arch + " model's values. Copy kernel " +
                     fixed(b.copy_kernel.back().gbps, 1) + " GB/s, reduce-copy " + fixed(big.gbps, 1) +
                     " GB/s (bytes read plus written).";
  j["parameters"] = params;
  j["not_measured"] = not_measured;
  j["bench"] = to_json(b);
  return j;
}

BenchResult read_bench_file(const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  if (j.is_object() && j.contains("bench")) return bench_from_json(j["bench"], path + ": bench");
  return bench_from_json(j, path + ":");
}

}  // namespace ccsim::kernels::gpu
