// ccsim accuracy: simulate what real nccl-tests logs measured and say how far off the model is.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "ccsim/commands.hpp"
#include "ccsim/validators.hpp"
#include "ccsim/measure.hpp"
#include "ccsim/measured_logs.hpp"
#include "ccsim/parallel.hpp"
#include "ccsim/planner.hpp"
#include "ccsim/topology_args.hpp"
#include "sim/error.hpp"
#include "sim/nccl_log.hpp"

namespace ccsim::cli {

namespace {

struct AccuracyArgs {
  TopologyArgs topology;
  std::string model_file;
  std::vector<std::string> logs;
  std::string map_file;
  std::string column = "out-of-place";
  std::string min_size = "1";
  std::string max_size = "1T";
  std::string baseline;
  std::string select = "nccl";
  std::string algorithm = "auto";
  std::string collective;  // --collective: what the LOG files measured, where they do not say
  std::string run;  // --run: the run of LOG files that hold several (N or all)
  std::string protocol = "auto";
  std::string check_limit = "16M";
  std::string only;
  bool all = false;
  bool quiet = false;
  bool by_algorithm = false;
  std::string json_file;
  std::string calibrated;  // a model from `ccsim calibrate`: also score it, before vs after
  std::vector<std::string> nccl_env;  // --nccl-env: channel settings for every log, over what it says
  int jobs = 1;  // rows simulated at once, each in a worker process
};

struct RowResult {
  Bytes size = 0;
  double measured_us = 0, simulated_us = 0;
  double measured_busbw = 0, simulated_busbw = 0;
  double error = 0;  // simulated busbw / measured busbw - 1
  std::optional<double> nccl_us, nccl_error;
  std::string algorithm, protocol;
  int channels = 0;
  bool host_bound = false;
  std::string type, op;  // the row's data type and reduction ("none" where it reduces nothing)
};

struct LogResult {
  LogCase c;
  std::string collective;
  int ranks = 0;
  int gpus_per_thread = 1;
  int threads = 1;  // PreparedLog::threads
  int iters = kNcclTestsIters;
  bool rooted = false;  // timed as a loop whose calls overlap: iters matter
  int graph_launches = 0;  // PreparedLog::graph_launches
  int agg_iters = 1;       // PreparedLog::agg_iters
  int registration = 0;    // PreparedLog::registration
  std::string topology, model;
  std::string machine_options;  // what adjusts the machine beyond its name (machine_adjustments)
  int nccl_release = 0;  // whose cost model decided auto (0: 2.30's)
  std::string column;    // the measured column compared, as the header says it
  std::string machine_from_log;  // PreparedLog::machine_from_log
  PreparedLog::ColumnAgreement column_agreement;  // PreparedLog::column_agreement
  bool model_from_format = false;  // the model's NCCL era read off nccl-tests' old table layout
  // The log states no NCCL release and its GPU family has models of older releases: named in the
  // header, so that a run of one of them can take its model (--model).
  std::string release_models;
  std::string from_command;      // PreparedLog::from_command
  std::string nccl_env_settings;  // the NCCL settings the run followed (EnvSettings: log's, map's, --nccl-env)
  bool from_report = false;      // PreparedLog::from_report
  int runs = 1;  // of the file, whose run c.run is compared where it holds several
  std::vector<RowResult> rows;
};

struct Stats {
  double median = 0, p90 = 0;  // of the absolute errors
  double bias = 0;             // median of the signed errors: + where the simulation is too fast
  std::size_t n = 0;
};

// Linear interpolation between order statistics (the common "type 7" definition) of sorted values.
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

Stats stats(std::vector<double> errors) {
  Stats s;
  s.n = errors.size();
  if (errors.empty()) return s;
  std::sort(errors.begin(), errors.end());
  s.bias = quantile(errors, 0.5);
  for (double& e : errors) e = std::abs(e);
  std::sort(errors.begin(), errors.end());
  s.median = quantile(errors, 0.5);
  s.p90 = quantile(errors, 0.9);
  return s;
}

std::string stats_text(const Stats& s) {
  // Not a median of 0%: nothing was compared (every row unreadable or outside the size range, or a
  // collective NCCL's cost model does not estimate).
  if (s.n == 0) return "n=0: no rows compared";
  char buf[128];
  std::snprintf(buf, sizeof buf, "median_abs_err=%.1f%% p90_abs_err=%.1f%% n=%zu median_err=%+.1f%%", 100 * s.median,
                100 * s.p90, s.n, 100 * s.bias);
  return buf;
}

// A log ready for its rows to be simulated: its machine, model and planner, and the result's
// header. Held by pointer: the planner refers to the topology and model beside it.
struct CaseRun {
  CaseRun(const LogCase& c, const AccuracyArgs& a)
      : prepared(prepare_log(c, a.column, parse_bytes(a.min_size), parse_bytes(a.max_size))),
        model(Model::named(a.model_file.empty() ? default_model_name(prepared) : a.model_file)) {}
  PreparedLog prepared;
  Model model;
  std::optional<Planner> planner;
  LogResult out;
};

std::unique_ptr<CaseRun> prepare_case(const LogCase& c, const AccuracyArgs& a) {
  auto run = std::make_unique<CaseRun>(c, a);
  const PreparedLog& prepared = run->prepared;
  const topo::Topology& topology = prepared.topology;
  const int ranks = prepared.ranks;
  run->model = with_nccl_buffers(std::move(run->model), prepared.nccl_env_settings);
  const Model& model = run->model;
  Selection selection;
  selection.mode = a.select;
  selection.algorithm = prepared.c.algorithm;
  selection.protocol = prepared.c.protocol;
  selection.gpus_per_thread = prepared.gpus_per_thread;
  selection.threads = prepared.threads;
  selection.iters = prepared.iters;
  selection.nccl_release = nccl_release(prepared);
  selection.nccl_env_settings = prepared.nccl_env_settings;
  run->planner.emplace(topology, model, ranks, selection);

  LogResult& out = run->out;
  out.c = prepared.c;
  out.collective = std::string(to_string(*prepared.log.collective));
  out.ranks = ranks;
  out.gpus_per_thread = prepared.gpus_per_thread;
  out.threads = prepared.threads;
  out.iters = prepared.iters;
  out.graph_launches = prepared.graph_launches;
  out.agg_iters = prepared.agg_iters;
  out.registration = prepared.registration;
  out.rooted = is_rooted(*prepared.log.collective);
  out.topology = topology.name();
  out.machine_options = machine_adjustments(prepared.c.topology);
  out.machine_from_log = prepared.machine_from_log;
  out.column_agreement = prepared.column_agreement;
  out.runs = prepared.log.runs;
  // Where neither the command nor the map names the model, the log's release (or era) chose it.
  const bool model_from_log = a.model_file.empty() && prepared.c.model.empty();
  const std::string release = model_release(prepared);
  out.model_from_format = model_from_log && prepared.log.nccl_version.empty() && !release.empty() &&
                          model.name() != topology.gpu_arch();
  if (model_from_log && prepared.c.nccl.empty() && release.empty())
    for (const auto& [name, releases] : Model::release_models(topology.gpu_arch())) {
      std::string list;
      for (const auto& r : releases) list += (list.empty() ? "" : ", ") + r;
      out.release_models += (out.release_models.empty() ? "" : ", ") + name + " (NCCL " + list + ")";
    }
  out.from_command = prepared.from_command;
  out.nccl_env_settings = nccl::to_string(prepared.nccl_env_settings);
  // A log with one column only (a summary table's in-place busbw) is compared on that one.
  const bool want_in_place = a.column == "in-place";
  const auto other = std::count_if(prepared.calls.begin(), prepared.calls.end(),
                                   [&](const MeasuredCall& m) { return m.in_place != want_in_place; });
  const std::string other_name = want_in_place ? "out-of-place" : "in-place";
  out.column = other == 0 ? a.column + " column"
               : static_cast<std::size_t>(other) == prepared.calls.size()
                   ? other_name + " column (the only one the log has)"
                   : a.column + " column (" + other_name + " where a row has only that)";
  out.from_report = prepared.from_report;
  out.model = model.name();
  out.nccl_release = selection.nccl_release;
  return run;
}

// The candidates a row of the log may run (its call, its column).
std::vector<PointOptions> row_candidates(const CaseRun& run, const MeasuredCall& call, const AccuracyArgs& a) {
  std::vector<PointOptions> candidates = run.planner->candidates(call.spec);
  for (auto& p : candidates) {
    p.check_limit_bytes = parse_bytes(a.check_limit);
    p.columns = call.in_place ? Columns::in_place : Columns::out_of_place;
  }
  return candidates;
}

RowResult row_result(const CaseRun& run, const MeasuredCall& call, const Point& p, const AccuracyArgs& a) {
  const CollectiveSpec& spec = call.spec;
  const PerfResult& simulated = call.in_place ? p.row.in_place : p.row.out_of_place;
  if (p.row.out_of_place.wrong && *p.row.out_of_place.wrong > 0)
    throw Error(run.prepared.c.log + ": the simulated schedule computes wrong data at " + format_bytes(call.size) + " (" +
                p.row.algorithm + ")");
  RowResult r;
  r.size = call.size;
  r.measured_us = call.measured_us;
  r.simulated_us = simulated.time_us;
  const double factor = bus_bandwidth_factor(spec.kind, run.prepared.ranks);
  r.measured_busbw = static_cast<double>(r.size) / (r.measured_us * 1e3) * factor;
  r.simulated_busbw = simulated.busbw_gbps;
  r.error = r.measured_us / r.simulated_us - 1;
  r.algorithm = p.row.algorithm;
  r.host_bound = p.row.host_bound;
  r.protocol = std::string(to_string(p.row.protocol));
  r.channels = p.row.channels;
  r.type = std::string(to_string(spec.type));
  r.op = is_reduction(spec.kind) ? std::string(to_string(spec.op)) : "none";
  if (a.baseline == "nccl-model") {
    r.nccl_us = run.planner->nccl_estimate_us(spec);
    if (r.nccl_us) r.nccl_error = r.measured_us / *r.nccl_us - 1;
  }
  return r;
}

// Simulates every row of every case, up to `a.jobs` at once (rows of different logs too), and
// hands each log's result to `on_log` in the cases' order, as soon as its rows are all done.
void run_cases(const std::vector<LogCase>& cases, const AccuracyArgs& a, bool progress,
               const std::function<void(const LogResult&)>& on_log) {
  // A log that cannot be read or matched to its machine fails in its turn, after the logs before it.
  std::vector<std::unique_ptr<CaseRun>> runs;
  std::vector<std::string> refused(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    try {
      runs.push_back(prepare_case(cases[i], a));
    } catch (const Error& e) {
      runs.emplace_back();
      refused[i] = e.what();
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> rows;  // (case, call)
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i])
      for (std::size_t k = 0; k < runs[i]->prepared.calls.size(); ++k) rows.emplace_back(i, k);
  std::size_t next_log = 0;
  auto flush_logs = [&] {  // every log whose rows are all in, in order
    while (next_log < runs.size()) {
      if (!runs[next_log]) throw Error(refused[next_log]);
      if (runs[next_log]->out.rows.size() != runs[next_log]->prepared.calls.size()) break;
      if (progress) std::cerr << "\r\033[K" << std::flush;
      on_log(runs[next_log]->out);
      runs[next_log++].reset();
    }
  };
  flush_logs();
  auto compute = [&](std::size_t i) {
    const auto [c, k] = rows[i];
    const CaseRun& run = *runs[c];
    const MeasuredCall& call = run.prepared.calls[k];
    if (progress && a.jobs <= 1)
      std::cerr << "\r" << std::filesystem::path(run.prepared.c.log).filename().string() << " [" << k + 1 << "/"
                << run.prepared.calls.size() << "] " << format_bytes(call.size) << "      " << std::flush;
    return point_to_json(measure_best(call.spec, run.prepared.topology, run.model, row_candidates(run, call, a)), false);
  };
  auto emit = [&](std::size_t i, const nlohmann::json& j) {
    const auto [c, k] = rows[i];
    CaseRun& run = *runs[c];
    const MeasuredCall& call = run.prepared.calls[k];
    run.out.rows.push_back(row_result(run, call, point_from_json(j, call.spec), a));
    flush_logs();
  };
  for_each_ordered(rows.size(), a.jobs, compute, emit, workers_progress(progress, a.jobs, rows.size(), "rows"));
}

void print_log(std::ostream& o, const LogResult& r, const AccuracyArgs& a) {
  const bool baseline = a.baseline == "nccl-model";
  const int release = nccl::choosing_release(r.nccl_release);
  o << "# " << r.c.log
    << (r.c.run && r.runs > 1 ? " (run " + std::to_string(*r.c.run) + " of " + std::to_string(r.runs) + ")" : "")
    << "\n#   " << r.collective << ", " << r.ranks << " ranks on " << r.topology
    << (r.machine_options.empty() ? "" : " with " + r.machine_options) << " (model "
    << r.model << ", NCCL 2." << release << "'s choices), " << r.column << ", class \"" << r.c.system_class << "\", set " << r.c.set
    << (r.gpus_per_thread > 1 ? ", " + std::to_string(r.gpus_per_thread) + " GPUs per host thread" : "")
    << (r.threads > 1 ? ", " + std::to_string(r.threads) + " host threads a process" : "")
    << (r.rooted ? ", loop of " + std::to_string(r.iters) + " calls" : "") << "\n";
  if (!r.machine_from_log.empty()) o << "#   machine: " << r.machine_from_log << "\n";
  if (r.column_agreement.disagree > 0) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "#   repeatability: out of place and in place, the same collective timed twice, differ by more "
                  "than %.1fx at %d of %d sizes (%.2fx at %llu B: %.1f and %.1f us): no simulation can match "
                  "those rows more closely than the run matches itself\n",
                  kNoisyColumns, r.column_agreement.disagree, r.column_agreement.rows, r.column_agreement.ratio,
                  static_cast<unsigned long long>(r.column_agreement.at), r.column_agreement.out_of_place_us, r.column_agreement.in_place_us);
    o << buf;
  }
  if (r.nccl_release > 0 && r.nccl_release < nccl::kOldestTunedRelease && !nccl::has_own_cost_model(r.nccl_release))
    o << "#   NCCL 2." << r.nccl_release << ", as the log says: ccsim follows NCCL's cost model of 2."
      << nccl::kLegacyTunedRelease << " and from 2." << nccl::kOldestTunedRelease << " on, so 2." << release
      << "'s choice of algorithm and protocol stands in for its own (its point-to-point channel rules are 2."
      << r.nccl_release << "'s)\n";
  if (!r.release_models.empty())
    o << "#   model " << r.model << ": the log states no NCCL release, so its family's model for current releases runs; "
      << "a run of an older one takes its own with --model: " << r.release_models << "\n";
  if (r.model_from_format)
    o << "#   model " << r.model << ": the log states no NCCL release; its nccl-tests table (a maximum 'error' column, "
      << "not '#wrong') dates it to NCCL 2.9 or earlier\n";
  if (r.graph_launches > 0)
    o << "#   timed as " << r.graph_launches << " CUDA-graph launch" << (r.graph_launches > 1 ? "es" : "")
      << " of the loop (nccl-tests -G), which ccsim does not model: it simulates calls launched one by one, so a\n"
      << "#   host-bound size reads slower than such a run\n";
  if (r.agg_iters > 1)
    o << "#   each timed iteration groups " << r.agg_iters << " calls in one NCCL group (nccl-tests -m), which ccsim does "
      << "not model: it\n#   simulates them one by one, so a latency-bound size reads slower than such a run\n";
  if (r.registration > 0)
    o << "#   buffers registered with NCCL (nccl-tests -R " << r.registration
      << (r.registration == 2 ? ", symmetric: NCCL 2.27+ may run its symmetric-memory kernels" : ", local")
      << "), which ccsim does not model\n";
  if (!r.from_command.empty())
    o << "#   from its command line" << (r.from_report ? " and NCCL's report" : "") << ": " << r.from_command << "\n";
  if (!r.nccl_env_settings.empty()) o << "#   NCCL settings: " << r.nccl_env_settings << "\n";
  if (!a.quiet) {
    // A log of several types or reductions (nccl-tests -d all, -o all) says which each row is.
    const bool mixed = std::any_of(r.rows.begin(), r.rows.end(), [&r](const RowResult& x) {
      return x.type != r.rows.front().type || x.op != r.rows.front().op;
    });
    o << "#        size" << (mixed ? "      type   redop" : "")
      << "   meas_us    sim_us  meas_busbw  sim_busbw     err  algorithm       proto  ch"
      << (baseline ? "   nccl_us  nccl_err" : "") << "\n";
    for (const auto& x : r.rows) {
      char line[256];
      std::snprintf(line, sizeof line, "%13llu", static_cast<unsigned long long>(x.size));
      o << line;
      if (mixed) {
        std::snprintf(line, sizeof line, "  %8s  %6s", x.type.c_str(), x.op.c_str());
        o << line;
      }
      std::snprintf(line, sizeof line, " %9.2f %9.2f %11.2f %10.2f %+6.1f%%  %-14s  %-5s %3d", x.measured_us,
                    x.simulated_us, x.measured_busbw, x.simulated_busbw, 100 * x.error, x.algorithm.c_str(),
                    x.protocol.c_str(), x.channels);
      o << line;
      if (baseline && x.nccl_us) {
        std::snprintf(line, sizeof line, " %9.2f %+8.1f%%", *x.nccl_us, 100 * *x.nccl_error);
        o << line;
      }
      o << "\n";
    }
  }
}

