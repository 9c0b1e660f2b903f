// Runs each simulation in a forked child: SimGrid allows one engine per process, and a child that
// crashes cannot take the caller down with it.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "sim/error.hpp"
#include "sim/fd_io.hpp"

namespace ccsim {


double kernel_launch_s(const Schedule& schedule, const Model& model) {
  // A schedule through an NVLS switch runs NCCL's NVLS kernels, whose fixed cost stands in for the
  // Simple protocol's (their steps are Simple).
  const bool nvls = std::any_of(schedule.switches.begin(), schedule.switches.end(),
                                [](const SwitchEndpoint& s) { return s.kind == SwitchEndpoint::Kind::nvls; });
  auto of = [&](Protocol p) {
    return nvls && p == Protocol::simple ? model.nvls_launch_latency_s() : model.launch_latency_s(p);
  };
  // A point-to-point kernel (the direct algorithm) is one kernel whatever protocol each of its
  // operations takes, so its fixed cost is one too: Simple's, NCCL's default for its operations.
  if (is_point_to_point_kernel(schedule.algorithm)) return of(Protocol::simple);
  double latency = 0;
  bool any = false;
  for (const auto& stream : schedule.streams)
    for (const auto& step : stream.steps) {
      latency = std::max(latency, of(step.protocol));
      any = true;
    }
  return any ? latency : of(Protocol::simple);
}

double launch_latency_s(const Schedule& schedule, const Model& model) {
  return kernel_launch_s(schedule, model) + block_setup_s(schedule, model);
}

double block_setup_s(const Schedule& schedule, const Model& model) {
  const double per_block_s = model.get("block_setup_us") * 1e-6;
  if (per_block_s <= 0) return 0;
  // The busiest rank's thread blocks set the cost.
  return per_block_s * schedule.blocks_per_rank();
}

SimulationResult simulate(const Schedule& schedule, const topo::Topology& topology, const Model& model,
                          const EngineOptions& options) {
  const PlatformPlan plan = PlatformPlan::build(schedule, topology, model);
  int fds[2];
  if (::pipe(fds) != 0) throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  const auto t0 = std::chrono::steady_clock::now();
  // The child must not inherit unwritten output: SimGrid flushes stdio in it, which would print
  // the parent's buffered lines a second time.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot fork the simulation: ") + std::strerror(errno));
  if (pid == 0) {
    // A simulation does not outlive its caller: one stopped by a signal or a timeout (a thousand
    // GPUs can take minutes and gigabytes) takes its child along instead of leaving it running.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the caller ended before the line above
    ::close(fds[0]);
    std::string message;
    char status = 'E';
    try {
      const Timeline t = simulate_in_process(schedule, plan, model, options);
      const std::vector<std::uint8_t> packed = nlohmann::json::to_msgpack(nlohmann::json(t));
      message.assign(packed.begin(), packed.end());
      status = 'O';
    } catch (const std::exception& e) {
      message = e.what();
    }
    write_all(fds[1], &status, 1);
    write_all(fds[1], message.data(), message.size());
    ::close(fds[1]);
    ::_exit(0);  // skip the parent's atexit handlers and SimGrid's teardown
  }
  ::close(fds[1]);
  const std::string reply = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  SimulationResult result;
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
  if (reply.empty()) {
    const std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exited with status " + std::to_string(WEXITSTATUS(status));
    throw Error("the simulation process " + how + " before reporting (out of memory?)");
  }
  if (reply[0] != 'O') throw Error(reply.substr(1));
  result.timeline = nlohmann::json::from_msgpack(reply.begin() + 1, reply.end()).get<Timeline>();
  result.timeline.launch_latency_s = launch_latency_s(schedule, model);
  result.timeline.links = plan.traffic(schedule);
  return result;
}

}  // namespace ccsim
