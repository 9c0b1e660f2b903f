#pragma once
// A closer look at one measured point, shared by `perf` and `run`: its Chrome trace (--trace) and
// its per-link table (--links). measure() keeps no schedule, so both compile the point again from
// the candidate that ran.
#include <ostream>
#include <string>
#include <vector>

#include "ccsim/measure.hpp"

namespace ccsim::cli {

// The candidate a measured point came from (algorithm, protocol and channels match).
const PointOptions& candidate_of(const Point& point, const std::vector<PointOptions>& candidates);

// Simulates the point's whole schedule with its steps recorded (no extrapolation) and writes a
// Chrome trace of it. Returns the simulated time in seconds.
double write_trace(const std::string& path, const CollectiveSpec& spec, const topo::Topology& topology,
                   const Model& model, const PointOptions& point, const std::string& title);

// Every link direction that carried traffic: bandwidth, bytes, busy time (bytes / bandwidth) and
// utilisation (busy time / `total_s`, the point's simulated time), busiest first. Bytes come from
// the schedule and the routes, so no second simulation is needed.
void print_links(std::ostream& out, const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
                 const PointOptions& point, double total_s, std::size_t max_rows = 20);

}  // namespace ccsim::cli
