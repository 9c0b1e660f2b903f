// ccsim bench: how fast the engine simulates a large ring all_reduce, and a direct alltoall across
// DGX H100 nodes (every rank sending to every other at once: the engine's hardest sharing problem).
// Prints wall time and peak memory of the simulating process for each point.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "ccsim/commands.hpp"
#include "ccsim/measure.hpp"
#include "ccsim/planner.hpp"
#include "sim/error.hpp"
#include "sim/topology/presets.hpp"

namespace ccsim::cli {

namespace {

struct BenchArgs {
  std::string gpus = "64,512,1024";
  std::string size = "1G";
  int channels = 1;
  std::string alltoall_nodes = "2,4,8";
};

// A comma-separated list of positive counts; "0" alone (where allowed) is the empty list.
std::vector<int> counts_of(const std::string& option, const std::string& list, const char* example, bool zero_is_none) {
  if (zero_is_none && list == "0") return {};
  std::vector<int> counts;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    try {
      counts.push_back(std::stoi(item));
    } catch (const std::exception&) {
      throw Error(option + ": \"" + item + "\" is not a number (expected a comma-separated list such as " + example + ")");
    }
    if (counts.back() < 1) throw Error(option + ": counts must be positive" + (zero_is_none ? " (or 0 alone: none)" : ""));
  }
  return counts;
}

// alltoall of `size` per rank on `nodes` DGX H100 nodes, as `ccsim perf alltoall` runs it (NCCL's
// point-to-point split: direct, its channels and protocol).
void bench_alltoall(int nodes, Bytes size) {
  topo::PresetOptions o;
  o.nodes = nodes;
  const topo::Topology topology = topo::make_preset("dgx-h100", o);
  const Model model = Model::builtin(topology.gpu_arch());
  CollectiveSpec spec;
  spec.kind = CollectiveKind::alltoall;
  spec.nranks = static_cast<int>(topology.gpu_count());
  spec.count = size / 4;
  const Planner planner(topology, model, spec.nranks, Selection{});
  PointOptions point = planner.candidates(spec).front();
  point.check = false;
  point.extrapolate = false;
  const Point p = measure(spec, topology, model, point);
  std::printf("%8d %8d %12llu %14.1f %12.2f %10.2f %10.2f %12.1f\n", nodes, spec.nranks,
              static_cast<unsigned long long>(p.row.messages), p.row.out_of_place.time_us,
              p.row.out_of_place.busbw_gbps, p.compile_s, p.compile_s + p.simulation.wall_s,
              static_cast<double>(p.simulation.peak_rss_bytes) / 1048576.0);
  std::fflush(stdout);
}

int run_bench(const BenchArgs& a) {
  const std::vector<int> counts = counts_of("--gpus", a.gpus, "64,512,1024", false);
  const std::vector<int> alltoall_nodes = counts_of("--alltoall-nodes", a.alltoall_nodes, "2,4,8", true);
  const Bytes size = parse_bytes(a.size);
  if (size % 4 != 0) throw Error("--size must be a multiple of 4 bytes (float elements)");
  if (a.channels < 1) throw Error("--channels must be at least 1");
  std::printf("# ccsim bench: ring all_reduce of %s float, simple protocol, %d channel(s), on nvswitch-flat\n",
              format_bytes(size).c_str(), a.channels);
  std::printf("# wall = schedule compile + simulation on this machine; peak RSS = the simulating process\n");
  std::printf("%8s %12s %14s %12s %10s %10s %12s\n", "gpus", "messages", "sim_time_us", "busbw_GB/s", "compile_s",
              "wall_s", "peak_rss_MB");
  for (int n : counts) {
    topo::PresetOptions o;
    o.gpus = n;
    const topo::Topology topology = topo::make_preset("nvswitch-flat", o);
    const Model model = Model::builtin(topology.gpu_arch());
    CollectiveSpec spec;
    spec.nranks = n;
    spec.count = size / 4;
    PointOptions point;
    point.check = false;
    point.algorithm_options.channels = a.channels;
    point.algorithm_options.chunk_bytes = model.chunk_bytes(Protocol::simple);
    point.extrapolate = false;  // the benchmark times the simulator on the whole schedule
    const Point p = measure(spec, topology, model, point);
    std::printf("%8d %12llu %14.1f %12.2f %10.2f %10.2f %12.1f\n", n, static_cast<unsigned long long>(p.row.messages),
                p.row.out_of_place.time_us, p.row.out_of_place.busbw_gbps, p.compile_s,
                p.compile_s + p.simulation.wall_s, static_cast<double>(p.simulation.peak_rss_bytes) / 1048576.0);
    std::fflush(stdout);
  }
  if (!alltoall_nodes.empty()) {
    std::printf("# alltoall of %s float per rank on DGX H100 nodes (NDR rail fat tree), as ccsim perf runs it: direct\n",
                format_bytes(size).c_str());
    std::printf("%8s %8s %12s %14s %12s %10s %10s %12s\n", "nodes", "gpus", "messages", "sim_time_us", "busbw_GB/s",
                "compile_s", "wall_s", "peak_rss_MB");
    for (int nodes : alltoall_nodes) bench_alltoall(nodes, size);
  }
  // Topology construction at cluster scale: replicated nodes joined by the fat tree.
  for (int nodes : {128, 1024}) {
    topo::PresetOptions o;
    o.nodes = nodes;
    const auto t0 = std::chrono::steady_clock::now();
    const topo::Topology t = topo::make_preset("dgx-h100", o);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("# topology dgx-h100 x%d: %zu GPUs, %zu devices, %zu links built in %.3f s\n", nodes, t.gpu_count(),
                t.devices().size(), t.links().size(), s);
  }
  return 0;
}

}  // namespace

Runner add_bench(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Engine speed: wall time and peak memory of large ring all_reduce and of direct alltoall simulations");
  cmd->add_option("--gpus", args->gpus, "Comma-separated GPU counts")->capture_default_str();
  cmd->add_option("--size", args->size, "Message size")->capture_default_str();
  cmd->add_option("--channels", args->channels, "Channels per ring")->capture_default_str();
  cmd->add_option("--alltoall-nodes", args->alltoall_nodes,
                  "Comma-separated DGX H100 node counts of a direct alltoall of --size per rank after the ring "
                  "(0: none)")
      ->capture_default_str();
  return [args] { return run_bench(*args); };
}

}  // namespace ccsim::cli
