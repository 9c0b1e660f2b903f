// ccsim calibrate: fit the timing model's parameters to measured nccl-tests logs of one system by
// robust least squares on log time (Ceres), with uncertainties, identifiability and hold-out error.
//
// Each unknown is a scale factor on one model parameter, or on a family of them ("hop_latency_us.
// nvlink.*" scales the three protocols' NVLink hop latencies together), fitted in log space so that
// it stays positive. A residual is log(simulated time) - log(measured time) of one measured size,
// under a Huber loss (a few bad sizes cannot drag the fit). An unknown whose sensitivity
// |d log t / d log scale| (over a 25% change either way) stays below 0.01 at every size is not
// identifiable from the data: it keeps its prior and is reported so.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "ccsim/commands.hpp"
#include "ccsim/validators.hpp"
#include "ccsim/measure.hpp"
#include "ccsim/measured_logs.hpp"
#include "ccsim/planner.hpp"
#include "ccsim/summary.hpp"
#include "sim/error.hpp"
#include "sim/model.hpp"

#if CCSIM_HAVE_CERES
#include <ceres/ceres.h>
#endif

namespace ccsim::cli {

namespace {

struct CalibrateArgs {
  TopologyArgs topology;
  std::vector<std::string> logs;
  std::string map_file, only;
  bool all = false;
  std::string model_file, gpu_bench_file;
  std::vector<std::string> params;
  int holdout = 0;
  std::string column = "out-of-place";
  std::string min_size = "1", max_size = "1T";
  std::string algorithm = "auto", protocol = "auto";
  std::string collective;  // --collective: what the LOG files measured, where they do not say
  std::string run;  // --run: the run of LOG files that hold several (N or all)
  std::vector<std::string> nccl_env;  // --nccl-env: channel settings for every log, over what it says
  int max_iterations = 25;
  double huber = 0.05;
  std::string out_file, json_file;
  int jobs = 0;  // rows simulated at once (0: one per core)
};

struct Unknown {
  std::string name;                 // as named: a parameter, or a prefix ending in '*'
  std::vector<std::string> params;  // the model parameters it scales
  double lower = std::log(0.1), upper = std::log(10.0);
  double sensitivity = 0;           // max |d log t / d log scale| over the rows, at the prior
  bool free = true;                 // identifiable: fitted
  double theta = 0, sigma = 0;      // fitted log scale and its standard error
};

struct Row {
  const PreparedLog* log = nullptr;
  MeasuredCall call;
  PointOptions candidate;
  bool holdout = false;
};

std::vector<Unknown> expand_unknowns(const std::vector<std::string>& names, const Model& prior) {
  std::vector<Unknown> out;
  for (const auto& name : names) {
    Unknown u;
    u.name = name;
    if (!name.empty() && name.back() == '*') {
      const std::string prefix = name.substr(0, name.size() - 1);
      for (const auto& [p, value] : prior.parameters())
        if (p.rfind(prefix, 0) == 0) u.params.push_back(p);
    } else if (prior.parameters().count(name)) {
      u.params.push_back(name);
    }
    if (u.params.empty())
      throw Error("--params: \"" + name + "\" names no parameter of model " + prior.name() +
                  " (`ccsim model " + prior.name() + "` lists them; a trailing * scales a family)");
    bool efficiency = false;
    for (const auto& p : u.params) {
      if (p == "channels" || p.rfind("chunk_bytes", 0) == 0)
        throw Error("--params: " + p + " is a count, not a rate or latency: it cannot be fitted");
      if (p.find("efficiency") != std::string::npos || p.starts_with("cpu_p2p_bandwidth_factor")) efficiency = true;
    }
    // A fraction of a link's rate cannot exceed 1.
    if (efficiency) {
      double largest = 0;
      for (const auto& p : u.params) largest = std::max(largest, prior.get(p));
      if (largest > 0) u.upper = std::min(u.upper, std::log(1.0 / largest));
    }
    for (const auto& p : u.params)
      if (prior.get(p) == 0) u.free = false;  // a zero (no cap) stays zero under any scale
    out.push_back(u);
  }
  return out;
}

// What the data of a machine could identify, by default: the rates and latencies of the path
// classes it has, each protocol's launch cost, the host's issue time and channel caps. The three
// launch costs are separate unknowns (and, for point-to-point logs, what one of their blocks loads
// and stores): each protocol owns a range of sizes, and a per-call cost that
// differs by protocol (A100 runs pay far more per Simple call than NCCL's 8.4 us) is what carries
// from one collective to another, where a per-step latency does not (all_gather has half an
// all_reduce's steps). The set-up cost per thread block carries too: NCCL picks the channel count
// from the size alone, the same for every ring collective (a zero prior, as on Hopper, stays zero).
std::vector<std::string> default_unknowns(const std::vector<PreparedLog>& logs) {
  bool nvlink = false, pcie = false, net = false, ib = false, nvls = false, p2p = false;
  for (const auto& l : logs) {
    nvls = nvls || l.topology.has_nvls();
    p2p = p2p || (l.log.collective && !nccl::function_of(*l.log.collective));
    for (const auto& link : l.topology.links()) {
      nvlink = nvlink || link.kind == topo::LinkKind::nvlink;
      pcie = pcie || link.kind == topo::LinkKind::pcie;
      if (link.kind == topo::LinkKind::net) (topo::is_infiniband(link.generation) ? ib : net) = true;
    }
  }
  std::vector<std::string> u{"launch_latency_us.ll", "launch_latency_us.ll128", "launch_latency_us.simple", "host_issue_us",
                             "block_setup_us"};
  if (nvls) u.push_back("launch_latency_us.nvls");
  if (nvlink) u.insert(u.end(), {"hop_latency_us.nvlink.*", "nvlink_efficiency"});
  if (pcie) u.insert(u.end(), {"hop_latency_us.pcie.*", "pcie_efficiency"});
  if (net || ib) u.push_back("hop_latency_us.net.*");
  if (net) u.push_back("net_efficiency");
  if (ib) u.push_back("net_efficiency.infiniband");
  // Each block's LL and LL128 rate, and the ceiling LL128's blocks share (where the model has one:
  // a zero, no ceiling, stays zero), which alone identifies LL128 once every block is at it.
  u.insert(u.end(), {"channel_bandwidth_gbps.ll", "channel_bandwidth_gbps.ll128", "gpu_max_bandwidth_gbps.ll128"});
  if (net || ib) u.push_back("channel_bandwidth_gbps.ll.net");
  if (p2p) u.push_back("p2p_block_memory_gbps");  // what a point-to-point block loads and stores
  return u;
}

class Evaluator {
 public:
  Evaluator(const Model& prior, const std::vector<Unknown>& unknowns) : prior_(prior), unknowns_(unknowns) {}