struct Tally {
  std::vector<double> sim, nccl;  // signed errors
  void add(const RowResult& x) {
    sim.push_back(x.error);
    if (x.nccl_error) nccl.push_back(*x.nccl_error);
  }
  std::string text(bool baseline) const {
    std::string s = stats_text(stats(sim));
    if (baseline) s += "   nccl-model: " + stats_text(stats(nccl));
    return s;
  }
};

constexpr Bytes kLarge = Bytes{64} << 20;  // the issue's "64 MiB and more" bucket
constexpr Bytes kSmall = Bytes{64} << 10;  // sizes whose time is latency: launch, hops, handshakes

// How a log's run compares with what the model says its machine gives, in the two regimes a
// planner reads off a curve: the busbw of its large sizes (links, NICs) and the time of its small
// ones (launch and per-hop latency). Medians of measured / simulated; empty where no row is in
// the regime.
struct Regimes {
  std::optional<double> bandwidth, latency;
  std::size_t bandwidth_n = 0, latency_n = 0;
};

Regimes regimes(const std::vector<RowResult>& rows) {
  std::vector<double> bw, lat;
  for (const auto& x : rows) {
    if (x.size >= kLarge && x.simulated_busbw > 0) bw.push_back(x.measured_busbw / x.simulated_busbw);
    if (x.size <= kSmall && x.simulated_us > 0) lat.push_back(x.measured_us / x.simulated_us);
  }
  Regimes r;
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return quantile(v, 0.5);
  };
  r.bandwidth_n = bw.size();
  r.latency_n = lat.size();
  if (!bw.empty()) r.bandwidth = median(bw);
  if (!lat.empty()) r.latency = median(lat);
  return r;
}

