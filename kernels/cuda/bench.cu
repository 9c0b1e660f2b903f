// What the GPUs are and how fast they move data: the inventory behind `ccsim gpu info` and the
// microbenchmarks behind `ccsim gpu bench`. Every figure is a mean over back-to-back calls timed
// with CUDA events, after a warm-up call.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/reduce_copy.cuh"

namespace ccsim::kernels::gpu {

bool built_with_cuda() { return true; }

Inventory inventory() {
  Inventory inv;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  cudaDriverGetVersion(&inv.driver_version);
  cudaRuntimeGetVersion(&inv.runtime_version);
  if (err != cudaSuccess) {
    inv.problem = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
    (void)cudaGetLastError();
    return inv;
  }
  if (count == 0) {
    inv.problem = "no CUDA device";
    return inv;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    DeviceInfo info;
    info.index = d;
    info.name = p.name;
    info.cc_major = p.major;
    info.cc_minor = p.minor;
    info.memory_bytes = p.totalGlobalMem;
    info.multiprocessors = p.multiProcessorCount;
    info.l2_bytes = static_cast<std::uint64_t>(std::max(p.l2CacheSize, 0));
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) info.pci_bus_id = bus;
    int clock_khz = 0, width_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, d) == cudaSuccess &&
        cudaDeviceGetAttribute(&width_bits, cudaDevAttrGlobalMemoryBusWidth, d) == cudaSuccess)
      info.memory_bandwidth_gbps = 2.0 * clock_khz * 1e3 * (width_bits / 8.0) / 1e9;  // double data rate
    (void)cudaGetLastError();
    inv.devices.push_back(info);
  }
  const std::size_t n = inv.devices.size();
  inv.peer.assign(n, std::vector<bool>(n, false));
  inv.link_class.assign(n, std::vector<std::string>(n, "host"));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        inv.link_class[i][j] = "self";
        continue;
      }
      int access = 0, atomics = 0;
      cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, static_cast<int>(i), static_cast<int>(j));
      cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, static_cast<int>(i), static_cast<int>(j));
      (void)cudaGetLastError();
      inv.peer[i][j] = access != 0;
      // Native peer atomics are an NVLink feature: PCIe P2P lacks them.
      if (access) inv.link_class[i][j] = atomics ? "nvlink" : "pcie";
    }
  return inv;
}