  Model model_at(const double* theta, const std::string& source) const {
    Model m = prior_;
    for (std::size_t j = 0; j < unknowns_.size(); ++j)
      for (const auto& p : unknowns_[j].params) m.set(p, prior_.get(p) * std::exp(theta[j]), source);
    return m;
  }

  // Simulated time of a row in µs (cached: the solver asks for the same point more than once).
  // The solver calls it from several threads at once; each simulation runs in its own process.
  double simulate_us(const Row& row, const double* theta) {
    std::vector<double> key(theta, theta + unknowns_.size());
    key.push_back(static_cast<double>(reinterpret_cast<std::uintptr_t>(&row)));
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return it->second;
    }
    const Model m = with_nccl_buffers(model_at(theta, "calibrate"), row.log->nccl_env_settings);
    PointOptions options = row.candidate;
    options.check = false;  // proven once, at the prior (run_calibrate)
    const PerfRow r = measure(row.call.spec, row.log->topology, m, options).row;
    const double us = (row.call.in_place ? r.in_place : r.out_of_place).time_us;
    const std::lock_guard<std::mutex> lock(mutex_);
    ++simulations_;
    if (progress_ && simulations_ % 10 == 0) std::cerr << "\rcalibrate: " << simulations_ << " simulations" << std::flush;
    return cache_[key] = us;
  }
  std::size_t simulations() const { return simulations_; }
  void show_progress(bool on) { progress_ = on; }
  void note_failure(const std::string& message) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = message;
    ++failures_;
  }
  // The first failed simulation's message and how many failed, if any did.
  const std::string& failure() const { return failure_; }
  std::size_t failures() const { return failures_; }

