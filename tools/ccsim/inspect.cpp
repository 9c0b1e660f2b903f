#include "ccsim/inspect.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "sim/trace.hpp"

namespace ccsim::cli {

const PointOptions& candidate_of(const Point& point, const std::vector<PointOptions>& candidates) {
  for (const auto& c : candidates)
    if (c.algorithm == point.row.algorithm && c.algorithm_options.protocol == point.row.protocol &&
        c.algorithm_options.channels == point.row.channels)
      return c;
  throw Error("internal: the measured point matches none of its candidates");
}

double write_trace(const std::string& path, const CollectiveSpec& spec, const topo::Topology& topology,
                   const Model& model, const PointOptions& point, const std::string& title) {
  const Schedule schedule = algo::compile(point.algorithm, spec, point.algorithm_options);
  EngineOptions engine = with_run_options({}, point);
  engine.record_steps = true;
  const SimulationResult r = simulate(schedule, topology, model, engine);
  TraceOptions options;
  options.title = title;
  write_chrome_trace(path, chrome_trace(schedule, r.timeline, PlatformPlan::build(schedule, topology, model), options));
  return r.timeline.total_s();
}

void print_links(std::ostream& out, const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
                 const PointOptions& point, double total_s, std::size_t max_rows) {
  const Schedule schedule = algo::compile(point.algorithm, spec, point.algorithm_options);
  const auto usage = link_usage(PlatformPlan::build(schedule, topology, model).traffic(schedule), total_s);
  out << "# links of the " << format_bytes(spec.size_bytes()) << " " << to_string(spec.kind) << " (" << point.algorithm
      << ", " << to_string(point.algorithm_options.protocol) << ", " << point.algorithm_options.channels
      << (point.algorithm_options.channels == 1 ? " channel" : " channels") << "), busiest first; busy = bytes / bandwidth, utilisation = busy / " << total_s * 1e6 << " us\n";
  int width = 4;
  for (std::size_t i = 0; i < usage.size() && i < max_rows; ++i) width = std::max(width, static_cast<int>(usage[i].name.size()));
  char line[512];
  std::snprintf(line, sizeof line, "#  %-*s %8s %14s %11s %6s\n", width - 1, "link", "GB/s", "bytes", "busy(us)", "util");
  out << line;
  for (std::size_t i = 0; i < usage.size() && i < max_rows; ++i) {
    const auto& u = usage[i];
    std::snprintf(line, sizeof line, "  %-*s %8.1f %14llu %11.2f %5.1f%%\n", width, u.name.c_str(), u.bandwidth_bytes_per_s / 1e9,
                  static_cast<unsigned long long>(u.bytes), u.busy_s * 1e6, 100 * u.utilisation);
    out << line;
  }
  if (usage.size() > max_rows) out << "# ... " << usage.size() - max_rows << " more links carried traffic\n";
  if (usage.empty()) out << "# no link carried traffic\n";
}

}  // namespace ccsim::cli
