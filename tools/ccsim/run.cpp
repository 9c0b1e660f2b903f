// ccsim run SCENARIO: every variant x collective x algorithm x size of a what-if scenario, compared.
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "ccsim/commands.hpp"
#include "ccsim/validators.hpp"
#include "ccsim/inspect.hpp"
#include "ccsim/parallel.hpp"
#include "ccsim/planner.hpp"
#include "ccsim/plot.hpp"
#include "ccsim/run_report.hpp"
#include "sim/bounds.hpp"
#include "sim/error.hpp"
#include "sim/scenario.hpp"

namespace ccsim::cli {

namespace {

struct RunArgs {
  std::string scenario;
  std::string out;
  bool plot = false;
  std::string trace_file;
  std::string trace_size;
  bool links = false;
  int jobs = 1;  // points simulated at once, each in a worker process
};

// nccl-tests' conventions, as `perf` applies them: block collectives round the count down to a
// multiple of the ranks. Empty when the size is below one element per rank.
std::optional<CollectiveSpec> spec_for(CollectiveKind kind, Bytes size, const Sweep& sweep, int nranks) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.type = sweep.type;
  spec.op = sweep.op;
  spec.nranks = nranks;
  spec.count = count_for_size(kind, sweep.type, size, nranks);
  if (spec.count == 0) return std::nullopt;
  return spec;
}

int nodes_spanned(const topo::Topology& t, int nranks) {
  std::set<int> nodes;
  for (int r = 0; r < nranks; ++r) nodes.insert(t.device(t.gpu(static_cast<std::size_t>(r))).node);
  return static_cast<int>(nodes.size());
}

// "tree.json" for one variant, "tree.2-nodes.json" for each of several.
std::string trace_path(const std::string& file, const std::string& variant, bool several) {
  if (!several) return file;
  std::string safe;
  for (char c : variant) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
  const std::filesystem::path p(file);
  return (p.parent_path() / (p.stem().string() + "." + safe + p.extension().string())).string();
}

// A broken invariant of ccsim's own ("internal: ..."), which ends the run, not a point's refusal,
// which makes it n/a.
bool is_internal(const Error& e) { return std::string_view(e.what()).starts_with("internal:"); }

// Runs one variant's sweep; `trace` receives the candidates that ran at the traced size.
class VariantRunner {
 public:
  VariantRunner(const Variant& v, System system, std::optional<Bytes> trace_size)
      : variant_(v), system_(std::move(system)), trace_size_(trace_size) {
    system_.model = with_nccl_buffers(std::move(system_.model), variant_.sweep.nccl_env_settings);
    nranks_ = static_cast<int>(system_.topology.gpu_count());
    capacity_ = capacity(system_.topology, system_.model, nranks_);
  }

  VariantResult run(const std::function<void(const std::string&)>& progress, const EngineOptions& engine, int jobs) {
    VariantResult r;
    r.name = variant_.name;
    r.description = variant_.description;
    r.topology = system_.topology.name();
    r.model = system_.model.name();
    r.ranks = nranks_;
    r.nodes = nodes_spanned(system_.topology, nranks_);
    const Sweep& sw = variant_.sweep;
    for (const auto& a : sw.algorithms)
      for (const auto& p : sw.protocols) r.columns.push_back(sw.protocols.size() > 1 ? a + "/" + p : a);
    std::vector<Slot> slots;
    for (CollectiveKind c : sw.collectives)
      for (std::size_t i = 0; i < r.columns.size(); ++i) {
        const std::string& algorithm = sw.algorithms[i / sw.protocols.size()];
        const std::string& protocol = sw.protocols[i % sw.protocols.size()];
        plan_column(slots, c, r.columns[i], algorithm, protocol);
      }
    // The points that run, in the sweep's order; the others (n/a) said why when planned.
    std::vector<std::size_t> runs;
    for (std::size_t k = 0; k < slots.size(); ++k)
      if (slots[k].candidates.empty()) progress(slots[k].label);
      else runs.push_back(k);
    auto compute = [&](std::size_t i) -> nlohmann::json {
      const Slot& slot = slots[runs[i]];
      if (jobs <= 1) progress(slot.label);
      try {
        return point_to_json(measure_best(*slot.spec, system_.topology, system_.model, slot.candidates, engine), false);
      } catch (const Error& e) {
        // The algorithm refusing this call (its compile) or the simulation failing (out of memory):
        // reported as it is.
        if (is_internal(e)) throw;
        return {{"refused", e.what()}};
      }
    };
    auto emit = [&](std::size_t i, const nlohmann::json& j) {
      Slot& slot = slots[runs[i]];
      if (jobs > 1) progress(slot.label);
      if (j.contains("refused")) {
        slot.point.reason = j["refused"].get<std::string>();
        return;
      }
      try {
        finish(slot, point_from_json(j, *slot.spec));
      } catch (const Error& e) {
        if (is_internal(e)) throw;
        slot.point.ran = false;  // the point's bound failed it: n/a, as a refused compile is
        slot.point.reason = e.what();
      }
    };
    for_each_ordered(runs.size(), jobs, compute, emit);
    for (auto& slot : slots)
      if (slot.planned) r.points.push_back(std::move(slot.point));
    return r;
  }