 private:
  const Model& prior_;
  const std::vector<Unknown>& unknowns_;
  std::mutex mutex_;
  std::map<std::vector<double>, double> cache_;
  std::size_t simulations_ = 0;
  bool progress_ = false;
  std::string failure_;
  std::size_t failures_ = 0;
};


// accuracy's error: measured / simulated time - 1 (simulated busbw over measured busbw, minus 1).
struct ErrorSummary {
  double fit_before = 0, fit_after = 0, holdout_before = 0, holdout_after = 0;
  std::size_t fit_n = 0, holdout_n = 0;
};

#if CCSIM_HAVE_CERES
struct RowResidual {
  Evaluator* evaluator;
  const Row* row;
  // Runs on the solver's threads: a simulation that fails is a failed evaluation (the solver tries
  // a smaller step), and its message is kept for after the fit; an exception would end the process.
  bool operator()(double const* const* parameters, double* residual) const {
    try {
      residual[0] = std::log(evaluator->simulate_us(*row, parameters[0]) / row->call.measured_us);
    } catch (const std::exception& e) {
      evaluator->note_failure(e.what());
      return false;
    }
    return std::isfinite(residual[0]);
  }
};
#endif

int run_calibrate(const CalibrateArgs& a, const CLI::App& cmd) {
  if (a.map_file.empty()) refuse_map_choices_without_map(cmd);
#if !CCSIM_HAVE_CERES
  throw Error("built without Ceres (Debian: libceres-dev): calibrate needs its solver");
#else
  // --- the data ---------------------------------------------------------------------------------
  std::vector<LogCase> cases;
  if (!a.map_file.empty()) {
    if (a.logs.empty()) refuse_machine_for_map(cmd);
    for (auto& c : read_map(a.map_file)) {
      if (!a.only.empty() && c.log.find(a.only) == std::string::npos) continue;
      (void)overlay_given(cmd, a.topology, c.topology);
      (void)overlay_run_choice(cmd, a.algorithm, a.protocol, c);
      if (!c.healthy && !a.all)
        throw Error(c.log + " is flagged unhealthy in " + a.map_file + (c.note.empty() ? "" : " (" + c.note + ")") +
                    ": its times are not what the machine can do; pass --all to fit it anyway");
      cases.push_back(c);
    }
  }
  if (!a.map_file.empty() && cases.empty() && a.logs.empty() && !a.only.empty())
    throw only_names_nothing(a.only, a.map_file);
  for (auto& c : command_line_cases(cmd, a.logs, a.topology, a.algorithm, a.protocol, a.collective, a.run))
    cases.push_back(std::move(c));
  if (cases.empty()) throw Error("no logs: name LOG files, or --map FILE --only TEXT");
  const nccl::EnvSettings nccl_env_settings = parse_nccl_env(a.nccl_env);
  for (auto& c : cases) nccl::overlay_env_settings(c.nccl_env_settings, nccl_env_settings);
  std::vector<PreparedLog> logs;
  for (const auto& c : cases) logs.push_back(prepare_log(c, a.column, parse_bytes(a.min_size), parse_bytes(a.max_size)));
  for (const auto& l : logs) {
    if (l.topology.gpu_arch() != logs.front().topology.gpu_arch())
      throw Error("the logs describe different GPU families (" + logs.front().topology.gpu_arch() + ", " +
                  l.topology.gpu_arch() + "): calibrate one system at a time");
    for (const auto& row : l.log.rows)
      for (const auto* point : {&row.out_of_place, &row.in_place})
        if (*point && (*point)->wrong && *(*point)->wrong > 0)
          throw Error(l.c.log + ":" + std::to_string(row.line) + ": the run reported " + std::to_string(*(*point)->wrong) +
                      " wrong elements: its times cannot be trusted");
  }

  // --- the prior model and the unknowns ------------------------------------------------------------
  if (a.model_file.empty() && a.gpu_bench_file.empty())
    for (const auto& l : logs)
      if (default_model_name(l) != default_model_name(logs.front()))
        throw Error("the logs run under different models (" + default_model_name(logs.front()) + ", " + default_model_name(l) +
                    ": the map's entries or the NCCL releases the logs state): calibrate one system's logs, or name one with --model");
  Model prior = !a.gpu_bench_file.empty() ? Model::load_file(a.gpu_bench_file)
                : !a.model_file.empty()   ? Model::named(a.model_file)
                                          : Model::builtin(default_model_name(logs.front()));
  std::vector<std::string> names = a.params.empty() ? default_unknowns(logs) : a.params;
  if (!a.gpu_bench_file.empty()) {
    // What the GPU measured directly is not refitted from the logs.
    std::erase_if(names, [](const std::string& n) { return n.rfind("hbm_bandwidth", 0) == 0; });
  }
  std::vector<Unknown> unknowns = expand_unknowns(names, prior);

  // --- rows: what NCCL would have run for each size, proven on the CPU executor once ---------------
  std::vector<std::unique_ptr<Row>> rows;
  const bool hold_logs = a.holdout > 0 && static_cast<int>(logs.size()) > a.holdout;
  for (std::size_t li = 0; li < logs.size(); ++li) {
    Selection selection;
    selection.algorithm = logs[li].c.algorithm;
    selection.protocol = logs[li].c.protocol;
    selection.gpus_per_thread = logs[li].gpus_per_thread;
    selection.threads = logs[li].threads;
    selection.iters = logs[li].iters;
    selection.nccl_release = nccl_release(logs[li]);  // whose cost model chooses, as accuracy has it
    selection.nccl_env_settings = logs[li].nccl_env_settings;
    const Model log_prior = with_nccl_buffers(prior, logs[li].nccl_env_settings);
    const Planner planner(logs[li].topology, log_prior, logs[li].ranks, selection);
    for (std::size_t i = 0; i < logs[li].calls.size(); ++i) {
      auto row = std::make_unique<Row>();
      row->log = &logs[li];
      row->call = logs[li].calls[i];
      row->candidate = planner.candidates(row->call.spec).front();
      row->candidate.check_limit_bytes = Bytes{16} << 20;
      row->candidate.columns = row->call.in_place ? Columns::in_place : Columns::out_of_place;
      row->holdout = a.holdout > 0 && (hold_logs ? li + static_cast<std::size_t>(a.holdout) >= logs.size()
                                                 : static_cast<int>(i % static_cast<std::size_t>(a.holdout)) == a.holdout - 1);
      const Point checked = measure(row->call.spec, logs[li].topology, log_prior, row->candidate);
      if (checked.row.out_of_place.wrong && *checked.row.out_of_place.wrong > 0)
        throw Error(logs[li].c.log + ": the schedule for " + format_bytes(row->call.size) + " computes wrong data");
      rows.push_back(std::move(row));
    }
  }
  std::size_t fit_rows = 0;
  for (const auto& r : rows) fit_rows += r->holdout ? 0 : 1;

  Evaluator evaluator(prior, unknowns);
  evaluator.show_progress(::isatty(STDERR_FILENO));
  const std::size_t k = unknowns.size();
  std::vector<double> theta(k, 0.0);

  // --- identifiability: the effect of a 25% change of each unknown, up and down, on every fitted
  // row. Both ways: a rate cap that sits at the link's share moves no time when raised, only when
  // lowered, yet the data can tell that it is not lower.
  const double h = std::log(1.25);
  std::vector<double> base(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) base[i] = evaluator.simulate_us(*rows[i], theta.data());
  for (std::size_t j = 0; j < k; ++j) {
    if (!unknowns[j].free) continue;
    for (const double step : {h, -h}) {
      std::vector<double> t = theta;
      t[j] = step;
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (!rows[i]->holdout)
          unknowns[j].sensitivity =
              std::max(unknowns[j].sensitivity, std::fabs(std::log(evaluator.simulate_us(*rows[i], t.data()) / base[i])) / h);
    }
    unknowns[j].free = unknowns[j].sensitivity >= 0.01;
  }
  std::vector<int> fixed;
  for (std::size_t j = 0; j < k; ++j)
    if (!unknowns[j].free) fixed.push_back(static_cast<int>(j));
  const std::size_t free_count = k - fixed.size();
  if (free_count == 0) throw Error("no parameter is identifiable from these logs: none moves any simulated time by 1%");
  if (fit_rows < free_count + 2)
    throw Error(std::to_string(fit_rows) + " measured size(s) cannot determine " + std::to_string(free_count) +
                " parameters (need at least " + std::to_string(free_count + 2) +
                "): give logs with more sizes, or fewer --params");

  // --- the fit -------------------------------------------------------------------------------------
  ceres::Problem problem;
  ceres::NumericDiffOptions diff;
  diff.relative_step_size = 1e-2;  // a 1% step: smooth over the simulator's discrete choices
  for (const auto& r : rows) {
    if (r->holdout) continue;
    auto* cost = new ceres::DynamicNumericDiffCostFunction<RowResidual, ceres::CENTRAL>(
        new RowResidual{&evaluator, r.get()}, ceres::TAKE_OWNERSHIP, diff);
    cost->AddParameterBlock(static_cast<int>(k));
    cost->SetNumResiduals(1);
    problem.AddResidualBlock(cost, new ceres::HuberLoss(a.huber), theta.data());
  }
  if (!fixed.empty()) problem.SetManifold(theta.data(), new ceres::SubsetManifold(static_cast<int>(k), fixed));
  for (std::size_t j = 0; j < k; ++j) {
    problem.SetParameterLowerBound(theta.data(), static_cast<int>(j), unknowns[j].lower);
    problem.SetParameterUpperBound(theta.data(), static_cast<int>(j), std::max(unknowns[j].upper, unknowns[j].lower));
  }
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_QR;
  options.max_num_iterations = a.max_iterations;
  // Rows are simulated in parallel, one child process each: the fit's time is the simulations'.
  options.num_threads = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.function_tolerance = 1e-5;
  options.parameter_tolerance = 1e-4;
  options.logging_type = ceres::SILENT;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  if (evaluator.failures() > 0)
    std::cerr << "ccsim: warning: " << evaluator.failures() << " simulation(s) failed during the fit and were treated as "
              << "failed steps; the first: " << evaluator.failure() << "\n";

  // Standard errors: the covariance of the fit, scaled by the residuals' own variance.
  double ss = 0;
  std::size_t n = 0;
  for (const auto& r : rows)
    if (!r->holdout) {
      const double res = std::log(evaluator.simulate_us(*r, theta.data()) / r->call.measured_us);
      ss += res * res;
      ++n;
    }
  const double variance = n > free_count ? ss / static_cast<double>(n - free_count) : 0;
  ceres::Covariance::Options cov_options;
  cov_options.algorithm_type = ceres::DENSE_SVD;
  cov_options.null_space_rank = -1;
  ceres::Covariance covariance(cov_options);
  std::vector<std::pair<const double*, const double*>> blocks{{theta.data(), theta.data()}};
  std::vector<double> cov(k * k, 0.0);
  bool have_cov = covariance.Compute(blocks, &problem) && covariance.GetCovarianceBlock(theta.data(), theta.data(), cov.data());
  for (std::size_t j = 0; j < k; ++j) {
    unknowns[j].theta = theta[j];
    unknowns[j].sigma = have_cov && unknowns[j].free ? std::sqrt(std::max(0.0, cov[j * k + j] * variance)) : 0;
  }
  if (evaluator.simulations() > 0 && ::isatty(STDERR_FILENO)) std::cerr << "\r" << std::string(40, ' ') << "\r";

  // --- errors before and after ----------------------------------------------------------------------
  ErrorSummary e;
  std::vector<double> fb, fa, hb, ha;
  const std::vector<double> zero(k, 0.0);
  for (const auto& r : rows) {
    const double before = r->call.measured_us / evaluator.simulate_us(*r, zero.data()) - 1;
    const double after = r->call.measured_us / evaluator.simulate_us(*r, theta.data()) - 1;
    (r->holdout ? hb : fb).push_back(std::fabs(before));
    (r->holdout ? ha : fa).push_back(std::fabs(after));
  }
  e.fit_before = median(fb), e.fit_after = median(fa), e.holdout_before = median(hb), e.holdout_after = median(ha);
  e.fit_n = fb.size(), e.holdout_n = hb.size();

  // --- report ---------------------------------------------------------------------------------------
  std::cout << "# calibrate " << prior.name() << " on " << logs.size() << " log(s), " << e.fit_n << " sizes fitted";
  if (e.holdout_n) std::cout << ", " << e.holdout_n << " held out";
  std::cout << "; " << evaluator.simulations() << " simulations; solver: " << std::max<std::size_t>(summary.iterations.size(), 1) - 1
            << " iterations, " << ceres::TerminationTypeToString(summary.termination_type) << "\n";
  for (const auto& l : logs)
    if (!l.machine_from_log.empty())
      std::cout << "#   " << std::filesystem::path(l.c.log).filename().string() << ": " << l.topology.name()
                << ", machine: " << l.machine_from_log << "\n";
  std::cout << "#   parameter                             prior      fitted     +-1 sigma   scale   sensitivity\n";
  const Model fitted = evaluator.model_at(theta.data(), "fitted");
  for (const auto& u : unknowns) {
    for (std::size_t pi = 0; pi < u.params.size(); ++pi) {
      const std::string& p = u.params[pi];
      std::cout << "    " << std::left << std::setw(36) << p << std::right << std::setw(10) << std::setprecision(4)
                << std::defaultfloat << prior.get(p);
      if (!u.free) {
        if (prior.get(p) == 0) std::cout << "   kept: 0 (none) cannot be scaled\n";
        else
          std::cout << "   kept: not identifiable from these sizes (sensitivity " << std::setprecision(3) << u.sensitivity
                    << " < 0.01)\n";
        continue;
      }
      std::cout << std::setw(12) << fitted.get(p) << std::setw(12) << fitted.get(p) * u.sigma << std::setw(9)
                << std::fixed << std::setprecision(3) << std::exp(u.theta) << std::setw(12) << u.sensitivity
                << std::defaultfloat;
      if (pi == 0 && u.params.size() > 1) std::cout << "  (" << u.name << ": one scale)";
      if (u.theta <= u.lower + 1e-6 || u.theta >= u.upper - 1e-6) std::cout << "  AT BOUND";
      if (u.sigma > 0.5) std::cout << "  poorly determined";
      std::cout << "\n";
    }
  }
  std::cout << "# error (median |measured/simulated - 1|): fitted sizes " << percent(e.fit_before) << " -> "
            << percent(e.fit_after) << " (n=" << e.fit_n << ")";
  if (e.holdout_n)
    std::cout << "; held out " << percent(e.holdout_before) << " -> " << percent(e.holdout_after) << " (n=" << e.holdout_n << ")";
  std::cout << "\n";
  if (e.fit_after > 0.2)
    std::cerr << "ccsim: warning: after calibration the median error is still " << percent(e.fit_after)
              << ": the model does not describe these logs well (a different machine, or an unhealthy run?)\n";

  std::string log_names;
  for (const auto& l : logs) log_names += (log_names.empty() ? "" : ", ") + std::filesystem::path(l.c.log).filename().string();
  nlohmann::json report{{"logs", nlohmann::json::array()},
                        {"prior_model", prior.name()},
                        {"simulations", evaluator.simulations()},
                        {"termination", ceres::TerminationTypeToString(summary.termination_type)},
                        {"error", {{"fit_before", e.fit_before}, {"fit_after", e.fit_after}, {"fit_n", e.fit_n},
                                   {"holdout_before", e.holdout_before}, {"holdout_after", e.holdout_after},
                                   {"holdout_n", e.holdout_n}}},
                        {"unknowns", nlohmann::json::array()}};
  for (const auto& l : logs) report["logs"].push_back(l.c.log);
  Model out = prior;
  for (const auto& u : unknowns) {
    nlohmann::json ju{{"name", u.name}, {"params", u.params}, {"identifiable", u.free}, {"sensitivity", u.sensitivity},
                      {"scale", std::exp(u.theta)}, {"log_scale_sigma", u.sigma}};
    report["unknowns"].push_back(ju);
    if (!u.free) continue;
    for (const auto& p : u.params) {
      std::ostringstream src;
      src << "ccsim calibrate on " << log_names << ": " << std::setprecision(4) << fitted.get(p) << " +- "
          << fitted.get(p) * u.sigma << " (prior " << prior.get(p) << ", " << prior.parameters().at(p).source << ")";
      out.set(p, fitted.get(p), src.str());
    }
  }
  if (!a.out_file.empty()) {
    nlohmann::json j = out.to_json();
    j["name"] = prior.name() + "-calibrated";
    j["description"] = "Fitted by ccsim calibrate to " + log_names + " from the " + prior.name() + " model.";
    j["calibration"] = report;
    std::ofstream f(a.out_file);
    if (!f) throw Error(a.out_file + ": cannot open for writing");
    f << j.dump(2) << "\n";
    std::cout << "# wrote " << a.out_file << " (perf/run/accuracy --model " << a.out_file << ")\n";
  }
  if (!a.json_file.empty()) {
    std::ofstream f(a.json_file);
    if (!f) throw Error(a.json_file + ": cannot open for writing");
    f << report.dump(2) << "\n";
  }
  return 0;
#endif
}

}  // namespace