namespace {

__global__ void empty_kernel() {}

struct Buffer {
  void* p = nullptr;
  explicit Buffer(std::size_t bytes) {
    CCSIM_CUDA(cudaMalloc(&p, bytes));
    CCSIM_CUDA(cudaMemset(p, 1, bytes));
  }
  ~Buffer() { cudaFree(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// `body` captured once as a CUDA graph on `stream`, or null where capture fails (the capture is
// then closed and the error cleared).
cudaGraphExec_t capture_graph(cudaStream_t stream, const std::function<void()>& body) {
  (void)full_grid();  // device queries before capture, not during it
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  bool ok = true;
  try {
    body();
  } catch (const Error&) {
    ok = false;
  }
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamEndCapture(stream, &g) != cudaSuccess || g == nullptr || !ok ||
      cudaGraphInstantiate(&exec, g, 0) != cudaSuccess)
    exec = nullptr;
  if (g) cudaGraphDestroy(g);
  (void)cudaGetLastError();
  return exec;
}

struct Timer {
  cudaEvent_t a = nullptr, b = nullptr;
  Timer() {
    CCSIM_CUDA(cudaEventCreate(&a));
    CCSIM_CUDA(cudaEventCreate(&b));
  }
  ~Timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  // Seconds per call of `body` on `stream`: one warm-up, then enough calls for about 20 ms. With
  // `batched`, kBatch calls are captured as one CUDA graph and the graph is what gets launched, so
  // that a short call measures the GPU and not the host's launch rate.
  double per_call(cudaStream_t stream, const std::function<void()>& body, bool batched = true) {
    constexpr int kBatch = 16;
    cudaGraphExec_t exec = batched ? capture_graph(stream, [&] {
      for (int i = 0; i < kBatch; ++i) body();
    })
                                   : nullptr;
    const int calls_per_unit = exec ? kBatch : 1;
    auto unit = [&] {
      if (exec) CCSIM_CUDA(cudaGraphLaunch(exec, stream));
      else body();
    };
    unit();
    CCSIM_CUDA(cudaStreamSynchronize(stream));
    int reps = 1;
    double seconds = 0;
    for (;;) {
      CCSIM_CUDA(cudaEventRecord(a, stream));
      for (int i = 0; i < reps; ++i) unit();
      CCSIM_CUDA(cudaEventRecord(b, stream));
      CCSIM_CUDA(cudaEventSynchronize(b));
      float ms = 0;
      CCSIM_CUDA(cudaEventElapsedTime(&ms, a, b));
      if (ms >= 20 || reps >= (1 << 16)) {
        seconds = ms * 1e-3 / reps / calls_per_unit;
        break;
      }
      reps = ms <= 0.01f ? reps * 64 : std::min(reps * 64, static_cast<int>(reps * 25.0 / ms) + 1);
    }
    if (exec) cudaGraphExecDestroy(exec);
    return seconds;
  }
};

std::vector<std::uint64_t> sizes_up_to(std::uint64_t max_bytes) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 1ULL << 20; s <= max_bytes; s *= 4) out.push_back(s);
  if (out.empty() || out.back() != max_bytes) out.push_back(max_bytes);
  return out;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

}  // namespace

BenchResult bench(const BenchOptions& options, const std::function<void(const std::string&)>& progress) {
  const Inventory inv = inventory();
  if (!inv.problem.empty()) throw GpuUnavailable("no usable GPU: " + inv.problem);
  if (options.device < 0 || options.device >= static_cast<int>(inv.devices.size()))
    throw Error("--device " + std::to_string(options.device) + ": there are " + std::to_string(inv.devices.size()) +
                " devices");
  BenchResult r;
  r.device = inv.devices[static_cast<std::size_t>(options.device)];
  CCSIM_CUDA(cudaSetDevice(options.device));
  cudaStream_t stream = nullptr, other = nullptr;
  CCSIM_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CCSIM_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  Timer timer;
  const std::uint64_t max_bytes = std::max<std::uint64_t>(options.max_bytes, 1ULL << 20);
  {
    Buffer a(max_bytes), b(max_bytes), c(max_bytes);
    for (std::uint64_t size : sizes_up_to(max_bytes)) {
      const double t = timer.per_call(stream, [&] { CCSIM_CUDA(cudaMemcpyAsync(b.p, a.p, size, cudaMemcpyDeviceToDevice, stream)); });
      r.copy.push_back({size, t, 2.0 * size / t / 1e9});
      progress(fmt("cudaMemcpy D2D    %10.0f B  %9.2f us  %8.1f GB/s (read+written)", size, t * 1e6, r.copy.back().gbps));
      const double k = timer.per_call(stream, [&] { launch_copy(a.p, b.p, size, 0, stream); });
      r.copy_kernel.push_back({size, k, 2.0 * size / k / 1e9});
      progress(fmt("copy kernel       %10.0f B  %9.2f us  %8.1f GB/s (read+written)", size, k * 1e6, r.copy_kernel.back().gbps));
    }
    for (DataType type : options.types) {
      ReduceCopyBench rb;
      rb.type = type;
      for (std::uint64_t size : sizes_up_to(max_bytes)) {
        ReduceCopyArgs args;
        args.src[0] = a.p;
        args.src[1] = b.p;
        args.dst[0] = c.p;
        args.sources = 2;
        args.destinations = 1;
        args.count = size / element_bytes(type);
        const double t = timer.per_call(stream, [&] { launch_reduce_copy(type, ReduceOp::sum, args, 0, stream); });
        rb.points.push_back({size, t, 3.0 * size / t / 1e9});
        progress(fmt("reduce-copy sum   %10.0f B  %9.2f us  %8.1f GB/s (read+written), ", size, t * 1e6, rb.points.back().gbps) +
                 std::string(to_string(type)));
      }
      r.reduce_copy.push_back(rb);
    }
  }
  {
    constexpr int kCalls = 2000;
    r.launch_us = timer.per_call(
                      stream, [&] {
                        for (int i = 0; i < kCalls; ++i) empty_kernel<<<1, 1, 0, stream>>>();
                      },
                      false) *
                  1e6 / kCalls;
    progress(fmt("empty kernel, back to back: %.2f us per launch", r.launch_us));
    // A dependent step on another stream: a small copy kernel, an event, the other stream's wait.
    Buffer small(4096);
    cudaEvent_t ping = nullptr, pong = nullptr;
    CCSIM_CUDA(cudaEventCreateWithFlags(&ping, cudaEventDisableTiming));
    CCSIM_CUDA(cudaEventCreateWithFlags(&pong, cudaEventDisableTiming));
    constexpr int kHops = 500;
    auto ping_pong = [&] {
      for (int i = 0; i < kHops; ++i) {
        launch_copy(small.p, static_cast<char*>(small.p) + 2048, 2048, 1, stream);
        CCSIM_CUDA(cudaEventRecord(ping, stream));
        CCSIM_CUDA(cudaStreamWaitEvent(other, ping, 0));
        launch_copy(static_cast<char*>(small.p) + 2048, small.p, 2048, 1, other);
        CCSIM_CUDA(cudaEventRecord(pong, other));
        CCSIM_CUDA(cudaStreamWaitEvent(stream, pong, 0));
      }
    };
    auto same_stream_chain = [&] {
      for (int i = 0; i < kHops; ++i) {
        launch_copy(small.p, static_cast<char*>(small.p) + 2048, 2048, 1, stream);
        launch_copy(static_cast<char*>(small.p) + 2048, small.p, 2048, 1, stream);
      }
    };
    // The executor issues a schedule as one CUDA graph: time the chains the same way where capture
    // works, else issued one by one as the executor then does.
    auto time_chain = [&](const std::function<void()>& body) {
      cudaGraphExec_t exec = capture_graph(stream, body);
      double t = 0;
      if (exec) {
        t = timer.per_call(stream, [&] { CCSIM_CUDA(cudaGraphLaunch(exec, stream)); }, false);
        cudaGraphExecDestroy(exec);
      } else {
        t = timer.per_call(stream, body, false);
      }
      return t * 1e6 / (2 * kHops);
    };
    r.step_us = time_chain(ping_pong);
    const double same_stream = time_chain(same_stream_chain);
    r.event_us = std::max(0.0, r.step_us - same_stream);
    progress(fmt("dependent step on another stream: %.2f us (small copy kernel %.2f us + event hand-off %.2f us)",
                 r.step_us, same_stream, r.event_us));
    cudaEventDestroy(ping);
    cudaEventDestroy(pong);
  }
  CCSIM_CUDA(cudaStreamDestroy(stream));
  CCSIM_CUDA(cudaStreamDestroy(other));

  // Every pair of devices with peer access: the copy kernel writing into the peer's memory.
  for (std::size_t i = 0; i < inv.devices.size(); ++i)
    for (std::size_t j = 0; j < inv.devices.size(); ++j) {
      if (i == j || !inv.peer[i][j]) continue;
      const std::uint64_t big = std::min<std::uint64_t>(max_bytes, 256ULL << 20);
      CCSIM_CUDA(cudaSetDevice(static_cast<int>(j)));
      auto remote = std::make_unique<Buffer>(big);
      CCSIM_CUDA(cudaSetDevice(static_cast<int>(i)));
      const cudaError_t err = cudaDeviceEnablePeerAccess(static_cast<int>(j), 0);
      if (err != cudaSuccess && err != cudaErrorPeerAccessAlreadyEnabled) cuda_failed(err, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
      (void)cudaGetLastError();
      auto local = std::make_unique<Buffer>(big);
      CCSIM_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      Timer peer_timer;  // its events must belong to device i, whose stream records them
      PeerBench p;
      p.from = static_cast<int>(i);
      p.to = static_cast<int>(j);
      p.link_class = inv.link_class[i][j];
      p.latency_us = peer_timer.per_call(stream, [&] { launch_copy(local->p, remote->p, 8, 1, stream); }) * 1e6;
      const double t = peer_timer.per_call(stream, [&] { launch_copy(local->p, remote->p, big, 0, stream); });
      p.gbps = big / t / 1e9;
      progress(fmt("peer copy %.0f -> %.0f: ", p.from, p.to) + fmt("%.2f us small, %.1f GB/s at 256 MiB ", p.latency_us, p.gbps) + p.link_class);
      r.peers.push_back(p);
      remote.reset();
      local.reset();
      CCSIM_CUDA(cudaStreamDestroy(stream));
    }
  return r;
}

}  // namespace ccsim::kernels::gpu