  const topo::Topology& topology() const { return system_.topology; }
  const Model& model() const { return system_.model; }
  // (collective, column) -> what ran at the traced size
  std::map<std::pair<CollectiveKind, std::string>, std::pair<CollectiveSpec, PointOptions>> traced;
  std::size_t skipped = 0;

 private:
  Selection selection(const std::string& algorithm, const std::string& protocol) const {
    Selection s;
    s.algorithm = algorithm;
    s.protocol = protocol;
    s.mode = variant_.sweep.select;
    s.channels = variant_.sweep.channels;
    s.chunk_bytes = variant_.sweep.chunk_bytes;
    s.nccl_env_settings = variant_.sweep.nccl_env_settings;
    return s;
  }

  // When NCCL's cost model refuses an algorithm, the algorithm's own refusal says more ("nvls
  // needs NVSwitches that reduce and multicast").
  std::string explain(const Error& e, const std::string& algorithm, const CollectiveSpec& spec) const {
    if (algorithm == "auto") return e.what();
    try {
      const Planner simple(system_.topology, system_.model, nranks_, selection(algorithm, "simple"));
      const auto c = simple.candidates(spec).front();
      algo::compile(c.algorithm, spec, c.algorithm_options);
    } catch (const Error& why) {
      return why.what();
    }
    // The algorithm could run: NCCL would not (nvls_tree on one node, say).
    return "NCCL 2.30's cost model never picks " + algorithm + " for this call on this machine (name a protocol to run it anyway)";
  }

  // One point of the sweep: what it is, what may run it (empty: n/a, the point says why).
  struct Slot {
    std::string label;
    std::optional<CollectiveSpec> spec;
    std::vector<PointOptions> candidates;
    RunPoint point;
    bool planned = false;  // a point of the results (false: below one element per rank, skipped)
  };

  void plan_column(std::vector<Slot>& slots, CollectiveKind c, const std::string& column, const std::string& algorithm,
                   const std::string& protocol) {
    const Sweep& sw = variant_.sweep;
    std::optional<Planner> planner;
    std::string planner_error;
    try {
      planner.emplace(system_.topology, system_.model, nranks_, selection(algorithm, protocol));
    } catch (const Error& e) {
      planner_error = e.what();
    }
    std::map<std::string, std::string> explained;  // an n/a reason is the same at every size
    for (Bytes size : sw.sizes) {
      if (size % element_bytes(sw.type) != 0)
        throw Error("variant \"" + variant_.name + "\": size " + std::to_string(size) + " B is not a multiple of the " +
                    std::to_string(element_bytes(sw.type)) + "-byte " + std::string(to_string(sw.type)) + " element");
      Slot& slot = slots.emplace_back();
      slot.label = variant_.name + " " + std::string(to_string(c)) + " " + column + " " + format_bytes(size);
      slot.spec = spec_for(c, size, sw, nranks_);
      if (!slot.spec) {
        ++skipped;
        continue;
      }
      slot.planned = true;
      RunPoint& p = slot.point;
      p.collective = c;
      p.column = column;
      p.size = size;
      // What to run: a refusal here means this machine or NCCL's cost model rules the algorithm out.
      try {
        if (!planner) throw Error(planner_error);
        slot.candidates = planner->candidates(*slot.spec);
      } catch (const Error& e) {
        auto it = explained.find(e.what());
        if (it == explained.end()) it = explained.emplace(e.what(), explain(e, algorithm, *slot.spec)).first;
        p.reason = it->second;
        continue;
      }
      for (auto& x : slot.candidates) {
        x.check = sw.check;
        x.check_limit_bytes = Bytes{256} << 20;
        // The report compares out-of-place times; the in-place layout is still data-checked.
        x.columns = Columns::out_of_place;
      }
    }
  }

