#include "ccsim/measured_logs.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "ccsim/log_machine.hpp"

#include "sim/error.hpp"
#include "sim/model.hpp"
#include "sim/nccl_system.hpp"
#include "sim/nccl_tuning.hpp"
#include "sim/protocol.hpp"
#include "sim/text.hpp"
#include "sim/text_file.hpp"

namespace ccsim::cli {

namespace {

std::filesystem::path resolve_relative(const std::filesystem::path& base_file, const std::string& p) {
  const std::filesystem::path path(p);
  return path.is_absolute() ? path : base_file.parent_path() / path;
}

Error bad_run(const std::string& shown, const std::string& what) {
  return Error((what.empty() ? "" : what + " ") + shown + ": expected the run of a file holding several (1 for the first), or all");
}

// --run / a map entry's "run": a run (1-based), 0 for all, nothing where not given. `shown`: the
// value as its source wrote it, for the error (default: the text, quoted).
std::optional<int> parse_run(const std::string& text, const std::string& what, const std::string& shown = "") {
  if (text.empty()) return std::nullopt;
  if (text == "all") return 0;
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1)
    throw bad_run(shown.empty() ? "\"" + text + "\"" : shown, what);
  return n;
}

// The case for the run asked for, or one case per run of the file for all.
void push_runs(std::vector<LogCase>& cases, LogCase c, std::optional<int> run) {
  if (!run || *run > 0) {
    c.run = run;
    cases.push_back(std::move(c));
    return;
  }
  // all: each run of the file a case of its own (the file read once here, to count them).
  std::istringstream in(read_text_file(c.log));
  const int runs = static_cast<int>(parse_nccl_log(in, c.log).run_starts.size()) + 1;
  for (int k = 1; k <= runs; ++k) {
    LogCase one = c;
    if (runs > 1) one.run = k;
    cases.push_back(std::move(one));
  }
}

}  // namespace

