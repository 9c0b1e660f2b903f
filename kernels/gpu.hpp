#pragma once
// The CUDA backend as the rest of ccsim sees it: plain C++ types, no CUDA headers, so that the
// command line compiles the same with or without CUDA. Built without CUDA (no nvcc), every entry
// point but built_with_cuda() and inventory() throws GpuUnavailable.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cpu_executor.hpp"
#include "sim/datatype.hpp"
#include "sim/error.hpp"
#include "sim/reduce_op.hpp"
#include "sim/schedule.hpp"
#include "sim/timeline.hpp"

namespace ccsim::kernels::gpu {

// No CUDA in this build, or no device usable at run time.
struct GpuUnavailable : Error {
  using Error::Error;
};

bool built_with_cuda();

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  std::uint64_t memory_bytes = 0;
  int multiprocessors = 0;
  std::string pci_bus_id;
  double memory_bandwidth_gbps = 0;  // from the memory clock and bus width the driver reports
  std::uint64_t l2_bytes = 0;        // L2 cache (cudaDevAttrL2CacheSize); 0: not known
};

struct Inventory {
  int driver_version = 0, runtime_version = 0;
  std::vector<DeviceInfo> devices;
  // peer[i][j]: device i can read and write device j's memory directly (cudaDeviceCanAccessPeer).
  std::vector<std::vector<bool>> peer;
  // How i reaches j: "self", "nvlink", "pcie" (P2P without NVLink) or "host" (no P2P: staged through
  // host memory), from the driver's P2P attributes.
  std::vector<std::vector<std::string>> link_class;
  std::string problem;  // why no device is usable ("" when at least one is)
};
// Never throws: a build without CUDA, or a machine without a usable driver, says so in `problem`.
Inventory inventory();

// The timing-model family of a compute capability ("volta", "ampere", "hopper", "blackwell").
std::string arch_of(int cc_major, int cc_minor);

// --- Kernels -------------------------------------------------------------------------------------
constexpr int kMaxSources = 8;
constexpr int kMaxDestinations = 4;

// dst_j[i] = finalize(src_0[i] op src_1[i] op ... op src_{k-1}[i]) for every destination j, on
// `device`, with the host arrays uploaded at the given element offsets (to test misaligned access).
// Returns each destination's elements. The test harness of the kernels.
std::vector<std::vector<std::byte>> reduce_copy_on_device(int device, DataType type, ReduceOp op,
                                                          const std::vector<std::vector<std::byte>>& sources,
                                                          int destinations, std::uint64_t count,
                                                          std::uint64_t src_offset, std::uint64_t dst_offset,
                                                          bool finalize, int nranks);
// Byte copy through the copy kernel, with the source and destination at the given byte offsets.
std::vector<std::byte> copy_on_device(int device, const std::vector<std::byte>& source, std::uint64_t src_offset,
                                      std::uint64_t dst_offset);

// --- Executor ------------------------------------------------------------------------------------
struct ExecutorOptions {
  std::vector<int> devices{0};  // endpoint e runs on devices[e % size]: several virtual ranks per GPU
  int warmup = 2;               // untimed runs first (the first is the one whose data is checked)
  int iterations = 10;          // timed runs; the time is their mean, as nccl-tests reports it
  bool in_place = false;
  bool check = true;            // compare the first run's outputs with the CPU definition
  bool record_steps = true;     // one extra run with an event pair around every step
  bool graph = true;            // issue through a captured CUDA graph (falls back to streams)
};

struct GpuRunResult {
  double time_s = 0;  // mean over the timed runs, from the first step issued to the last finished
  Timeline timeline;  // makespan_s = time_s; steps from the recorded run (times from its start)
  CheckResult check;
  bool checked = false;
  std::vector<int> device_of_endpoint;
  bool graph = false;         // the timed runs were issued as one CUDA graph
  std::string graph_problem;  // why not, where capture failed
};
// Runs `schedule` on the GPUs: each stream a CUDA stream, each send a copy into the receiver's
// staging slot followed by an event the recv waits on (kernels/device_plan.hpp).
GpuRunResult run_schedule(const Schedule& schedule, const ExecutorOptions& options);

// --- Microbenchmarks -----------------------------------------------------------------------------
struct BandwidthPoint {
  std::uint64_t bytes = 0;  // buffer size (of each source)
  double seconds = 0;       // per call
  double gbps = 0;          // bytes read plus bytes written per second / 1e9
};
struct ReduceCopyBench {
  DataType type = DataType::fp32;
  std::vector<BandwidthPoint> points;
};
struct PeerBench {
  int from = 0, to = 0;
  std::string link_class;
  double latency_us = 0;  // one small copy, issue to completion, back to back
  double gbps = 0;        // payload bytes per second / 1e9 at the largest size
};
struct BenchResult {
  DeviceInfo device;
  std::vector<BandwidthPoint> copy;          // cudaMemcpyAsync device to device
  std::vector<BandwidthPoint> copy_kernel;   // ccsim's copy kernel
  std::vector<ReduceCopyBench> reduce_copy;  // 2 sources, 1 destination, sum
  double launch_us = 0;         // one empty kernel, back to back in a stream, per launch
  double event_us = 0;          // a dependent step on another stream over one on the same stream (inside
                                // a graph, as the executor runs, the hand-off is an edge: about 0)
  double step_us = 0;           // one dependent small step of the executor (kernel + event hand-off to
                                // another stream), timed inside a CUDA graph as the executor runs
  std::vector<PeerBench> peers;
};
struct BenchOptions {
  int device = 0;
  std::uint64_t max_bytes = 1ULL << 30;
  std::vector<DataType> types{DataType::fp32, DataType::bf16, DataType::fp16};
};
// `progress` gets one line per measurement as it goes (the whole bench takes seconds to a minute).
BenchResult bench(const BenchOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace ccsim::kernels::gpu
