#include "sim/trace.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"

namespace ccsim {

std::vector<LinkUsage> link_usage(const std::vector<LinkRecord>& links, double total_s) {
  std::vector<LinkUsage> out;
  for (const auto& l : links) {
    if (l.bytes == 0) continue;
    LinkUsage u{l.name, l.bandwidth_bytes_per_s, l.bytes, 0, 0};
    u.busy_s = l.bandwidth_bytes_per_s > 0 ? static_cast<double>(l.bytes) / l.bandwidth_bytes_per_s : 0;
    u.utilisation = total_s > 0 ? u.busy_s / total_s : 0;
    out.push_back(u);
  }
  std::sort(out.begin(), out.end(), [](const LinkUsage& a, const LinkUsage& b) {
    return a.utilisation != b.utilisation ? a.utilisation > b.utilisation : a.name < b.name;
  });
  return out;
}

namespace {

std::string endpoint_label(const Schedule& s, int endpoint) {
  if (!s.is_switch(endpoint)) return "r" + std::to_string(endpoint);
  const SwitchEndpoint& sw = s.switches[static_cast<std::size_t>(endpoint - s.spec.nranks)];
  return std::string(sw.kind == SwitchEndpoint::Kind::nvls ? "nvls" : "sharp") + std::to_string(sw.index);
}

std::string step_name(const Schedule& s, const Step& step) {
  switch (step.kind) {
    case StepKind::send: return "send to " + endpoint_label(s, step.peer);
    case StepKind::recv: return std::string(step.reduce ? "recv+reduce from " : "recv from ") + endpoint_label(s, step.peer);
    case StepKind::copy: return "copy";
    case StepKind::reduce: return "reduce";
  }
  return "?";
}

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  nlohmann::json m{{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) m["tid"] = tid;
  return m;
}

// Bytes each link direction carries in each of `bins` equal intervals of [0, span]: every send's
// wire bytes spread evenly over its [start, end] (a difference array keeps it O(1) per message).
std::vector<std::vector<double>> binned_link_bytes(const Schedule& schedule, const Timeline& timeline,
                                                   const PlatformPlan& plan, int bins, double span) {
  const auto nb = static_cast<std::size_t>(bins);
  std::vector<std::vector<double>> bytes(2 * plan.links().size(), std::vector<double>(nb, 0.0));
  std::vector<std::vector<double>> full_rate(2 * plan.links().size(), std::vector<double>(nb + 1, 0.0));
  const double width = span / bins;
  auto bin_of = [&](double t) { return std::min(nb - 1, static_cast<std::size_t>(std::max(0.0, t / width))); };
  for (const auto& rec : timeline.steps) {
    const Stream& stream = schedule.streams.at(rec.stream);
    const Step& step = stream.steps.at(rec.step);
    if (step.kind != StepKind::send || rec.wire_bytes == 0) continue;
    const auto& route = plan.route(stream.rank, step.peer);
    const double start = rec.start_s, end = std::max(rec.end_s, rec.start_s);
    const std::size_t first = bin_of(start), last = bin_of(end);
    for (const auto& [link, forward] : route.hops) {
      const std::size_t dir = 2 * link + (forward ? 0 : 1);
      const double total = static_cast<double>(rec.wire_bytes);
      if (first == last || end <= start) {
        bytes[dir][first] += total;
        continue;
      }
      const double rate = total / (end - start);
      bytes[dir][first] += rate * ((first + 1) * width - start);
      bytes[dir][last] += rate * (end - last * width);
      full_rate[dir][first + 1] += rate;  // bins first+1 .. last-1 are covered whole
      full_rate[dir][last] -= rate;
    }
  }
  for (std::size_t d = 0; d < bytes.size(); ++d) {
    double rate = 0;
    for (std::size_t b = 0; b < nb; ++b) {
      rate += full_rate[d][b];
      bytes[d][b] += rate * width;
    }
  }
  return bytes;
}

}  // namespace

nlohmann::json chrome_trace(const Schedule& schedule, const Timeline& timeline, const PlatformPlan& plan,
                            const TraceOptions& options) {
  if (timeline.steps.empty() && schedule.step_count() > 0)
    throw Error("a trace needs the timeline's steps: simulate with EngineOptions::record_steps");
  using nlohmann::json;
  json events = json::array();
  const std::size_t elem = element_bytes(schedule.spec.type);
  for (int e = 0; e < schedule.endpoint_count(); ++e)
    events.push_back(metadata("process_name", e, -1, schedule.is_switch(e) ? "switch " + endpoint_label(schedule, e)
                                                                            : "rank " + std::to_string(e)));
  // A folded stream stands for several identical NCCL channels (algo::fold_copies): say so.
  const std::string blocks =
      schedule.blocks_per_stream > 1 ? ", " + std::to_string(schedule.blocks_per_stream) + " identical blocks" : "";
  for (std::size_t s = 0; s < schedule.streams.size(); ++s)
    events.push_back(metadata("thread_name", schedule.streams[s].rank, static_cast<int>(s),
                              "channel " + std::to_string(schedule.streams[s].channel) + " (stream " + std::to_string(s) + blocks + ")"));
  for (const auto& rec : timeline.steps) {
    const Stream& stream = schedule.streams.at(rec.stream);
    const Step& step = stream.steps.at(rec.step);
    events.push_back({{"ph", "X"},
                      {"name", step_name(schedule, step)},
                      {"cat", std::string(to_string(step.kind))},
                      {"pid", stream.rank},
                      {"tid", rec.stream},
                      {"ts", rec.start_s * 1e6},
                      {"dur", std::max(0.0, rec.end_s - rec.start_s) * 1e6},
                      {"args", {{"step", rec.step}, {"bytes", step.count() * elem}, {"wire_bytes", rec.wire_bytes},
                                {"protocol", to_string(step.protocol)}, {"channel", stream.channel}}}});
  }

  // Link counters live in a process of their own, after the endpoints.
  const int links_pid = schedule.endpoint_count();
  events.push_back(metadata("process_name", links_pid, -1, "links (utilisation)"));
  const double span = timeline.makespan_s;
  if (span > 0 && options.counter_bins > 0) {
    const auto bytes = binned_link_bytes(schedule, timeline, plan, options.counter_bins, span);
    const double width = span / options.counter_bins;
    for (std::size_t d = 0; d < bytes.size(); ++d) {
      const PlatformLink& link = plan.links()[d / 2];
      const std::string name = d % 2 == 0 ? link.forward_name : link.backward_name;
      if (std::all_of(bytes[d].begin(), bytes[d].end(), [](double b) { return b == 0; })) continue;  // idle: clutter
      double previous = -1;
      for (std::size_t b = 0; b < bytes[d].size(); ++b) {
        const double u = link.bandwidth_bytes_per_s > 0 ? bytes[d][b] / (width * link.bandwidth_bytes_per_s) : 0;
        if (std::abs(u - previous) < 1e-9) continue;  // a counter holds its value until the next event
        previous = u;
        events.push_back({{"ph", "C"}, {"name", name}, {"pid", links_pid}, {"ts", b * width * 1e6}, {"args", {{"utilisation", u}}}});
      }
      events.push_back({{"ph", "C"}, {"name", name}, {"pid", links_pid}, {"ts", span * 1e6}, {"args", {{"utilisation", 0.0}}}});
    }
  }
  return json{{"traceEvents", events},
              {"displayTimeUnit", "ns"},
              {"otherData",
               {{"title", options.title},
                {"algorithm", schedule.algorithm},
                {"collective", to_string(schedule.spec.kind)},
                {"ranks", schedule.spec.nranks},
                {"size_bytes", schedule.spec.size_bytes()},
                {"makespan_us", timeline.makespan_s * 1e6},
                {"launch_latency_us", timeline.launch_latency_s * 1e6},
                {"link_counters",
                 "each message's wire bytes spread evenly over its duration on every link of its route, averaged over " +
                     std::to_string(options.counter_bins) + " equal intervals"}}}};
}

void write_chrome_trace(const std::string& path, const nlohmann::json& trace) {
  std::ofstream out(path);
  if (!out) throw Error(path + ": cannot open for writing");
  out << trace.dump() << "\n";
  if (!out) throw Error(path + ": write failed");
}

}  // namespace ccsim