  // A point that ran: its figures, its bound and, at the traced size, what ran it.
  void finish(Slot& slot, const Point& m) {
    RunPoint& p = slot.point;
    const CollectiveSpec& spec = *slot.spec;
    if (m.row.out_of_place.wrong.value_or(0) > 0 || m.row.in_place.wrong.value_or(0) > 0)
      throw Error("internal: " + m.row.algorithm + " computes wrong data at " + format_bytes(p.size));
    p.ran = true;
    p.algorithm = m.row.algorithm;
    p.protocol = std::string(to_string(m.row.protocol));
    p.channels = m.row.channels;
    p.time_us = m.row.out_of_place.time_us;
    p.algbw_gbps = m.row.out_of_place.algbw_gbps;
    p.busbw_gbps = m.row.out_of_place.busbw_gbps;
    const Bound b = lower_bound(spec, capacity_, reduces_in_network(p.algorithm));
    p.bound_busbw_gbps = perf_result(spec, b.time_s(), std::nullopt).busbw_gbps;
    p.efficiency = b.time_s() / (p.time_us * 1e-6);
    p.limiter = std::string(b.limiter());
    if (trace_size_ && p.size == *trace_size_) traced[{p.collective, p.column}] = {spec, candidate_of(m, slot.candidates)};
  }

  const Variant& variant_;
  System system_;
  std::optional<Bytes> trace_size_;
  int nranks_ = 0;
  Capacity capacity_;
};

int run_scenario(RunArgs a) {
  const auto t0 = std::chrono::steady_clock::now();
  const Scenario scenario = load_scenario(a.scenario);
  if (a.plot && a.out.empty()) {
    a.out = scenario.name;
    std::cerr << "ccsim: note: --plot without --out: writing into ./" << a.out << "\n";
  }
  if (!a.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);
    if (ec) throw Error(a.out + ": cannot create the output directory: " + ec.message());
  }
  std::size_t total = 0, done = 0;
  for (const auto& v : scenario.variants)
    total += v.sweep.collectives.size() * v.sweep.algorithms.size() * v.sweep.protocols.size() * v.sweep.sizes.size();
  const bool tty = ::isatty(STDERR_FILENO);
  const bool show_progress = tty && total > 4;
  std::string current;  // the point being simulated, for a long simulation's own progress
  auto progress = [&](const std::string& what) {
    current = "[" + std::to_string(++done) + "/" + std::to_string(total) + "] " + what;
    if (show_progress) std::cerr << "\r\033[K" << current << std::flush;
  };
  EngineOptions engine;
  if (tty && a.jobs <= 1) engine.progress = steps_progress_line(current);