// "bandwidth (>= 64 MiB, 8 sizes) 0.64x the model's busbw: below what the model's machine gives;
// latency (<= 64 KiB, 14 sizes) 1.02x the model's time: as modelled". Within 10% reads as modelled,
// about what the model's own error is on the shared logs there.
std::string regimes_text(const Regimes& r) {
  std::string s;
  char buf[160];
  if (r.bandwidth) {
    const double x = *r.bandwidth;
    std::snprintf(buf, sizeof buf, "bandwidth (>= 64 MiB, %zu size%s) %.2fx the model's busbw: %s", r.bandwidth_n,
                  r.bandwidth_n == 1 ? "" : "s", x,
                  x < 0.9   ? "below what the model's machine gives"
                  : x > 1.1 ? "above what the model's machine gives (check the machine named: links, NICs)"
                            : "as modelled");
    s += buf;
  }
  if (r.latency) {
    const double x = *r.latency;
    std::snprintf(buf, sizeof buf, "%slatency (<= 64 KiB, %zu size%s) %.2fx the model's time: %s", s.empty() ? "" : "; ",
                  r.latency_n, r.latency_n == 1 ? "" : "s", x,
                  x > 1.1 ? "slower than modelled" : x < 0.9 ? "faster than modelled" : "as modelled");
    s += buf;
  }
  return s;
}

