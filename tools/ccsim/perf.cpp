// ccsim perf <collective>: an nccl-tests run, simulated.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "ccsim/commands.hpp"
#include "ccsim/validators.hpp"
#include "ccsim/inspect.hpp"
#include "ccsim/measure.hpp"
#include "ccsim/parallel.hpp"
#include "ccsim/planner.hpp"
#include "ccsim/sizes.hpp"
#include "ccsim/topology_args.hpp"
#include "sim/error.hpp"
#include "sim/topology/json_io.hpp"
#include "sim/topology/presets.hpp"
#include "sim/topology/rings.hpp"

namespace ccsim::cli {

namespace {

struct PerfArgs {
  std::string collective;
  SizeSweep sweep;
  std::string type = "float";
  std::string op = "sum";
  int root = 0;
  int check = 1;
  TopologyArgs topology;
  std::optional<int> ranks;
  int gpus_per_thread = 1;
  int iters = kNcclTestsIters;
  int threads = 1;       // nccl-tests -t: with -g, the ranks of one process (see its help)
  int warmup_iters = 5;  // nccl-tests -w (its default 5): accepted, changes nothing
  std::string model_file;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  std::string select = "nccl";
  std::string nccl_version;
  std::vector<std::string> nccl_env;  // --nccl-env NAME=VALUE
  std::optional<int> channels;
  std::string chunk_bytes;
  std::string check_limit = "1G";
  std::string format = "table";
  std::string timeline_file;
  std::vector<std::string> levels;
  std::string trace_file;
  bool links = false;
  bool whole = false;           // simulate every size's whole schedule (no extrapolation)
  std::string column = "both";  // the table's columns to simulate: both, out-of-place or in-place
  int jobs = 1;                 // points simulated at once, each in a worker process
};

int run_perf(const PerfArgs& a) {
  const CollectiveKind kind = parse_collective(a.collective);
  const std::vector<Bytes> sizes = expand(a.sweep);
  std::vector<DataType> types;
  if (a.type == "all") types = all_data_types();
  else types = {parse_data_type(a.type)};
  std::vector<ReduceOp> ops;
  if (!is_reduction(kind)) ops = {ReduceOp::sum};
  else if (a.op == "all") ops = all_reduce_ops();
  else ops = {parse_reduce_op(a.op)};

  const topo::Topology topology = build_topology(a.topology);
  Model model = a.model_file.empty() ? Model::builtin(topology.gpu_arch()) : Model::named(a.model_file);
  const int nranks = a.ranks.value_or(static_cast<int>(topology.gpu_count()));
  if (nranks < 1 || static_cast<std::size_t>(nranks) > topology.gpu_count())
    throw Error("--ranks " + std::to_string(nranks) + " does not fit " + topology.name() + " (1.." +
                std::to_string(topology.gpu_count()) + " GPUs)");

  // Only hierarchical reads the levels; --select fastest tries it when they are given.
  if (!a.levels.empty() && a.algorithm != "hierarchical" && !(a.algorithm == "auto" && a.select == "fastest"))
    throw Error("--levels names hierarchical's algorithm per level: use it with --algo hierarchical, or with "
                "--select fastest, which then tries hierarchical too (here --algo is " + a.algorithm + ")");
  if (a.levels.size() > 2)
    throw Error("--levels takes two algorithms, inside a node then across nodes (e.g. ring,ring); got " +
                std::to_string(a.levels.size()));
  Selection selection;
  selection.algorithm = a.algorithm;
  selection.protocol = a.protocol;
  selection.mode = a.select;
  selection.channels = a.channels;
  if (!a.chunk_bytes.empty()) selection.chunk_bytes = parse_bytes(a.chunk_bytes);
  selection.levels = a.levels;
  selection.gpus_per_thread = a.gpus_per_thread;
  selection.threads = a.threads;
  selection.iters = a.iters;
  if (!a.nccl_version.empty()) {
    selection.nccl_release = nccl::release_of(a.nccl_version);
    if (selection.nccl_release == 0) throw Error("--nccl: expected an NCCL 2.x version such as 2.26, got \"" + a.nccl_version + "\"");
    if (selection.nccl_release > nccl::kLatestRelease)
      std::cerr << "ccsim: note: --nccl " << a.nccl_version << " is newer than 2." << nccl::kLatestRelease
                << ", the newest release whose cost model ccsim knows: 2." << nccl::kLatestRelease << "'s picks\n";
  }
  selection.nccl_env_settings = parse_nccl_env(a.nccl_env);
  model = with_nccl_buffers(std::move(model), selection.nccl_env_settings);
  const Planner planner(topology, model, nranks, selection);
  const Columns columns = a.column == "out-of-place" ? Columns::out_of_place
                          : a.column == "in-place"   ? Columns::in_place
                                                     : Columns::both;
  const bool check = a.check != 0;
  const Bytes check_limit = parse_bytes(a.check_limit);

  PerfReport report;
  report.kind = kind;
  report.topology = topology.name();
  report.model = model.name();
  report.nccl_env = nccl::to_string(selection.nccl_env_settings);
  report.nranks = nranks;
  EngineOptions engine;
  engine.record_steps = !a.timeline_file.empty();
  nlohmann::json timelines = nlohmann::json::array();
  const bool tty = ::isatty(STDERR_FILENO);
  const std::size_t total = sizes.size() * types.size() * ops.size();
  const bool progress = tty && total > 4;
  // A point that takes long (a thousand GPUs) says how far its simulation is, from the process
  // that runs it: the label is the point's as it was when that process started. Points run side
  // by side (--jobs) say instead how many of them have ended.
  std::string point;
  if (tty && a.jobs <= 1) engine.progress = steps_progress_line(point);
  std::size_t skipped_small = 0;
  struct Last {  // the last (largest) point, for --trace and --links
    CollectiveSpec spec;
    PointOptions point;
    double total_s = 0;
  };
  std::optional<Last> last;
  struct Item {
    CollectiveSpec spec;
    Bytes size = 0;
    std::string label;
  };
  // What may run a point, planned where it runs: a size that cannot run fails in its turn, after
  // the rows before it.
  auto candidates_for = [&](const CollectiveSpec& spec) {
    std::vector<PointOptions> candidates = planner.candidates(spec);
    for (auto& c : candidates) {
      c.check = check;
      c.check_limit_bytes = check_limit;
      c.columns = columns;
      c.extrapolate = !a.whole;
    }
    return candidates;
  };
  std::vector<Item> items;
  for (auto t : types)
    for (auto op : ops)
      for (Bytes s : sizes) {
        Item item;
        item.spec.kind = kind;
        item.spec.type = t;
        item.spec.op = op;
        item.spec.root = a.root;
        item.spec.nranks = nranks;
        // As nccl-tests does, a size is rounded down to whole elements (per rank for the collectives
        // whose size is the total: -b 1 -f 2 starts at 0, 0, 4 B), and the row prints what runs.
        item.spec.count = count_for_size(kind, t, s, nranks);
        if (item.spec.count == 0) {
          ++skipped_small;
          continue;
        }
        item.size = s;
        items.push_back(std::move(item));
      }
  for (std::size_t i = 0; i < items.size(); ++i)
    items[i].label = "[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] " + format_bytes(items[i].size) + " " +
                     std::string(to_string(items[i].spec.type));
  // The table and CSV go out a row at a time, as nccl-tests prints its rows: a sweep of a thousand
  // GPUs shows each size as it ends, through a pipe or a file too, and a run stopped early keeps
  // them. JSON is one document, written at the end.
  std::optional<TableWriter> table;
  if (a.format == "table") table.emplace(std::cout, report, columns != Columns::in_place, columns != Columns::out_of_place);
  else if (a.format == "csv") print_csv_header(std::cout);
  std::cout << std::flush;
  auto compute = [&](std::size_t i) {
    point = items[i].label;
    if (progress && a.jobs <= 1) std::cerr << "\r\033[K" << point << std::flush;
    return point_to_json(measure_best(items[i].spec, topology, model, candidates_for(items[i].spec), engine),
                         engine.record_steps);
  };
  auto emit = [&](std::size_t i, const nlohmann::json& j) {
    const Point p = point_from_json(j, items[i].spec);
    report.rows.push_back(p.row);
    report.rows.back().out_of_place.simulated = columns != Columns::in_place;
    report.rows.back().in_place.simulated = columns != Columns::out_of_place;
    if (tty) std::cerr << "\r\033[K" << std::flush;  // the row, not the point's label, stays on a terminal
    if (table) table->row(report.rows.back());
    else if (a.format == "csv") print_csv_row(std::cout, report, report.rows.back());
    std::cout << std::flush;
    if (!a.trace_file.empty() || a.links)
      last = Last{items[i].spec, candidate_of(p, candidates_for(items[i].spec)), p.row.out_of_place.time_us * 1e-6};
    if (engine.record_steps)
      timelines.push_back({{"size_bytes", items[i].size}, {"type", to_string(items[i].spec.type)},
                           {"op", to_string(items[i].spec.op)}, {"timeline", p.simulation.timeline}});
  };
  for_each_ordered(items.size(), a.jobs, compute, emit, workers_progress(progress, a.jobs, items.size(), "points"));
  if (tty) std::cerr << "\r\033[K" << std::flush;
  if (skipped_small > 0)
    std::cerr << "ccsim: note: " << skipped_small << " size(s) below one element per rank skipped\n";

  if (!a.timeline_file.empty()) {
    std::ofstream out(a.timeline_file);
    if (!out) throw Error(a.timeline_file + ": cannot open for writing");
    out << timelines.dump(1) << "\n";
    if (!out) throw Error(a.timeline_file + ": write failed");
  }
  if (table) table->finish();
  else if (a.format == "json") std::cout << to_json(report).dump(2) << "\n";
  if (last && a.links)  // after a table; on stderr when stdout is machine-readable
    print_links(a.format == "table" ? std::cout : std::cerr, last->spec, topology, model, last->point, last->total_s);
  if (last && !a.trace_file.empty()) {
    write_trace(a.trace_file, last->spec, topology, model, last->point,
                "ccsim perf " + a.collective + " " + format_bytes(last->spec.size_bytes()) + " on " + topology.name());
    std::cerr << "ccsim: wrote a Chrome trace of the " << format_bytes(last->spec.size_bytes()) << " point to " << a.trace_file
              << " (open it in ui.perfetto.dev)\n";
  }
  for (const auto& row : report.rows)
    for (const auto* r : {&row.out_of_place, &row.in_place})
      if (r->wrong && *r->wrong > 0) return 1;  // nccl-tests fails a run with wrong data too
  return 0;
}

}  // namespace

Runner add_perf(CLI::App& app) {
  auto args = std::make_shared<PerfArgs>();
  auto* cmd = app.add_subcommand("perf", "Simulate an nccl-tests run (e.g. all_reduce_perf) and print its table");
  cmd->add_option("collective", args->collective,
                  "Collective: all_reduce, reduce_scatter, all_gather, broadcast, reduce, gather, scatter, "
                  "alltoall, sendrecv")->required();
  cmd->add_option("-b,--minbytes", args->sweep.min_bytes, "Smallest message size (K/M/G suffixes)")->capture_default_str();
  cmd->add_option("-e,--maxbytes", args->sweep.max_bytes, "Largest message size")->capture_default_str();
  cmd->add_option("-i,--stepbytes", args->sweep.step_bytes, "Size increment when -f is 1")->capture_default_str();
  cmd->add_option("-f,--stepfactor", args->sweep.step_factor, "Size multiplier between rows")->capture_default_str();
  cmd->add_option("-d,--datatype", args->type,
                  "int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double, or all")->capture_default_str();
  cmd->add_option("-o,--op", args->op, "Reduction: sum prod min max avg lor, or all")->capture_default_str();
  cmd->add_option("-r,--root", args->root, "Root rank of rooted collectives")->capture_default_str();
  cmd->add_option("-c,--check", args->check, "Check data with the CPU executor (0: print N/A)")->capture_default_str();
  cmd->add_option("--check-limit", args->check_limit,
                  "Host memory the data check may use; larger points print N/A")->capture_default_str();
  cmd->add_flag("--whole", args->whole,
                "Simulate every size's whole schedule. Without it a size past 16 loops of the pipeline (ranks x "
                "channels x chunk) is timed on the line through three smaller sizes, L/4, L/2 and L from 8 loops, "
                "once their two slopes agree within 0.1% (L doubles at most twice; then the last slope is taken): "
                "a fraction of the wall time and memory, for a periodic pipeline the same time");
  add_topology_options(cmd, args->topology);
  cmd->add_option("--ranks", args->ranks, "Ranks in the communicator (first N GPUs; default: all)");
  cmd->add_option("-g,--gpus-per-thread", args->gpus_per_thread,
                  "GPUs one host thread drives, as nccl-tests -g: a call takes at least this many times the model's "
                  "host_issue_us plus host_channel_us per channel (the host issues each GPU's launch in turn); its GPUs share "
                  "one process (see -t)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  // nccl-tests' -t and -w, accepted so that its command lines run as they are.
  cmd->add_option("-t,--nthreads", args->threads,
                  "Host threads per process, as nccl-tests -t: each drives -g GPUs and issues their launches beside "
                  "the others, so only -g enters the host's issue time; the ranks are the machine's (--ranks). The -t x -g "
                  "ranks of a process reach each other by NCCL's direct pointers: a collective's last Simple receive "
                  "from one of them has no slice to copy out of a FIFO")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", args->warmup_iters,
                  "Calls before the timed loop, as nccl-tests -w: the simulation has nothing to warm (no first-call "
                  "setup), so they change nothing")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  cmd->add_option("-n,--iters", args->iters,
                  "Calls in the timed loop, as nccl-tests -n: the loop starts idle, so a rooted call (whose calls "
                  "overlap back to back) pays one call's fill and drain over them")
      ->check(CLI::Range(1, 1 << 30))
      ->capture_default_str();
  cmd->add_option("--model", args->model_file,
                  "Timing model: a JSON file or a built-in model's name (`ccsim model`; default: the GPU family's)");
  cmd->add_option("--algo", args->algorithm,
                  "Algorithm (see `ccsim algos`), or auto: what NCCL's cost model picks per size (with --select "
                  "fastest: the fastest by simulation)")->capture_default_str();
  cmd->add_option("--proto", args->protocol, "Protocol: simple, ll, ll128, or auto (as --algo)")->capture_default_str();
  cmd->add_option("--select", args->select,
                  "What auto means: nccl (NCCL's cost model, 2.30's unless --nccl) or fastest (simulate every algorithm and "
                  "protocol the machine allows, keep the fastest)")
      ->check(CLI::IsMember({"nccl", "fastest"}))
      ->capture_default_str();
  cmd->add_option("--nccl", args->nccl_version,
                  "NCCL release whose cost model picks for auto (e.g. 2.26): 2.18-2.29 choose by their own tables "
                  "and formulas where they differ from 2.30's, 2.8 by its own (Tree, Ring and CollNet only); "
                  "2.9-2.17, earlier releases and the default take 2.30's. "
                  "Point-to-point operations (alltoall, sendrecv, gather, scatter) follow any release's rules: LL "
                  "for small ones from 2.12, at most four operations per channel up to 2.18, fewer channels per "
                  "network peer on many ranks from 2.20, a network peer's channels by its NICs' bandwidth from 2.29");
  add_nccl_env_option(cmd, args->nccl_env);
  cmd->add_option("--channels", args->channels,
                  "Channels (default: what NCCL would launch: for ring and tree twice the rings its search finds, two blocks per ring, otherwise the graph's count; fewer for small messages; for alltoall, gather, scatter and sendrecv the channels NCCL splits each point-to-point operation over, by its size)");
  cmd->add_option("--chunk-bytes", args->chunk_bytes,
                  "Data per pipelined step per channel (default: NCCL's choice for the call: the model's chunk for "
                  "Ring, one step (a quarter) for other Simple algorithms and ring broadcast/reduce, NVLS/NVLSTree "
                  "16K-128K, Tree LL128 and CollNet (chain at most 256K) smaller for smaller calls)");
  cmd->add_option("--format", args->format, "Output: table (nccl-tests), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--levels", args->levels, "hierarchical: algorithms inside a node, then across nodes (e.g. ring,ring)")
      ->delimiter(',');
  cmd->add_option("--timeline", args->timeline_file,
                  "Write every point's timeline (each step's start, end, wire bytes; each link's bytes) as JSON")
      ->check(writable_file());
  cmd->add_option("--trace", args->trace_file,
                  "Write a Chrome trace (ui.perfetto.dev) of the last (largest) point: a track per rank and stream, a "
                  "utilisation counter per link")
      ->check(writable_file());
  cmd->add_flag("--links", args->links, "Print the links of the last (largest) point, busiest first: the bottleneck");
  cmd->add_option("--column", args->column,
                  "Columns to simulate: both (as nccl-tests prints them), out-of-place or in-place; the other prints "
                  "N/A. Where the two differ (all_gather and alltoall drop a rank's own block in place) one column "
                  "takes half the time")
      ->check(CLI::IsMember({"both", "out-of-place", "in-place"}))
      ->capture_default_str();
  cmd->add_option("-j,--jobs", args->jobs,
                  "Sizes simulated at once, each in a process of its own (rows still print in order); each holds "
                  "its own schedule, so memory grows with it: fewer start while the memory available would not "
                  "hold one more as large as the largest so far")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  return [args, cmd] {
    refuse_idle_fabric_options(*cmd, args->topology);
    return run_perf(*args);
  };
}

}  // namespace ccsim::cli
