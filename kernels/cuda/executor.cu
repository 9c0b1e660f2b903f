// The CUDA executor: a schedule's streams become CUDA streams, its sends copies into the receiver's
// staging slots, its recvs waits on the send's event followed by a reduce-copy kernel. The steps are
// issued in the device plan's order, so every wait names an event already recorded.
#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/reduce_copy.cuh"
#include "kernels/device_plan.hpp"

namespace ccsim::kernels::gpu {

namespace {

class Event {
 public:
  // An event belongs to the device current at its creation, and can only be recorded on that
  // device's streams (waiting on it from another device is fine).
  Event(bool timing, int device) {
    CCSIM_CUDA(cudaSetDevice(device));
    CCSIM_CUDA(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class StreamHandle {
 public:
  explicit StreamHandle(int device) : device_(device) {
    CCSIM_CUDA(cudaSetDevice(device));
    CCSIM_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  ~StreamHandle() { cudaStreamDestroy(s_); }
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  cudaStream_t get() const { return s_; }
  int device() const { return device_; }

 private:
  cudaStream_t s_ = nullptr;
  int device_ = 0;
};

class Allocation {
 public:
  Allocation(int device, std::size_t bytes) {
    CCSIM_CUDA(cudaSetDevice(device));
    // Never a zero-byte cudaMalloc: a region of zero elements still needs a valid base pointer.
    CCSIM_CUDA(cudaMalloc(&p_, std::max<std::size_t>(bytes, 256)));
    CCSIM_CUDA(cudaMemset(p_, 0, std::max<std::size_t>(bytes, 256)));
  }
  ~Allocation() { cudaFree(p_); }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  std::byte* get() const { return static_cast<std::byte*>(p_); }

 private:
  void* p_ = nullptr;
};

std::string gib(double bytes) { return std::to_string(bytes / (1ULL << 30)).substr(0, 5) + " GiB"; }

class Runner {
 public:
  Runner(const Schedule& schedule, const ExecutorOptions& options)
      : s_(schedule), plan_(plan_for_device(schedule)), e_(element_bytes(schedule.spec.type)) {
    int count = 0;
    CCSIM_CUDA(cudaGetDeviceCount(&count));
    if (count == 0) throw GpuUnavailable("no CUDA device");
    if (options.devices.empty()) throw Error("no devices named");
    for (int d : options.devices)
      if (d < 0 || d >= count)
        throw Error("device " + std::to_string(d) + " does not exist (" + std::to_string(count) + " devices)");
    const int endpoints = schedule.endpoint_count();
    for (int ep = 0; ep < endpoints; ++ep)
      device_.push_back(options.devices[static_cast<std::size_t>(ep) % options.devices.size()]);
    used_devices_ = device_;
    std::sort(used_devices_.begin(), used_devices_.end());
    used_devices_.erase(std::unique(used_devices_.begin(), used_devices_.end()), used_devices_.end());
    enable_peer_access();
    for (int ep = 0; ep < endpoints; ++ep) layout_.push_back(MemoryLayout::of(schedule, ep, options.in_place));
    check_memory();
    for (int ep = 0; ep < endpoints; ++ep) {
      std::vector<std::unique_ptr<Allocation>> parts;
      for (int a = 0; a < 3; ++a)
        parts.push_back(std::make_unique<Allocation>(device_[ep], layout_[static_cast<std::size_t>(ep)].bytes(a)));
      memory_.push_back(std::move(parts));
      staging_.push_back(std::make_unique<Allocation>(device_[ep], plan_.staging_count[static_cast<std::size_t>(ep)] * e_));
    }
    for (const auto& stream : schedule.streams) streams_.push_back(std::make_unique<StreamHandle>(device_[stream.rank]));
    control_ = std::make_unique<StreamHandle>(device_[0]);
    for (const Message& m : plan_.messages)  // recorded by the sender's stream
      arrived_.push_back(std::make_unique<Event>(false, device_[static_cast<std::size_t>(m.from)]));
    for (const auto& st : streams_) done_.push_back(std::make_unique<Event>(false, st->device()));
    start_ = std::make_unique<Event>(true, control_->device());
    stop_ = std::make_unique<Event>(true, control_->device());
    fork_ = std::make_unique<Event>(false, control_->device());
    use_graph_ = options.graph;
    sync_devices();  // the allocations' memsets
  }

  void upload(std::vector<RankMemory>& host) {
    for (std::size_t ep = 0; ep < memory_.size(); ++ep)
      for (int a = 0; a < 3; ++a)
        if (layout_[ep].bytes(a) > 0)
          CCSIM_CUDA(cudaMemcpy(memory_[ep][a]->get(), host[ep].allocation(a), layout_[ep].bytes(a), cudaMemcpyHostToDevice));
    sync_devices();
  }

  // A pageable cudaMemcpy or a cudaMemset may still be in flight on the legacy stream, which the
  // executor's non-blocking streams do not wait for.
  void sync_devices() {
    for (int d : used_devices_) {
      CCSIM_CUDA(cudaSetDevice(d));
      CCSIM_CUDA(cudaDeviceSynchronize());
    }
  }
  void download(std::vector<RankMemory>& host) {
    for (std::size_t ep = 0; ep < memory_.size(); ++ep)
      for (int a = 0; a < 3; ++a)
        if (layout_[ep].bytes(a) > 0)
          CCSIM_CUDA(cudaMemcpy(host[ep].allocation(a), memory_[ep][a]->get(), layout_[ep].bytes(a), cudaMemcpyDeviceToHost));
  }

  // Issues the whole schedule once and waits for it; returns its time from the start event. The
  // steps are issued through a CUDA graph captured on first use where capture works: issuing
  // thousands of small kernels from the host one by one would time the host, not the GPU.
  double run_once(std::vector<StepRecord>* steps) {
    const bool with_steps = steps != nullptr;
    if (with_steps && step_events_.empty())
      for (std::size_t i = 0; i < 2 * plan_.order.size(); ++i)
        step_events_.push_back(std::make_unique<Event>(true, streams_[plan_.order[i / 2].stream]->device()));
    cudaGraphExec_t& graph = with_steps ? graph_steps_ : graph_plain_;
    if (use_graph_ && graph == nullptr) graph = capture(with_steps);
    CCSIM_CUDA(cudaSetDevice(control_->device()));
    if (graph != nullptr) {
      // start_ and stop_ are nodes of the graph: the host's launch of it is not timed.
      CCSIM_CUDA(cudaGraphLaunch(graph, control_->get()));
    } else {
      CCSIM_CUDA(cudaEventRecord(start_->get(), control_->get()));
      issue_all(with_steps, false);
      CCSIM_CUDA(cudaSetDevice(control_->device()));
      CCSIM_CUDA(cudaEventRecord(stop_->get(), control_->get()));
    }
    CCSIM_CUDA(cudaEventSynchronize(stop_->get()));
    float ms = 0;
    CCSIM_CUDA(cudaEventElapsedTime(&ms, start_->get(), stop_->get()));
    if (steps) {
      // Step events live on the streams' devices: elapsed time is only defined between events of one
      // device, so each is measured from the start event when on device_[0]'s device, else skipped.
      for (std::size_t i = 0; i < plan_.order.size(); ++i) {
        const PlannedStep& p = plan_.order[i];
        StepRecord r;
        r.stream = p.stream;
        r.step = p.step;
        if (streams_[p.stream]->device() == control_->device()) {
          float a = 0, b = 0;
          CCSIM_CUDA(cudaEventElapsedTime(&a, start_->get(), step_events_[2 * i]->get()));
          CCSIM_CUDA(cudaEventElapsedTime(&b, start_->get(), step_events_[2 * i + 1]->get()));
          r.start_s = a * 1e-3;
          r.end_s = b * 1e-3;
        }
        const Step& step = s_.streams[p.stream].steps[p.step];
        if (step.kind == StepKind::send) r.wire_bytes = step.src.count * e_;
        steps->push_back(r);
      }
    }
    return ms * 1e-3;
  }

  bool graphed() const { return graph_plain_ != nullptr; }
  const std::string& graph_problem() const { return graph_problem_; }

  ~Runner() {
    if (graph_plain_) cudaGraphExecDestroy(graph_plain_);
    if (graph_steps_) cudaGraphExecDestroy(graph_steps_);
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  std::vector<LinkRecord> traffic() const {
    std::map<std::pair<int, int>, std::uint64_t> bytes;
    for (const Message& m : plan_.messages) bytes[{m.from, m.to}] += m.count * e_;
    std::vector<LinkRecord> out;
    for (const auto& [k, b] : bytes)
      out.push_back({"rank" + std::to_string(k.first) + "->rank" + std::to_string(k.second), 0, b});
    return out;
  }
  const std::vector<int>& devices() const { return device_; }
  std::uint64_t message_count() const { return plan_.messages.size(); }

 private:
  std::byte* at(int endpoint, const Region& r) const {
    const MemoryLayout& l = layout_[static_cast<std::size_t>(endpoint)];
    return memory_[static_cast<std::size_t>(endpoint)][static_cast<std::size_t>(l.allocation_of(r.buffer))]->get() +
           l.offset_of(r.buffer) + r.offset * e_;
  }

  void issue(const PlannedStep& p, StreamHandle& st) {
    const Stream& stream = s_.streams[p.stream];
    const Step& step = stream.steps[p.step];
    const int rank = stream.rank;
    if (step.kind == StepKind::send) {
      const Message& m = plan_.messages[static_cast<std::size_t>(p.message)];
      std::byte* dst = staging_[static_cast<std::size_t>(m.to)]->get() + m.offset * e_;
      const int from = device_[rank], to = device_[m.to];
      if (from == to || peer_ok(from, to)) launch_copy(at(rank, step.src), dst, m.count * e_, 0, st.get());
      else CCSIM_CUDA(cudaMemcpyPeerAsync(dst, to, at(rank, step.src), from, m.count * e_, st.get()));
      CCSIM_CUDA(cudaEventRecord(arrived_[static_cast<std::size_t>(p.message)]->get(), st.get()));
      return;
    }
    ReduceCopyArgs a;
    a.count = step.dst.count;
    a.finalize = step.finalize;
    a.nranks = s_.spec.nranks;
    a.destinations = 1;
    a.dst[0] = at(rank, step.dst);
    if (step.kind == StepKind::recv) {
      const Message& m = plan_.messages[static_cast<std::size_t>(p.message)];
      CCSIM_CUDA(cudaStreamWaitEvent(st.get(), arrived_[static_cast<std::size_t>(p.message)]->get(), 0));
      const std::byte* staged = staging_[static_cast<std::size_t>(rank)]->get() + m.offset * e_;
      if (step.reduce) {
        a.src[0] = at(rank, step.src);
        a.src[1] = staged;
        a.sources = 2;
      } else {
        a.src[0] = staged;
        a.sources = 1;
      }
    } else if (step.kind == StepKind::reduce) {
      a.src[0] = at(rank, step.dst);
      a.src[1] = at(rank, step.src);
      a.sources = 2;
    } else {
      a.src[0] = at(rank, step.src);
      a.sources = 1;
    }
    launch_reduce_copy(s_.spec.type, s_.spec.op, a, 0, st.get());
  }

  // Fork from the control stream onto every stream, the steps in plan order, join back. Under
  // capture a plain event record is only a dependency edge; the step timings must be event-record
  // nodes of the graph (cudaEventRecordExternal), which outside capture is refused.
  void issue_all(bool with_steps, bool capturing) {
    auto mark = [&](const Event& e, cudaStream_t s) {
      if (capturing) CCSIM_CUDA(cudaEventRecordWithFlags(e.get(), s, cudaEventRecordExternal));
      else CCSIM_CUDA(cudaEventRecord(e.get(), s));
    };
    CCSIM_CUDA(cudaSetDevice(control_->device()));
    CCSIM_CUDA(cudaEventRecord(fork_->get(), control_->get()));
    for (auto& st : streams_) {
      CCSIM_CUDA(cudaSetDevice(st->device()));
      CCSIM_CUDA(cudaStreamWaitEvent(st->get(), fork_->get(), 0));
    }
    for (std::size_t i = 0; i < plan_.order.size(); ++i) {
      const PlannedStep& p = plan_.order[i];
      StreamHandle& st = *streams_[p.stream];
      CCSIM_CUDA(cudaSetDevice(st.device()));
      if (with_steps) mark(*step_events_[2 * i], st.get());
      issue(p, st);
      if (with_steps) mark(*step_events_[2 * i + 1], st.get());
    }
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      CCSIM_CUDA(cudaSetDevice(streams_[i]->device()));
      CCSIM_CUDA(cudaEventRecord(done_[i]->get(), streams_[i]->get()));
      CCSIM_CUDA(cudaSetDevice(control_->device()));
      CCSIM_CUDA(cudaStreamWaitEvent(control_->get(), done_[i]->get(), 0));
    }
  }

  // The schedule as one CUDA graph, or null (and the reason kept) where capture fails, e.g. across
  // devices on a driver that refuses it: the steps are then issued one by one.
  cudaGraphExec_t capture(bool with_steps) {
    for (int d : used_devices_) {
      CCSIM_CUDA(cudaSetDevice(d));
      (void)full_grid();  // device queries before capture, not during it
    }
    CCSIM_CUDA(cudaSetDevice(control_->device()));
    cudaGraph_t graph = nullptr;
    auto give_up = [&](const std::string& why) -> cudaGraphExec_t {
      cudaGraph_t partial = nullptr;
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(control_->get(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone)
        (void)cudaStreamEndCapture(control_->get(), &partial);
      if (partial) cudaGraphDestroy(partial);
      (void)cudaGetLastError();
      graph_problem_ = why;
      use_graph_ = false;
      return nullptr;
    };
    cudaError_t err = cudaStreamBeginCapture(control_->get(), cudaStreamCaptureModeRelaxed);
    if (err != cudaSuccess) return give_up(std::string("cudaStreamBeginCapture: ") + cudaGetErrorString(err));
    try {
      CCSIM_CUDA(cudaEventRecordWithFlags(start_->get(), control_->get(), cudaEventRecordExternal));
      issue_all(with_steps, true);
      CCSIM_CUDA(cudaSetDevice(control_->device()));
      CCSIM_CUDA(cudaEventRecordWithFlags(stop_->get(), control_->get(), cudaEventRecordExternal));
    } catch (const Error& e) {
      return give_up(e.what());
    }
    err = cudaStreamEndCapture(control_->get(), &graph);
    if (err != cudaSuccess || graph == nullptr) return give_up(std::string("cudaStreamEndCapture: ") + cudaGetErrorString(err));
    cudaGraphExec_t exec = nullptr;
    err = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (err != cudaSuccess) return give_up(std::string("cudaGraphInstantiate: ") + cudaGetErrorString(err));
    // Upload now, so that no timed launch pays for it.
    err = cudaGraphUpload(exec, control_->get());
    if (err == cudaSuccess) err = cudaStreamSynchronize(control_->get());
    if (err != cudaSuccess) {
      cudaGraphExecDestroy(exec);
      return give_up(std::string("cudaGraphUpload: ") + cudaGetErrorString(err));
    }
    return exec;
  }

  bool peer_ok(int a, int b) const { return peer_.count({a, b}) > 0; }

  void enable_peer_access() {
    for (int a : used_devices_)
      for (int b : used_devices_) {
        if (a == b) continue;
        int can = 0;
        CCSIM_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
        if (!can) continue;
        CCSIM_CUDA(cudaSetDevice(a));
        const cudaError_t err = cudaDeviceEnablePeerAccess(b, 0);
        if (err == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
        else if (err != cudaSuccess) cuda_failed(err, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
        peer_.insert({{a, b}, true});
      }
  }

  void check_memory() const {
    std::map<int, double> need;
    for (int ep = 0; ep < s_.endpoint_count(); ++ep) {
      const MemoryLayout& l = layout_[static_cast<std::size_t>(ep)];
      need[device_[static_cast<std::size_t>(ep)]] +=
          static_cast<double>(l.main_bytes + l.output_bytes + l.scratch_bytes +
                              plan_.staging_count[static_cast<std::size_t>(ep)] * e_);
    }
    for (const auto& [d, bytes] : need) {
      std::size_t free = 0, total = 0;
      CCSIM_CUDA(cudaSetDevice(d));
      CCSIM_CUDA(cudaMemGetInfo(&free, &total));
      if (bytes > 0.95 * static_cast<double>(free))
        throw Error("the schedule needs " + gib(bytes) + " on device " + std::to_string(d) + " (buffers and staging of " +
                    std::to_string(s_.endpoint_count()) + " endpoints) but " + gib(static_cast<double>(free)) +
                    " is free: use a smaller size or more devices");
    }
  }

  const Schedule& s_;
  DevicePlan plan_;
  std::size_t e_;
  std::vector<int> device_;
  std::vector<int> used_devices_;  // device_'s distinct values
  std::vector<MemoryLayout> layout_;
  std::vector<std::vector<std::unique_ptr<Allocation>>> memory_;
  std::vector<std::unique_ptr<Allocation>> staging_;
  std::vector<std::unique_ptr<StreamHandle>> streams_;
  std::unique_ptr<StreamHandle> control_;
  std::vector<std::unique_ptr<Event>> arrived_, done_;
  std::unique_ptr<Event> start_, stop_, fork_;
  std::vector<std::unique_ptr<Event>> step_events_;
  std::map<std::pair<int, int>, bool> peer_;
  bool use_graph_ = true;
  cudaGraphExec_t graph_plain_ = nullptr, graph_steps_ = nullptr;
  std::string graph_problem_;
};

}  // namespace

GpuRunResult run_schedule(const Schedule& schedule, const ExecutorOptions& options) {
  Runner runner(schedule, options);
  GpuRunResult result;
  result.device_of_endpoint = runner.devices();
  int warmup = std::max(options.warmup, 0);
  if (options.check) {
    result.check = check_with(schedule, options.in_place, 1, [&](std::vector<RankMemory>& host) {
      runner.upload(host);
      runner.run_once(nullptr);
      runner.download(host);
    });
    result.checked = true;
    --warmup;
  }
  for (int i = 0; i < warmup; ++i) runner.run_once(nullptr);
  double total = 0;
  const int iterations = std::max(options.iterations, 1);
  for (int i = 0; i < iterations; ++i) total += runner.run_once(nullptr);
  result.time_s = total / iterations;
  if (options.record_steps) runner.run_once(&result.timeline.steps);
  result.timeline.makespan_s = result.time_s;
  result.timeline.links = runner.traffic();
  result.timeline.messages = runner.message_count();
  result.graph = runner.graphed();
  result.graph_problem = runner.graph_problem();
  return result;
}

}  // namespace ccsim::kernels::gpu