  RunResult result{scenario.name, scenario.description, scenario.origin, {}};
  // The file's name only: the same output from any checkout (golden tests).
  std::cout << "# ccsim run " << scenario.name << " (" << std::filesystem::path(scenario.origin).filename().string() << "): " << scenario.variants.size()
            << " variant(s); the first, \"" << scenario.variants.front().name << "\", is the base\n";
  if (!scenario.description.empty()) std::cout << "# " << scenario.description << "\n";
  std::cout << "#\n";
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < scenario.variants.size(); ++i) {
    const Variant& v = scenario.variants[i];
    const auto v0 = std::chrono::steady_clock::now();
    std::optional<Bytes> trace_size;
    if (!a.trace_file.empty() || a.links) {
      // The traced size: the largest of the sweep, or the largest not above --trace-size.
      const Bytes limit = a.trace_size.empty() ? v.sweep.sizes.back() : parse_bytes(a.trace_size);
      for (Bytes s : v.sweep.sizes)
        if (s <= limit) trace_size = s;
      if (!trace_size) std::cerr << "ccsim: note: variant " << v.name << " has no size up to --trace-size " << a.trace_size << "\n";
    }
    VariantRunner runner(v, build_system(scenario, v), trace_size);
    result.variants.push_back(runner.run(progress, engine, a.jobs));
    skipped += runner.skipped;
    VariantResult& vr = result.variants.back();
    // The winner at the traced size, looked at closely: its links and its trace.
    std::optional<std::pair<CollectiveSpec, PointOptions>> closer;
    std::string closer_column;
    if (trace_size && !v.sweep.collectives.empty())
      if (const RunPoint* w = winner(vr, v.sweep.collectives.front(), *trace_size)) {
        closer = runner.traced.at({v.sweep.collectives.front(), w->column});
        closer_column = w->column;
      }
    if (closer && !a.trace_file.empty()) {
      const auto& [spec, point] = *closer;
      const std::string path = trace_path(a.trace_file, v.name, scenario.variants.size() > 1);
      write_trace(path, spec, runner.topology(), runner.model(), point,
                  "ccsim run " + scenario.name + ", variant " + v.name + ": " + closer_column + " " +
                      std::string(to_string(spec.kind)) + " " + format_bytes(*trace_size));
      if (tty) std::cerr << "\r\033[K";
      std::cerr << "ccsim: wrote a Chrome trace of " << v.name << " (" << closer_column << ", " << format_bytes(*trace_size)
                << ") to " << path << "\n";
    }
    vr.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - v0).count();
    if (tty) std::cerr << "\r\033[K" << std::flush;
    print_variant(std::cout, result, i);
    if (closer && a.links) {
      const RunPoint* w = winner(vr, closer->first.kind, *trace_size);
      print_links(std::cout, closer->first, runner.topology(), runner.model(), closer->second, w->time_us * 1e-6);
      std::cout << "#\n";
    }
    std::cout.flush();
  }
  if (skipped > 0) std::cerr << "ccsim: note: " << skipped << " point(s) below one element per rank skipped\n";
  if (!a.out.empty()) {
    const std::filesystem::path dir(a.out);
    write_results_json((dir / "results.json").string(), result);
    write_results_csv((dir / "results.csv").string(), result);
    std::cerr << "ccsim: wrote " << (dir / "results.json").string() << " and " << (dir / "results.csv").string() << "\n";
    if (a.plot) plot_results(a.out);
  }
  std::size_t points = 0, na = 0;
  for (const auto& v : result.variants)
    for (const auto& p : v.points) ++points, na += p.ran ? 0 : 1;
  std::cerr << "ccsim: " << points << " points (" << na << " n/a) in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
  return 0;
}

}  // namespace

Runner add_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a what-if scenario (scenarios/*.json): every variant x collective x algorithm x "
                                        "size, compared per variant against the base");
  cmd->add_option("scenario", args->scenario, "Scenario file (schema: scenarios/README.md)")->required();
  cmd->add_option("--out", args->out, "Directory for results.json and results.csv (and the plots)");
  cmd->add_flag("--plot", args->plot, "Plot busbw vs size (and time vs nodes) with tools/plot.py into --out");
  cmd->add_option("--trace", args->trace_file,
                  "Write a Chrome trace (ui.perfetto.dev) of each variant's winner at the traced size, one file per "
                  "variant (FILE.VARIANT.json when there are several)")
      ->check(writable_file());
  cmd->add_option("--trace-size", args->trace_size,
                  "The size --trace and --links look at: the largest of the sweep not above this (default: the largest)");
  cmd->add_flag("--links", args->links, "Print each variant's busiest links (winner at the --trace-size size): the bottleneck");
  cmd->add_option("-j,--jobs", args->jobs,
                  "Points simulated at once, each in a process of its own (tables and results as with one); each "
                  "holds its own schedule, so memory grows with it: fewer start while the memory available would "
                  "not hold one more as large as the largest so far")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  return [args] { return run_scenario(*args); };
}

}  // namespace ccsim::cli
