#pragma once
// A sweep of one collective executed on the GPUs by the CUDA executor: shared by `ccsim gpu run`
// (prints the nccl-tests table) and `ccsim validate` (compares it with the simulator).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ccsim/sizes.hpp"
#include "kernels/gpu.hpp"
#include "sim/algorithms/registry.hpp"
#include "sim/report.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim::cli {

struct GpuSweepArgs {
  std::string collective;
  SizeSweep sweep{"1M", "1G", "1M", 2};
  std::string type = "float";
  std::string op = "sum";
  int root = 0;
  int ranks = 8;
  std::vector<int> devices{0};
  std::string algorithm = "ring";
  std::string protocol = "simple";
  int channels = 1;
  std::string chunk_bytes;  // default: the device family's model chunk for the protocol
  int iterations = 10;
  int warmup = 2;
  int check = 1;
  std::string check_limit = "256M";  // larger sizes are not checked (the host reference is slow)
};
void add_gpu_sweep_options(CLI::App& cmd, GpuSweepArgs& args);

struct GpuSize {
  CollectiveSpec spec;
  Bytes size = 0;
  kernels::gpu::GpuRunResult out_of_place, in_place;
};
struct GpuSweep {
  std::string device_name;  // of devices[0]
  std::string arch;         // its timing-model family
  algo::AlgorithmOptions options;
  GpuSweepArgs args;
  std::vector<GpuSize> sizes;
};

// The schedule of one size, exactly as the sweep ran it (validate recompiles it to simulate).
Schedule sweep_schedule(const GpuSweep& sweep, const CollectiveSpec& spec);
// Runs every size on the GPUs; prints progress on stderr when it is a terminal.
GpuSweep run_gpu_sweep(const GpuSweepArgs& args);
PerfReport perf_report(const GpuSweep& sweep);

// N ranks that stand for the virtual ranks of one GPU: N GPUs on one non-blocking switch, each port
// `port_bytes_per_s` per direction (validate's platform; also the link names of a measured trace).
topo::Topology virtual_platform(int ranks, double port_bytes_per_s);

nlohmann::json to_json(const GpuSweep& sweep);
// Reads a sweep written by `ccsim gpu run --json`; errors name the file and JSON path.
GpuSweep read_gpu_sweep(const std::string& path);

}  // namespace ccsim::cli
