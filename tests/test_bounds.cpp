#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "sim/algorithms/registry.hpp"
#include "sim/bounds.hpp"
#include "sim/engine.hpp"
#include "sim/topology/presets.hpp"
#include "sim/trace.hpp"

using namespace ccsim;

namespace {

topo::Topology flat(int n) {
  topo::PresetOptions o;
  o.gpus = n;
  return topo::make_preset("nvswitch-flat", o);
}

CollectiveSpec call(CollectiveKind kind, int n, std::uint64_t count) {
  CollectiveSpec s;
  s.kind = kind;
  s.nranks = n;
  s.count = count;
  return s;
}

}  // namespace

TEST_CASE("injection bound on one NVSwitch: 2(N-1)/N S over 18 lanes x 25 GB/s x NVLink efficiency") {
  const Model m = Model::builtin("hopper");
  const double port = 18 * 25e9 * m.nvlink_efficiency();
  for (int n : {2, 8, 64}) {
    const Capacity c = capacity(flat(n), m, n);
    CHECK(c.injection_bytes_per_s.size() == static_cast<std::size_t>(n));
    CHECK(c.injection_bytes_per_s[0] == test::approx(port));
    const CollectiveSpec spec = call(CollectiveKind::all_reduce, n, 1 << 24);
    const double s = 4.0 * (1 << 24);
    INFO("N=", n);
    const Bound b = lower_bound(spec, c, false);
    CHECK(b.injection_s == test::approx(2.0 * (n - 1) / n * s / port));
    CHECK(b.time_s() == b.injection_s);  // one switch: the cut never binds
    CHECK(b.limiter() == "injection");
    // In-network reduction: each GPU sends its data once and receives the sum once.
    CHECK(lower_bound(spec, c, true).injection_s == test::approx(s / port));
    // In busbw terms the non-switch bound is the port itself: busbw = S/t x 2(N-1)/N.
    CHECK(s / b.time_s() * bus_bandwidth_factor(spec.kind, n) == test::approx(port));
    // all_gather, reduce_scatter, alltoall: (N-1)/N of the total, again busbw = port.
    for (auto kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::alltoall})
      CHECK(lower_bound(call(kind, n, 1 << 24), c, false).time_s() == test::approx((n - 1.0) / n * s / port));
    CHECK(lower_bound(call(CollectiveKind::broadcast, n, 1 << 24), c, false).time_s() == test::approx(s / port));
  }
  CHECK(lower_bound(call(CollectiveKind::all_reduce, 1, 1024), capacity(flat(1), m, 1), false).time_s() == 0);
  CHECK(reduces_in_network("nvls"));
  CHECK_FALSE(reduces_in_network("ring"));
}

TEST_CASE("bisection bound across nodes: max flow through the NICs") {
  const Model m = Model::builtin("hopper");
  topo::PresetOptions o;
  o.nodes = 2;
  const topo::Topology t = topo::make_preset("dgx-h100", o);
  const Capacity c = capacity(t, m, 16);
  // Node 0 against node 1: eight 400G NDR ports (50 GB/s each) per direction, at InfiniBand's
  // efficiency, above Ethernet's.
  CHECK(c.cut_bytes_per_s == test::approx(8 * 50e9 * m.net_efficiency(true)));
  CHECK(m.net_efficiency(true) > m.net_efficiency());
  o.nic = "eth400";
  CHECK(capacity(topo::make_preset("dgx-h100", o), m, 16).cut_bytes_per_s == test::approx(8 * 50e9 * m.net_efficiency()));
  CHECK(std::count(c.first_side.begin(), c.first_side.end(), true) == 8);
  const CollectiveSpec ar = call(CollectiveKind::all_reduce, 16, 1 << 26);
  const double s = 4.0 * (1 << 26);
  CHECK(lower_bound(ar, c, true).bisection_s == test::approx(s / c.cut_bytes_per_s));
  CHECK(lower_bound(ar, c, true).limiter() == "bisection");
  // alltoall: k(N-k)/N S per direction = 8 x 8 / 16 S.
  CHECK(lower_bound(call(CollectiveKind::alltoall, 16, 1 << 26), c, false).bisection_s == test::approx(4 * s / c.cut_bytes_per_s));
  // A 2:1 oversubscribed fat tree across 4 nodes: the leaves' up-links cut the bisection in half.
  topo::PresetOptions ft;
  ft.nodes = 4;
  ft.fabric = "fat-tree";
  ft.leaf_ports = 16;  // 8 NICs per leaf: one node per leaf
  ft.spines = 4;  // 4 up-links per leaf for 8 NICs below it
  ft.oversubscription = 2;
  const Capacity over = capacity(topo::make_preset("dgx-h100", ft), m, 32);
  CHECK(over.cut_bytes_per_s == test::approx(2 * 4 * 50e9 * m.net_efficiency(true)));
}

TEST_CASE("within one PCIe box the cut is the socket link") {
  const Model m = Model::builtin("ampere");
  const topo::Topology t = topo::make_preset("pcie-gen4-8gpu");
  const Capacity c = capacity(t, m, 8);
  topo::LinkId upi = 0;
  for (topo::LinkId l = 0; l < t.links().size(); ++l)
    if (t.link(l).kind == topo::LinkKind::cpu) upi = l;
  CHECK(c.cut_bytes_per_s == test::approx(t.effective_bandwidth(upi, m)));
}

TEST_CASE("a Chrome trace has a complete event per step and link counters that add up to the link totals") {
  Model m = Model::builtin("hopper");
  CollectiveSpec spec = call(CollectiveKind::all_reduce, 4, 1 << 16);
  algo::AlgorithmOptions o;
  o.channels = 2;
  o.chunk_bytes = 32 << 10;
  const Schedule s = algo::compile("ring", spec, o);
  const topo::Topology t = flat(4);
  EngineOptions eo;
  eo.record_steps = true;
  const SimulationResult r = simulate(s, t, m, eo);
  const PlatformPlan plan = PlatformPlan::build(s, t, m);
  TraceOptions to;
  to.counter_bins = 200;
  const nlohmann::json trace = chrome_trace(s, r.timeline, plan, to);
  std::size_t complete = 0;
  std::map<std::string, std::vector<std::pair<double, double>>> counters;  // link -> (ts us, utilisation)
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
      CHECK(e["pid"].get<int>() < 4);
      CHECK(e["dur"].get<double>() >= 0);
    }
    if (e["ph"] == "C") counters[e["name"]].push_back({e["ts"].get<double>(), e["args"]["utilisation"].get<double>()});
  }
  CHECK(complete == s.step_count());
  const auto totals = plan.traffic(s);
  CHECK(counters.size() == totals.size());  // 4 ports both ways, all busy
  for (const auto& l : totals) {
    const auto& c = counters.at(l.name);
    double bytes = 0;  // integrate the step function
    for (std::size_t i = 0; i + 1 < c.size(); ++i) bytes += c[i].second * (c[i + 1].first - c[i].first) * 1e-6 * l.bandwidth_bytes_per_s;
    INFO(l.name);
    CHECK(bytes == test::approx(static_cast<double>(l.bytes)).epsilon(1e-6));
    for (const auto& [ts, u] : c) CHECK(u <= 1.0 + 1e-9);  // max-min sharing never oversubscribes a link
  }
  // The link table: busy = bytes / bandwidth, busiest first.
  const auto usage = link_usage(totals, r.timeline.total_s());
  REQUIRE(!usage.empty());
  CHECK(usage.front().busy_s == test::approx(static_cast<double>(usage.front().bytes) / usage.front().bandwidth_bytes_per_s));
  CHECK(usage.front().utilisation <= 1.0);
}
