#pragma once
// One point of a sweep: compile the schedule, prove it on the CPU executor (when it fits the
// memory limit), simulate it, and turn the time into nccl-tests figures.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/algorithms/registry.hpp"
#include "sim/engine.hpp"
#include "sim/report.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim::cli {

// The columns of nccl-tests' table a point needs timed: an in-place call drops the copies that
// would read and write the same memory (in_place_variant); the other column repeats the time.
enum class Columns { both, out_of_place, in_place };

struct PointOptions {
  std::string algorithm = "ring";
  algo::AlgorithmOptions algorithm_options;
  bool check = true;
  Bytes check_limit_bytes = Bytes{1} << 30;  // host memory the data check may use
  // Beyond kSteadyLoops pipeline loops a schedule repeats itself: simulate two sizes inside that
  // range and extend the line through them (exact for a periodic pipeline). Off: simulate it all.
  bool extrapolate = true;
  // nccl-tests -g: GPUs one host thread issues each call to. The reported time is at least the
  // host's issue time for them (Model::host_issue_s); the timeline stays the GPUs' own.
  int gpus_per_thread = 1;
  // nccl-tests -t: host threads a process runs. A process's threads x gpus_per_thread ranks share
  // it, so NCCL joins them by direct pointers (EngineOptions::ranks_per_process).
  int threads = 1;
  // NCCL's point-to-point step across nodes (nccl::System::p2p_chunk_bytes: NCCL_P2P_NET_CHUNKSIZE,
  // 128 KiB by default): EngineOptions::p2p_net_chunk_bytes. 0: the engine's default.
  Bytes p2p_net_chunk_bytes = 0;
  // Calls in the timed loop (nccl-tests -n): back-to-back calls pay one call's fill and drain over
  // them (Timeline::per_call_s); 0 for the steady state alone.
  int iters = 0;
  Columns columns = Columns::both;
};

// nccl-tests' default -n: the calls it times when a run does not say.
constexpr int kNcclTestsIters = 20;

// Point-to-point operations (ncclSend, ncclRecv) the busiest host thread enqueues per call when it
// drives gpus_per_thread ranks (nccl-tests' alltoall, gather, scatter and sendrecv are built of
// them; ranks 0..G-1 share the first thread); 0 for the other collectives, one call per GPU.
int p2p_ops_per_thread(const CollectiveSpec& spec, int gpus_per_thread);

// Pipeline loops (ranks x channels x chunk) a schedule runs before its time is tested for linearity.
constexpr std::uint64_t kSteadyLoops = 8;

struct Point {
  PerfRow row;
  SimulationResult simulation;
  double compile_s = 0;
  bool extrapolated = false;  // the time comes from two smaller simulations (PointOptions::extrapolate)
};

// The engine options a point's run asks for: its process's ranks (nccl-tests -t x -g) and NCCL's
// point-to-point step across nodes.
EngineOptions with_run_options(EngineOptions engine, const PointOptions& options);

Point measure(const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
              const PointOptions& options, const EngineOptions& engine = {});

// A point as a worker process sends it back (for_each_ordered, --jobs): everything but its spec,
// which the caller has, and the simulation's timeline only `with_timeline` (perf --timeline).
nlohmann::json point_to_json(const Point& point, bool with_timeline);
Point point_from_json(const nlohmann::json& j, const CollectiveSpec& spec);

// EngineOptions::progress for a terminal: rewrites the line with `point` (read when the call
// comes, so the point being simulated) and the share of its steps simulated so far.
std::function<void(double)> steps_progress_line(const std::string& point);

}  // namespace ccsim::cli