Error only_names_nothing(const std::string& only, const std::string& file) {
  return Error("--only \"" + only + "\": no entry of " + file + " names a log whose path contains it");
}

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
  // Without logs_dir, log paths are relative to the map file's own directory.
  const std::string logs_dir =
      j.contains("logs_dir") ? need(j, "logs_dir", "", is_string, "a directory, relative to this file").get<std::string>() : ".";
  std::vector<LogCase> cases;
  const auto& entries = need(j, "logs", "", is_array, "an array of log entries");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const std::string where = "logs[" + std::to_string(i) + "]";
    if (e.is_object())
      require_known_keys(e, {"log", "topo", "class", "nodes", "gpus_per_node", "nics_per_node", "nic", "pcie_p2p",
                             "net_gdr_level", "p2p_level", "p2p_pxn_level", "sharp", "gpus_per_thread", "set", "healthy", "slow",
                             "algo", "proto", "model", "nccl", "note", "nccl_env", "run"},
                         file, where);
    LogCase c;
    c.log = (resolve_relative(base, logs_dir) / need(e, "log", where, is_string, "a file name").get<std::string>()).string();
    // Every entry's file is looked for now: not after the entries before it have run for minutes.
    if (std::error_code ec; !std::filesystem::is_regular_file(c.log, ec))
      throw Error(file + ": " + where + ".log: " + std::filesystem::path(c.log).lexically_normal().string() + ": no such file");
    // An entry without "topo" takes the machine its log's device lines name, and one without
    // "nodes" the nodes its log's hosts or file name give, as a LOG on the command line does
    // without --topo or --nodes.
    if (auto topo_name = optional_string(e, "topo", where, "a preset or topology file")) {
      c.topology.name = *topo_name;
      c.topology.name_given = true;
    }
    c.topology.nodes_given = e.contains("nodes");
    c.map_entry = file + ": " + where;
    // Without a class, the machine's name stands for it (as for a LOG on the command line).
    c.system_class = optional_string(e, "class", where, "a system class").value_or(c.topology.name);
    if (e.contains("nodes")) c.topology.preset.nodes = need(e, "nodes", where, is_int, "an integer").get<int>();
    if (e.contains("gpus_per_node"))
      c.topology.gpus_per_node = need(e, "gpus_per_node", where, is_int, "an integer").get<int>();
    if (e.contains("nics_per_node"))
      c.topology.nics_per_node = need(e, "nics_per_node", where, is_int, "an integer").get<int>();
    if (auto nic = optional_string(e, "nic", where, "a network generation")) c.topology.preset.nic = *nic;
    if (e.contains("pcie_p2p")) c.topology.no_pcie_p2p = !need(e, "pcie_p2p", where, is_bool, "true or false").get<bool>();
    if (e.contains("sharp")) c.topology.preset.sharp = need(e, "sharp", where, is_bool, "true or false").get<bool>();
    for (const char* key : {"net_gdr_level", "p2p_level"}) {
      const auto level = optional_string(e, key, where, "LOC, NVL, NVB, PIX, PXB, PHB or SYS");
      if (!level) continue;
      if (!topo::parse_path_level(*level))
        throw Error(file + ": " + where + "." + key + ": expected LOC, NVL, NVB, PIX, PXB, PHB or SYS, got " + *level);
      (std::string(key) == "p2p_level" ? c.topology.p2p_level : c.topology.net_gdr_level) = *level;
    }
    if (e.contains("p2p_pxn_level")) {
      const auto& v = e["p2p_pxn_level"];
      if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() > 2)
        throw Error(file + ": " + where + ".p2p_pxn_level: expected 0, 1 or 2 (NCCL_P2P_PXN_LEVEL)");
      c.topology.p2p_pxn_level = v.get<int>();
    }
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
    if (auto nccl = optional_string(e, "nccl", where, "an NCCL version such as \"2.18.5\"")) {
      if (nccl::release_of(*nccl) == 0) throw Error(file + ": " + where + ".nccl: expected an NCCL 2.x version such as \"2.18.5\", got \"" + *nccl + "\"");
      c.nccl = *nccl;
    }
    if (auto note = optional_string(e, "note", where, "text")) c.note = *note;
    std::optional<int> run;  // 0: all
    if (e.contains("run")) {
      const auto& v = e["run"];
      // --run's values, as JSON has them: a number, or the string "all" (not "2": a number as text).
      const std::string what = file + ": " + where + ".run:";
      if (v.is_number_integer()) run = parse_run(v.dump(), what, v.dump());
      else if (v.is_string() && v.get<std::string>() == "all") run = 0;
      else throw bad_run(v.dump(), what);
    }
    if (e.contains("nccl_env")) {
      const auto& env = need(e, "nccl_env", where, [](const nlohmann::json& v) { return v.is_object(); },
                             "an object of NCCL settings, e.g. {\"NCCL_MAX_NCHANNELS\": 16, \"NCCL_PROTO\": \"^LL128\"}");
      nccl::set_env_settings(c.nccl_env_settings, env, file + ": " + where + ".nccl_env");
    }
    push_runs(cases, std::move(c), run);
  }
  // The same log (and run) in two entries counts its rows twice in every median; said, since two
  // entries may mean to compare two descriptions of the machine.
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (cases[k].log == cases[i].log && cases[k].run == cases[i].run && cases[k].map_entry != cases[i].map_entry) {
        std::cerr << "ccsim: warning: " << cases[i].map_entry << " names " << std::filesystem::path(cases[i].log).filename().string()
                  << (cases[i].run ? " (run " + std::to_string(*cases[i].run) + ")" : std::string()) << " as "
                  << cases[k].map_entry.substr(file.size() + 2) << " does: its rows count twice in the medians\n";
        break;
      }
  return cases;
}

std::string model_release(const PreparedLog& p) {
  if (!p.log.nccl_version.empty()) return p.log.nccl_version;
  // nccl-tests printed a maximum "error" column, not "#wrong", up to the NCCL 2.9 era: every shared
  // log with it states NCCL 2.4-2.8 or is of that era (INDEX.md). NCCL 2.8 stands for them.
  return p.log.error_column ? "2.8" : "";
}

std::string default_model_name(const PreparedLog& p) {
  return p.c.model.empty() ? Model::builtin_name_for(p.topology.gpu_arch(), model_release(p)) : p.c.model;
}

int nccl_release(const PreparedLog& p) { return nccl::release_of(p.c.nccl.empty() ? p.log.nccl_version : p.c.nccl); }

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

std::string overlay_run_choice(const CLI::App& cmd, const std::string& algorithm, const std::string& protocol,
                               LogCase& entry) {
  std::string applied;
  auto set = [&](const char* option, const std::string& value, std::string& field) {
    if (cmd.count(option) == 0) return;
    field = value;
    applied += (applied.empty() ? "" : " ") + std::string(option) + " " + value;
  };
  set("--algo", algorithm, entry.algorithm);
  set("--proto", protocol, entry.protocol);
  return applied;
}

void refuse_map_choices_without_map(const CLI::App& cmd) {
  for (const char* option : {"--only", "--all"})
    if (cmd.count(option) > 0)
      throw Error(std::string(option) + " picks entries of a --map file, and none is given (add --map FILE, or drop " +
                  option + ")");
}

void add_run_choice_options(CLI::App* cmd, std::string& algorithm, std::string& protocol) {
  for (auto [option, field, what, env] : {std::tuple{"--algo", &algorithm, "algorithm", "NCCL_ALGO"},
                                          std::tuple{"--proto", &protocol, "protocol", "NCCL_PROTO"}})
    cmd->add_option(option, *field,
                    std::string("The ") + what + " the run used (auto: NCCL's choice, or what the log's " + env +
                        " forced); with --map, every entry's, over what it says")
        ->capture_default_str();
}