int run_accuracy(const AccuracyArgs& a, const CLI::App& cmd) {
  if (a.column != "out-of-place" && a.column != "in-place")
    throw Error("--column must be out-of-place or in-place, not \"" + a.column + "\"");
  if (!a.baseline.empty() && a.baseline != "nccl-model")
    throw Error("unknown baseline \"" + a.baseline + "\" (expected nccl-model)");
  std::vector<LogCase> cases;
  if (a.map_file.empty()) {
    refuse_map_choices_without_map(cmd);
  } else {
    if (a.logs.empty()) refuse_machine_for_map(cmd);
    std::string overlaid;
    std::size_t named = 0, unhealthy = 0;  // entries --only names; of them, the ones flagged unhealthy
    for (auto& c : read_map(a.map_file)) {
      if (!a.only.empty() && c.log.find(a.only) == std::string::npos) continue;
      ++named;
      if (!a.all && !c.healthy) ++unhealthy;
      if ((a.all || c.healthy) && (a.all || !a.only.empty() || !c.slow)) {
        overlaid = overlay_given(cmd, a.topology, c.topology);
        const std::string run = overlay_run_choice(cmd, a.algorithm, a.protocol, c);
        if (!run.empty()) overlaid += (overlaid.empty() ? "" : " ") + run;
        cases.push_back(c);
      }
    }
    if (!overlaid.empty()) std::cout << "# every map entry run with " << overlaid << " from the command line\n";
    if (cases.empty() && a.logs.empty()) {
      if (named == 0) throw only_names_nothing(a.only, a.map_file);
      if (unhealthy == named)
        throw Error("--only \"" + a.only + "\": the " + std::to_string(named) + " entr" + (named == 1 ? "y" : "ies") + " of " +
                    a.map_file + " it names " + (named == 1 ? "is" : "are") +
                    " flagged unhealthy (times no healthy machine gives): pass --all to run " + (named == 1 ? "it" : "them"));
    }
  }
  for (auto& c : command_line_cases(cmd, a.logs, a.topology, a.algorithm, a.protocol, a.collective, a.run))
    cases.push_back(std::move(c));
  if (cases.empty()) throw Error("no logs: name LOG files, or --map FILE");
  const nccl::EnvSettings nccl_env_settings = parse_nccl_env(a.nccl_env);
  for (auto& c : cases) nccl::overlay_env_settings(c.nccl_env_settings, nccl_env_settings);
  const bool baseline = a.baseline == "nccl-model";
  const bool progress = ::isatty(STDERR_FILENO);

  Tally overall, large;
  std::map<std::string, Tally> by_class, by_class_large, by_set, by_decade;
  // --by-algorithm: "ring/ll128" and "ring/ll128 1e06..1e07 B", with the logs each holds rows of.
  std::map<std::string, Tally> by_algorithm;
  std::map<std::string, std::set<std::string>> algorithm_logs;
  nlohmann::json json = nlohmann::json::array();
  std::vector<Tally> per_log;  // the "before" of --calibrated
  std::size_t log_index = 0;
  run_cases(cases, a, progress, [&](const LogResult& r) {
    const LogCase& c = cases[log_index++];
    print_log(std::cout, r, a);
    Tally& t = per_log.emplace_back();
    for (const auto& x : r.rows) {
      t.add(x);
      overall.add(x);
      by_class[r.c.system_class].add(x);
      by_set[c.set].add(x);
      char decade[32];
      const int d = static_cast<int>(std::floor(std::log10(static_cast<double>(x.size))));
      std::snprintf(decade, sizeof decade, "1e%02d..1e%02d B", d, d + 1);
      by_decade[decade].add(x);
      if (a.by_algorithm) {
        const std::string key = x.algorithm + "/" + x.protocol;
        for (const std::string& k : {key, key + " " + decade}) {
          by_algorithm[k].add(x);
          algorithm_logs[k].insert(c.log);
        }
      }
      if (x.size >= kLarge) {
        large.add(x);
        by_class_large[r.c.system_class].add(x);
      }
    }
    std::cout << std::filesystem::path(c.log).filename().string() << (c.run ? "#" + std::to_string(*c.run) : "") << ": "
              << t.text(baseline) << "\n";
    const Regimes regime = regimes(r.rows);
    if (const std::string text = regimes_text(regime); !text.empty()) std::cout << "#   measured: " << text << "\n";
    std::cout << "\n";
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& x : r.rows) {
      nlohmann::json jr{{"size_bytes", x.size},         {"measured_us", x.measured_us},
                        {"simulated_us", x.simulated_us}, {"measured_busbw_gbps", x.measured_busbw},
                        {"simulated_busbw_gbps", x.simulated_busbw}, {"error", x.error},
                        {"algorithm", x.algorithm},     {"protocol", x.protocol},
                        {"channels", x.channels},       {"host_bound", x.host_bound},
                        {"type", x.type},               {"op", x.op}};
      if (x.nccl_us) {
        jr["nccl_model_us"] = *x.nccl_us;
        jr["nccl_model_error"] = *x.nccl_error;
      }
      rows.push_back(jr);
    }
    json.push_back({{"log", c.log}, {"run", c.run ? nlohmann::json(*c.run) : nlohmann::json()}, {"class", r.c.system_class}, {"set", c.set}, {"collective", r.collective},
                    {"ranks", r.ranks}, {"gpus_per_thread", r.gpus_per_thread}, {"threads", r.threads}, {"topology", r.topology}, {"machine_options", r.machine_options}, {"model", r.model}, {"nccl_release", r.nccl_release}, {"from_command", r.from_command}, {"nccl_env", r.nccl_env_settings},
                    {"cuda_graph_launches", r.graph_launches}, {"agg_iters", r.agg_iters}, {"registration", r.registration},
                    {"bandwidth_ratio", regime.bandwidth ? nlohmann::json(*regime.bandwidth) : nlohmann::json()},
                    {"latency_ratio", regime.latency ? nlohmann::json(*regime.latency) : nlohmann::json()},
                    {"columns", {{"rows", r.column_agreement.rows}, {"disagree", r.column_agreement.disagree},
                                 {"max_ratio", r.column_agreement.ratio}, {"max_ratio_bytes", r.column_agreement.at}}},
                    {"rows", rows}});
  });
  if (cases.size() > 1) {
    for (const auto& [name, t] : by_class) std::cout << "class \"" << name << "\": " << t.text(baseline) << "\n";
    for (const auto& [name, t] : by_class_large)
      std::cout << "class \"" << name << "\" >= 64 MiB: " << t.text(baseline) << "\n";
    for (const auto& [name, t] : by_set) std::cout << "set " << name << ": " << t.text(baseline) << "\n";
    if (baseline)
      for (const auto& [name, t] : by_decade) std::cout << "sizes " << name << ": " << t.text(baseline) << "\n";
    std::cout << ">= 64 MiB: " << large.text(baseline) << "\n";
  }
  for (const auto& [name, t] : by_algorithm)
    std::cout << "algorithm " << name << ": " << t.text(baseline) << " logs=" << algorithm_logs[name].size() << "\n";
  std::cout << "overall: " << overall.text(baseline) << "\n";
  if (overall.sim.empty())
    throw Error("no row of any log was compared: their rows were unreadable (the warnings above say why), of size 0 "
                "or outside --min-size/--max-size");
  if (!a.calibrated.empty()) {
    // The same rows under the calibrated model: the error before and after calibration.
    AccuracyArgs after = a;
    after.model_file = a.calibrated;
    Tally total;
    std::cout << "\n# after calibration (--model " << a.calibrated << "): before -> after\n";
    std::size_t i = 0;
    run_cases(cases, after, progress, [&](const LogResult& r) {
      Tally ta;
      for (const auto& x : r.rows) {
        ta.add(x);
        total.add(x);
      }
      std::cout << std::filesystem::path(cases[i].log).filename().string() << ": " << stats_text(stats(per_log[i].sim))
                << "  ->  " << stats_text(stats(ta.sim)) << "\n";
      ++i;
    });
    std::cout << "overall before: " << stats_text(stats(overall.sim)) << "\noverall after:  " << stats_text(stats(total.sim))
              << "\n";
  }
  if (!a.json_file.empty()) {
    std::ofstream out(a.json_file);
    if (!out) throw Error(a.json_file + ": cannot open for writing");
    out << json.dump(1) << "\n";
  }
  return 0;
}

}  // namespace