Runner add_calibrate(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Fit the timing model to measured nccl-tests logs of one system (robust least squares, Ceres)");
  cmd->add_option("logs", a->logs, "nccl-tests output files of one system (all use --topo, --nodes, ...; without --topo, the machine their device lines, or else their file names, name)");
  add_topology_options(cmd, a->topology);
  say_machine_from_log(cmd);
  cmd->add_option("--map", a->map_file,
                  "Map file naming each log's machine (tests/data/measured-map.json); the machine options other than "
                  "--topo, --nodes and --gpus apply to every entry, over what it says");
  cmd->add_option("--only", a->only, "With --map: the logs whose path contains this text");
  cmd->add_flag("--all", a->all, "With --map: accept runs flagged unhealthy");
  cmd->add_option("--model", a->model_file,
                  "Prior model: a JSON file or a built-in model's name (default: the map's model for the logs, else the "
                  "one for the NCCL release they state, else the GPU family's)");
  cmd->add_option("--gpu-bench", a->gpu_bench_file,
                  "Model file from `ccsim gpu bench --out`: the prior, with its measured HBM rate kept as measured");
  cmd->add_option("--params", a->params,
                  "Parameters to fit, e.g. nvlink_efficiency,hop_latency_us.nvlink.* (a trailing * scales a family; "
                  "default: each protocol's launch latency (and the NVLS kernels' where the machine has NVLS), "
                  "hop latencies, the host's issue time and link efficiencies of the machine's path classes, "
                  "LL/LL128 channel caps)")
      ->delimiter(',');
  cmd->add_option("--holdout", a->holdout,
                  "Keep K logs aside (the last K named) and report their error; with fewer logs, every K-th size")
      ->capture_default_str();
  cmd->add_option("--column", a->column, "Measured column: out-of-place or in-place")->capture_default_str();
  cmd->add_option("--min-size", a->min_size, "Skip sizes below this")->capture_default_str();
  cmd->add_option("--max-size", a->max_size, "Skip sizes above this")->capture_default_str();
  add_run_choice_options(cmd, a->algorithm, a->protocol);
  add_nccl_env_option(cmd, a->nccl_env);
  add_collective_option(cmd, a->collective, a->run);
  cmd->add_option("--max-iterations", a->max_iterations, "Solver iterations at most")
      ->check(CLI::Range(1, 1000000, "INT"))
      ->capture_default_str();
  cmd->add_option("--huber", a->huber, "Huber loss threshold on log-time residuals (0.05: 5%)")
      ->check(finite_number(0.0, true))
      ->capture_default_str();
  cmd->add_option("--out", a->out_file, "Write the calibrated model (works with perf, run, accuracy --model)")->check(writable_file());
  cmd->add_option("--json", a->json_file, "Write the fit report as JSON")->check(writable_file());
  cmd->add_option("-j,--jobs", a->jobs,
                  "Rows simulated at once during the fit, each in a process of its own (0: one per core); memory "
                  "grows with it")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  return [a, cmd] { return run_calibrate(*a, *cmd); };
}

}  // namespace ccsim::cli