// A CLI11 check that reads the option's text with `parse`, whose Error is the message.
template <class Parse>
auto parsed_by(Parse parse) {
  return [parse](const std::string& text) {
    try {
      (void)parse(text);
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
}

void add_collective_option(CLI::App* cmd, std::string& collective, std::string& run) {
  cmd->add_option("--run", run,
                  "Of LOG files that each hold several nccl-tests runs one after another (say, a pasted session "
                  "of all_reduce_perf then all_gather_perf), the run to compare, 1 for the first, or all: each "
                  "run as a log of its own; such a file without it is an error that lists its runs")
      ->check(parsed_by([](const std::string& text) { return parse_run(text, ""); }));
  cmd->add_option("--collective", collective,
                  "The collective the LOG files measured (all_reduce, all_gather, ...), for logs that do not say: "
                  "no nccl-tests command line, no '# Collective test starting: X_perf' line and no collective in "
                  "the file name (<system>-<gpus>g-<collective>-<n>.log); over what a log says, with a warning")
      ->check(parsed_by([](const std::string& name) { return parse_collective(name); }));
}

std::vector<LogCase> command_line_cases(const CLI::App& cmd, const std::vector<std::string>& logs,
                                        const TopologyArgs& topology, const std::string& algorithm,
                                        const std::string& protocol, const std::string& collective,
                                        const std::string& run) {
  if (logs.empty() && cmd.count("--collective") > 0)
    throw Error("--collective names what the LOG files on the command line measured; a --map entry's log says it "
                "itself (name the LOG files, or drop --collective)");
  if (logs.empty() && !run.empty())
    throw Error("--run picks a run of the LOG files on the command line; a --map entry names its own (\"run\")");
  std::vector<LogCase> cases;
  for (const auto& log : logs) {
    LogCase c = log_case(log, topology, algorithm, protocol);
    c.collective = collective;
    push_runs(cases, std::move(c), parse_run(run, "--run"));
  }
  return cases;
}

PreparedLog prepare_log(const LogCase& c, const std::string& column, Bytes min_size, Bytes max_size) {
  PreparedLog p;
  p.c = c;
  p.log = read_nccl_log(c.log, c.run);
  // A file that is not a log at all (binary, another tool's output) would fill the terminal: the
  // first lines say enough, the count says the rest.
  constexpr std::size_t kProblemsShown = 20;
  for (std::size_t k = 0; k < std::min(p.log.problems.size(), kProblemsShown); ++k) {
    const auto& problem = p.log.problems[k];
    std::cerr << "ccsim: warning: " << c.log << ":" << problem.line << ": " << problem.why << ": "
              << problem.text.substr(0, 300) << (problem.text.size() > 300 ? "..." : "") << "\n";
  }
  if (p.log.problems.size() > kProblemsShown) {
    std::string lines;  // their numbers, runs of consecutive ones as "a-b"
    for (std::size_t k = kProblemsShown; k < p.log.problems.size(); ++k) {
      const int line = p.log.problems[k].line;
      std::size_t end = k;
      while (end + 1 < p.log.problems.size() && p.log.problems[end + 1].line == p.log.problems[end].line + 1) ++end;
      lines += (lines.empty() ? "" : ", ") + std::to_string(line) +
               (end > k ? "-" + std::to_string(p.log.problems[end].line) : std::string());
      k = end;
    }
    std::cerr << "ccsim: warning: " << c.log << ": " << p.log.problems.size() - kProblemsShown
              << " more lines could not be read: " << lines << "\n";
  }
  for (const auto& warned : p.log.nccl_warnings)
    std::cerr << "ccsim: warning: " << c.log << ":" << warned.line << ": " << warned.why << ": " << warned.text << "\n";
  for (const auto& note : p.log.notes) std::cerr << "ccsim: warning: " << c.log << ": " << note << "\n";
  if (p.log.rows.empty())
    throw Error(c.log + ": no nccl-tests data row (size, count, type, ... time, algbw, busbw)" +
                (p.log.problems.empty() ? std::string(": the file holds none")
                                        : ": " + std::to_string(p.log.problems.size()) + " line(s) could not be read (the warnings above)"));
  if (!c.collective.empty()) {
    const CollectiveKind named = parse_collective(c.collective);
    if (p.log.collective && *p.log.collective != named)
      std::cerr << "ccsim: warning: " << c.log << ": its " << p.log.collective_source << " says "
                << to_string(*p.log.collective) << "; --collective " << to_string(named) << " is simulated\n";
    p.log.collective = named;
    p.log.collective_source = "--collective";
  }
  if (!p.log.collective)
    throw Error(c.log +
                ": cannot tell which collective it measured (no nccl-tests command line, no '# Collective test "
                "starting: X_perf' line, no collective in the file name such as <system>-<gpus>g-all_reduce-1.log): "
                "name it with --collective");
  apply_command_settings(p);
  decide_machine(p);
  const int gpus = static_cast<int>(p.topology.gpu_count());
  p.ranks = p.log.ranks.value_or(gpus);
  if (p.ranks > gpus || (p.ranks < gpus && p.topology.gpus_per_node() < gpus))
    throw Error(c.log + ": the log has " + std::to_string(p.ranks) + " ranks; topology " + p.topology.name() + " has " +
                std::to_string(gpus) + " GPUs (set " +
                (c.map_entry.empty() ? std::string("--nodes / --gpus-per-node")
                                     : "\"nodes\" / \"gpus_per_node\" in " + c.map_entry) +
                " to match)");
  if (p.log.gpus_per_thread && c.gpus_per_thread && *p.log.gpus_per_thread != *c.gpus_per_thread)
    throw Error(c.log + ": the map says gpus_per_thread " + std::to_string(*c.gpus_per_thread) + ", the log's " +
                p.log.gpus_per_thread_source + " says " + std::to_string(*p.log.gpus_per_thread));
  // Azure's guide runs all_reduce_perf as one process driving every GPU of the VM (its
  // NCCLBandwidth.py: -b 8 -e 8G -f 2 -g <GPUs> -n 40), which its summary tables do not say.
  const bool azure_summary = is_azure_summary(p.log);
  p.gpus_per_thread = p.log.gpus_per_thread.value_or(c.gpus_per_thread.value_or(azure_summary ? p.ranks : 1));
  p.threads = p.log.threads.value_or(1);
  p.iters = p.log.iters.value_or(azure_summary ? 40 : kNcclTestsIters);
  p.graph_launches = p.log.graph_launches.value_or(0);
  p.agg_iters = p.log.agg_iters.value_or(1);
  p.registration = p.log.registration.value_or(0);
  const CollectiveKind kind = *p.log.collective;
  bool said_mulsum = false;
  std::map<std::string, int> left_out;  // rows of a type or op ccsim does not simulate, by why
  for (const auto& row : p.log.rows) {
    if (row.size == 0 || row.size < min_size || row.size > max_size) continue;
    if (row.out_of_place && row.in_place && row.out_of_place->has_time && row.in_place->has_time &&
        row.out_of_place->time_us > 0 && row.in_place->time_us > 0) {
      const double o = row.out_of_place->time_us, i = row.in_place->time_us, ratio = std::max(o, i) / std::min(o, i);
      PreparedLog::ColumnAgreement& cols = p.column_agreement;
      ++cols.rows;
      if (ratio > kNoisyColumns) ++cols.disagree;
      if (ratio > cols.ratio) cols = {cols.rows, cols.disagree, ratio, row.size, o, i};
    }
    const auto measured = measured_time(row, column, kind, p.ranks);
    if (!measured) continue;
    MeasuredCall m;
    m.spec.kind = kind;
    // A type or op ccsim does not simulate (nccl-tests' mulsum, an fp8 type) leaves that row out,
    // said with its line, not the log.
    try {
      m.spec.type = parse_data_type(row.type.empty() ? "float" : row.type);
      if (is_reduction(kind) && row.redop == "mulsum") {
        // nccl-tests' mulsum is NCCL's PreMulSum (ncclRedOpCreatePreMulSum), the kernel NCCL runs
        // avg with on floating-point types: the same work, so simulated as avg.
        m.spec.op = ReduceOp::avg;
        if (!said_mulsum)
          std::cerr << "ccsim: warning: " << c.log << ": op mulsum (NCCL's PreMulSum) simulated as avg, which NCCL "
                    << "runs as a PreMulSum\n";
        said_mulsum = true;
      } else {
        m.spec.op = is_reduction(kind) && !row.redop.empty() && row.redop != "none" ? parse_reduce_op(row.redop) : ReduceOp::sum;
      }
    } catch (const Error& e) {
      // Said for its first rows; a sweep of all types (-d all) has many of one unknown type.
      if (++left_out[e.what()] <= 3)
        std::cerr << "ccsim: warning: " << c.log << ":" << row.line << ": " << e.what() << ": row left out\n";
      continue;
    }
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
  for (const auto& [why, rows] : left_out)
    if (rows > 3) std::cerr << "ccsim: warning: " << c.log << ": " << rows - 3 << " more rows left out: " << why << "\n";
  return p;
}

}  // namespace ccsim::cli