Runner add_accuracy(CLI::App& app) {
  auto args = std::make_shared<AccuracyArgs>();
  auto* cmd = app.add_subcommand(
      "accuracy",
      "Simulate the runs of measured nccl-tests logs (same collective, ranks, type, sizes) and print the error "
      "per size, per log and overall");
  cmd->add_option("logs", args->logs, "nccl-tests output files (all use --topo and --nodes; without --topo, each the machine its device lines, or else its file name, name)");
  add_topology_options(cmd, args->topology);
  say_machine_from_log(cmd);
  cmd->add_option("--map", args->map_file,
                  "JSON file naming, for each log, the topology that describes its system "
                  "(tests/data/measured-map.json; an entry needs only \"log\": without \"topo\" or \"nodes\" the "
                  "log's device lines, hosts or file name decide, as for LOG files); runs every healthy entry not "
                  "marked slow. The machine options other than --topo, --nodes and --gpus apply to every entry, over "
                  "what it says");
  cmd->add_flag("--all", args->all,
                "With --map: include the runs flagged unhealthy and any marked slow (\"slow\": true)");
  cmd->add_option("--only", args->only, "With --map: only logs whose path contains this text");
  cmd->add_option("--model", args->model_file,
                  "Timing model for every log: a JSON file or a built-in model's name (default: the map's "
                  "model for the log, else the one for the NCCL release the log states (`ccsim model`), else the GPU family's)");
  cmd->add_option("--column", args->column, "Measured column to compare: out-of-place or in-place")->capture_default_str();
  cmd->add_option("--min-size", args->min_size, "Skip sizes below this")->capture_default_str();
  cmd->add_option("--max-size", args->max_size, "Skip sizes above this")->capture_default_str();
  cmd->add_option("--baseline", args->baseline, "Also score NCCL's own cost-model estimate: nccl-model");
  cmd->add_option("--select", args->select, "What runs: nccl (NCCL's choice) or fastest (by simulation)")
      ->check(CLI::IsMember({"nccl", "fastest"}))
      ->capture_default_str();
  add_run_choice_options(cmd, args->algorithm, args->protocol);
  add_nccl_env_option(cmd, args->nccl_env);
  add_collective_option(cmd, args->collective, args->run);
  cmd->add_option("--check-limit", args->check_limit, "Data-check sizes up to this (host memory)")->capture_default_str();
  cmd->add_flag("-q,--quiet", args->quiet, "Only the summary lines, not every size");
  cmd->add_flag("--by-algorithm", args->by_algorithm,
                "Also summarise the rows per algorithm/protocol run, over all sizes and per size decade, with "
                "how many logs each holds rows of: where one mechanism errs the same way across systems");
  cmd->add_option("--json", args->json_file, "Also write every row as JSON to this file")->check(writable_file());
  cmd->add_option("-j,--jobs", args->jobs,
                  "Rows simulated at once (of one log or several), each in a process of its own; logs still print "
                  "in order, each once its rows are done; fewer start while the memory available would not hold "
                  "one more as large as the largest so far")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--calibrated", args->calibrated,
                  "A model from `ccsim calibrate`: also print each log's error under it (before -> after)");
  return [args, cmd] { return run_accuracy(*args, *cmd); };
}

}  // namespace ccsim::cli
