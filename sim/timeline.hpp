#pragma once
// What a backend reports after running a schedule: when each step ran and what crossed each link.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ccsim {

struct StepRecord {
  std::uint32_t stream = 0;  // index into Schedule::streams
  std::uint32_t step = 0;    // index into Stream::steps
  double start_s = 0;        // the step was issued (a recv: posted; a send: after its latency)
  double end_s = 0;          // the step completed (a send: its data arrived)
  std::uint64_t wire_bytes = 0;
};

// One direction of one link of the simulated platform.
struct LinkRecord {
  std::string name;          // e.g. "gpu3->nvswitch" (an aggregated NVLink port) or "gpu0->gpu1"
  double bandwidth_bytes_per_s = 0;
  std::uint64_t bytes = 0;   // wire bytes carried over the whole run
};

struct Timeline {
  double makespan_s = 0;       // first step start to last step end, as simulated
  double launch_latency_s = 0;  // fixed per-call cost (kernel launch, set-up) added to the makespan
  // Calls run back to back, as nccl-tests times them (EngineOptions::back_to_back): the time from
  // one call's end to the next's on the slowest rank, launch latency included; 0 when not run so.
  double period_s = 0;
  std::uint64_t messages = 0;
  std::vector<StepRecord> steps;  // empty unless step recording was asked for
  std::vector<LinkRecord> links;

  double total_s() const { return period_s > 0 ? period_s : makespan_s + launch_latency_s; }
  // The time nccl-tests prints for calls timed back to back: its loop of `iters` calls starts with
  // every GPU idle, so the first call takes its whole makespan and each later one a period
  // (nccl-tests' timed loop divided by iters). iters 0: the steady state alone (total_s).
  double per_call_s(int iters) const {
    if (period_s <= 0 || iters <= 0) return total_s();
    return period_s + std::max(0.0, makespan_s + launch_latency_s - period_s) / iters;
  }
};

void to_json(nlohmann::json& j, const Timeline& t);
void from_json(const nlohmann::json& j, Timeline& t);

}  // namespace ccsim
