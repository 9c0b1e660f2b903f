#pragma once
// Views of one simulated collective for people: a Chrome trace (chrome://tracing, ui.perfetto.dev)
// with a track per stream and a utilisation counter per link, and a per-link table that shows the
// bottleneck.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/platform.hpp"
#include "sim/schedule.hpp"
#include "sim/timeline.hpp"

namespace ccsim {

struct LinkUsage {
  std::string name;  // one direction: "gpu0->[nvswitch0,nvswitch1]"
  double bandwidth_bytes_per_s = 0;
  std::uint64_t bytes = 0;
  double busy_s = 0;        // bytes / bandwidth: the time the link needs for its traffic
  double utilisation = 0;   // busy_s / the collective's time
};

// Links that carried traffic, busiest first (ties by name, for deterministic output).
std::vector<LinkUsage> link_usage(const std::vector<LinkRecord>& links, double total_s);

struct TraceOptions {
  int counter_bins = 1000;  // time resolution of the link counters
  std::string title;        // shown in the trace's metadata
};

// A Chrome trace of a simulated schedule: `timeline` must have been recorded with
// EngineOptions::record_steps. Complete events ("ph":"X", ts/dur in microseconds) with pid = rank
// (switch endpoints after the ranks) and tid = stream, named by step kind and peer; counter events
// ("ph":"C") per link direction with its utilisation over time. A message's wire bytes are spread
// evenly over its [start, end] on every link of its route, and counters are averaged over
// `counter_bins` equal intervals of the makespan: exact link totals, approximate instantaneous rates.
nlohmann::json chrome_trace(const Schedule& schedule, const Timeline& timeline, const PlatformPlan& plan,
                            const TraceOptions& options = {});

// Writes the trace; Error when the file cannot be written.
void write_chrome_trace(const std::string& path, const nlohmann::json& trace);

}  // namespace ccsim
