#include "ccsim/measured_logs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "sim/model.hpp"
#include "sim/text_file.hpp"

namespace ccsim::cli {

namespace {

std::filesystem::path resolve_relative(const std::filesystem::path& base_file, const std::string& p) {
  const std::filesystem::path path(p);
  return path.is_absolute() ? path : base_file.parent_path() / path;
}

}  // namespace

std::vector<LogCase> read_map(const std::string& file) {
  const nlohmann::json j = read_json_file(file);
  auto path = [](const std::string& where, const std::string& key) { return where.empty() ? key : where + "." + key; };
  auto need = [&](const nlohmann::json& o, const std::string& key, const std::string& where, auto type_check,
                  const char* expected) -> const nlohmann::json& {
    if (!o.contains(key)) throw Error(file + ": " + path(where, key) + ": missing (expected " + expected + ")");
    if (!type_check(o[key])) throw Error(file + ": " + path(where, key) + ": expected " + expected);
    return o[key];
  };
  const auto is_string = [](const nlohmann::json& v) { return v.is_string(); };
  auto optional_string = [&](const nlohmann::json& o, const std::string& key, const std::string& where,
                             const char* expected) -> std::optional<std::string> {
    if (!o.contains(key)) return std::nullopt;
    return need(o, key, where, is_string, expected).get<std::string>();
  };
  const auto is_array = [](const nlohmann::json& v) { return v.is_array(); };
  const auto is_int = [](const nlohmann::json& v) { return v.is_number_integer(); };
  const auto is_bool = [](const nlohmann::json& v) { return v.is_boolean(); };
  const std::filesystem::path base(file);
  const std::string logs_dir = need(j, "logs_dir", "", is_string, "a directory, relative to this file").get<std::string>();
  std::vector<LogCase> cases;
  const auto& entries = need(j, "logs", "", is_array, "an array of log entries");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const std::string where = "logs[" + std::to_string(i) + "]";
    LogCase c;
    c.log = (resolve_relative(base, logs_dir) / need(e, "log", where, is_string, "a file name").get<std::string>()).string();
    c.topology.name = need(e, "topo", where, is_string, "a preset or topology file").get<std::string>();
    c.system_class = need(e, "class", where, is_string, "a system class").get<std::string>();
    if (e.contains("nodes")) c.topology.preset.nodes = need(e, "nodes", where, is_int, "an integer").get<int>();
    if (e.contains("gpus_per_node"))
      c.topology.gpus_per_node = need(e, "gpus_per_node", where, is_int, "an integer").get<int>();
    if (e.contains("nics_per_node"))
      c.topology.nics_per_node = need(e, "nics_per_node", where, is_int, "an integer").get<int>();
    if (auto nic = optional_string(e, "nic", where, "a network generation")) c.topology.preset.nic = *nic;
    if (e.contains("gpus_per_thread")) {
      c.gpus_per_thread = need(e, "gpus_per_thread", where, is_int, "an integer").get<int>();
      if (*c.gpus_per_thread < 1) throw Error(file + ": " + where + ".gpus_per_thread: expected 1 or more");
    }
    if (auto set = optional_string(e, "set", where, "\"fit\" or \"holdout\"")) {
      c.set = *set;
      if (c.set != "fit" && c.set != "holdout") throw Error(file + ": " + where + ".set: expected \"fit\" or \"holdout\"");
    }
    if (e.contains("healthy")) c.healthy = need(e, "healthy", where, is_bool, "true or false").get<bool>();
    if (e.contains("slow")) c.slow = need(e, "slow", where, is_bool, "true or false").get<bool>();
    if (auto algo = optional_string(e, "algo", where, "an algorithm name, as NCCL_ALGO set it")) c.algorithm = *algo;
    if (auto proto = optional_string(e, "proto", where, "a protocol, as NCCL_PROTO set it")) c.protocol = *proto;
    if (auto model = optional_string(e, "model", where, "a built-in model's name")) {
      try {
        Model::builtin(*model);
      } catch (const Error& err) {
        throw Error(file + ": " + where + ".model: " + err.what());
      }
      c.model = *model;
    }
    if (auto note = optional_string(e, "note", where, "text")) c.note = *note;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string default_model_name(const PreparedLog& p) {
  return p.c.model.empty() ? Model::builtin_name_for(p.topology.gpu_arch(), p.log.nccl_version) : p.c.model;
}

// Measured time of a row, from the chosen column; summary tables carry only busbw.
std::optional<MeasuredTime> measured_time(const MeasuredRow& row, const std::string& column, CollectiveKind kind, int ranks) {
  const bool want_in_place = column == "in-place";
  const auto& point = want_in_place ? row.in_place : row.out_of_place;
  const auto& other = want_in_place ? row.out_of_place : row.in_place;
  const auto& p = point ? point : other;  // a log with one column: use it
  if (!p) return std::nullopt;
  const bool in_place = point ? want_in_place : !want_in_place;
  if (p->has_time && p->time_us > 0) return MeasuredTime{p->time_us, in_place};
  const double algbw = p->busbw_gbps / bus_bandwidth_factor(kind, ranks);
  if (algbw <= 0) return std::nullopt;
  return MeasuredTime{static_cast<double>(row.size) / (algbw * 1e3), in_place};
}

LogCase log_case(const std::string& log, const TopologyArgs& topology, const std::string& algorithm,
                 const std::string& protocol) {
  LogCase c;
  c.log = log;
  c.topology = topology;
  c.system_class = topology.name;
  c.algorithm = algorithm;
  c.protocol = protocol;
  return c;
}

PreparedLog prepare_log(const LogCase& c, const std::string& column, Bytes min_size, Bytes max_size) {
  PreparedLog p;
  p.c = c;
  p.log = read_nccl_log(c.log);
  for (const auto& problem : p.log.problems)
    std::cerr << "ccsim: warning: " << c.log << ":" << problem.line << ": " << problem.why << ": " << problem.text << "\n";
  if (!p.log.collective) throw Error(c.log + ": cannot tell which collective it measured");
  p.topology = build_topology(c.topology);
  const int gpus = static_cast<int>(p.topology.gpu_count());
  p.ranks = p.log.ranks.value_or(gpus);
  if (p.ranks > gpus || (p.ranks < gpus && p.topology.gpus_per_node() < gpus))
    throw Error(c.log + ": the log has " + std::to_string(p.ranks) + " ranks; topology " + p.topology.name() + " has " +
                std::to_string(gpus) + " GPUs (set --nodes / --gpus-per-node to match)");
  if (p.log.gpus_per_thread && c.gpus_per_thread && *p.log.gpus_per_thread != *c.gpus_per_thread)
    throw Error(c.log + ": the map says gpus_per_thread " + std::to_string(*c.gpus_per_thread) + ", the log's " +
                p.log.gpus_per_thread_source + " says " + std::to_string(*p.log.gpus_per_thread));
  p.gpus_per_thread = p.log.gpus_per_thread.value_or(c.gpus_per_thread.value_or(1));
  p.iters = p.log.iters.value_or(kNcclTestsIters);
  const CollectiveKind kind = *p.log.collective;
  for (const auto& row : p.log.rows) {
    if (row.size == 0 || row.size < min_size || row.size > max_size) continue;
    const auto measured = measured_time(row, column, kind, p.ranks);
    if (!measured) continue;
    MeasuredCall m;
    m.spec.kind = kind;
    m.spec.type = parse_data_type(row.type.empty() ? "float" : row.type);
    m.spec.op = is_reduction(kind) && !row.redop.empty() && row.redop != "none" ? parse_reduce_op(row.redop) : ReduceOp::sum;
    m.spec.root = std::max(0, row.root.value_or(0));
    m.spec.nranks = p.ranks;
    // nccl-tests' size is what ccsim's count means (per rank, or the total for the block
    // collectives); the old layout printed per-rank counts even for those, so trust the size.
    m.spec.count = count_for_size(kind, m.spec.type, row.size, p.ranks);
    if (m.spec.count == 0) continue;
    m.size = m.spec.size_bytes();
    m.measured_us = measured->us;
    m.in_place = measured->in_place;
    p.calls.push_back(m);
  }
  return p;
}

}  // namespace ccsim::cli
