#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <string_view>

#include "sim/algorithms/registry.hpp"
#include "sim/engine.hpp"
#include "sim/error.hpp"
#include "sim/platform.hpp"
#include "sim/topology/presets.hpp"
#include "sim/topology/rings.hpp"

using namespace ccsim;

namespace {

constexpr double kAlpha = 1e-6;
constexpr double kPortBandwidth = 18 * 25e9;  // nvswitch-flat: 18 NVLink4 lanes per GPU

// A contention-free reference: no launch cost, no compute cost, one fixed latency per step, links
// at their signalling rate.
Model pure_alpha_beta() {
  Model m = Model::builtin("hopper");
  for (auto p : all_protocols()) {
    m.set("launch_latency_us." + std::string(to_string(p)), 0, "test");
    m.set("hop_latency_us.nvlink." + std::string(to_string(p)), kAlpha * 1e6, "test");
    m.set("channel_bandwidth_gbps." + std::string(to_string(p)), 0, "test");
  }
  m.set("gpu_max_bandwidth_gbps.ll", 0, "test");
  m.set("gpu_max_bandwidth_gbps.ll128", 0, "test");
  m.set("channel_bandwidth_gbps.ll.net", 0, "test");
  m.set("nvlink_efficiency", 1.0, "test");
  return m;
}

topo::Topology flat(int n) {
  topo::PresetOptions o;
  o.gpus = n;
  return topo::make_preset("nvswitch-flat", o);
}

EngineOptions no_compute() {
  EngineOptions o;
  o.charge_compute = false;
  return o;
}

Schedule point_to_point(int nranks, const std::vector<std::pair<int, int>>& flows, std::uint64_t count,
                        Protocol protocol = Protocol::simple) {
  Schedule s;
  s.spec.nranks = nranks;
  s.spec.count = count;
  s.spec.type = DataType::uint8;
  s.algorithm = "test";
  for (const auto& [src, dst] : flows) {
    Stream tx{src, static_cast<int>(s.streams.size()), {}};
    Step send;
    send.kind = StepKind::send;
    send.peer = dst;
    send.tag = tx.channel;
    send.src = {BufferId::input, 0, count};
    send.protocol = protocol;
    tx.steps.push_back(send);
    Stream rx{dst, tx.channel, {}};
    Step recv;
    recv.kind = StepKind::recv;
    recv.peer = src;
    recv.tag = tx.channel;
    recv.dst = {BufferId::output, 0, count};
    recv.protocol = protocol;
    rx.steps.push_back(recv);
    s.streams.push_back(tx);
    s.streams.push_back(rx);
  }
  s.validate();
  return s;
}

// Rank 0 sends `chunks` chunks to rank 1 in order, one stream each side.
Schedule chunk_pipeline(int chunks, std::uint64_t chunk) {
  Schedule s;
  s.spec.nranks = 2;
  s.spec.count = chunks * chunk;
  s.spec.type = DataType::uint8;
  s.algorithm = "test";
  Stream tx{0, 0, {}}, rx{1, 0, {}};
  for (int k = 0; k < chunks; ++k) {
    Step send;
    send.kind = StepKind::send;
    send.peer = 1;
    send.src = {BufferId::input, k * chunk, chunk};
    tx.steps.push_back(send);
    Step recv;
    recv.kind = StepKind::recv;
    recv.peer = 0;
    recv.dst = {BufferId::output, k * chunk, chunk};
    rx.steps.push_back(recv);
  }
  s.streams = {tx, rx};
  s.validate();
  return s;
}

}  // namespace

TEST_CASE("a contention-free ring all_reduce matches 2(N-1)(alpha + S/(N B))") {
  const Model model = pure_alpha_beta();
  for (int n : {2, 3, 7, 8, 64}) {
    const std::uint64_t count = 4096ULL * 16 * static_cast<std::uint64_t>(n);  // S divisible by N, aligned
    CollectiveSpec spec;
    spec.nranks = n;
    spec.count = count;
    algo::AlgorithmOptions o;
    o.channels = 1;
    o.chunk_bytes = count * 4;  // one chunk loop
    const Schedule s = algo::compile("ring", spec, o);
    const double bytes = static_cast<double>(count * 4);
    const double expected = 2.0 * (n - 1) * (kAlpha + bytes / n / kPortBandwidth);
    const SimulationResult r = simulate(s, flat(n), model, no_compute());
    INFO("N=", n, " simulated=", r.timeline.total_s(), " expected=", expected);
    CHECK(std::fabs(r.timeline.total_s() - expected) / expected < 1e-9);
    CHECK(r.timeline.messages == 2ULL * (n - 1) * static_cast<std::uint64_t>(n));
  }
}

TEST_CASE("two flows into one GPU share its link: opposite directions do not interfere") {
  const Model model = pure_alpha_beta();
  const std::uint64_t bytes = 450'000'000;  // 1 ms alone at 450 GB/s
  const double alone = kAlpha + bytes / kPortBandwidth;
  const auto time = [&](const std::vector<std::pair<int, int>>& flows) {
    return simulate(point_to_point(4, flows, bytes), flat(4), model, no_compute()).timeline.total_s();
  };
  CHECK(time({{0, 1}}) == test::approx(alone).epsilon(1e-12));
  CHECK(time({{0, 2}, {1, 2}}) == test::approx(kAlpha + 2 * bytes / kPortBandwidth).epsilon(1e-12));
  CHECK(time({{0, 1}, {0, 2}}) == test::approx(kAlpha + 2 * bytes / kPortBandwidth).epsilon(1e-12));
  CHECK(time({{0, 1}, {1, 0}}) == test::approx(alone).epsilon(1e-12));
  CHECK(time({{0, 1}, {2, 3}}) == test::approx(alone).epsilon(1e-12));
}

TEST_CASE("the timeline records every step and the bytes on every link") {
  const Model model = pure_alpha_beta();
  CollectiveSpec spec;
  spec.nranks = 4;
  spec.count = 1 << 16;
  algo::AlgorithmOptions o;
  o.channels = 2;
  o.chunk_bytes = 64 << 10;
  const Schedule s = algo::compile("ring", spec, o);
  EngineOptions eo;
  eo.record_steps = true;
  const SimulationResult r = simulate(s, flat(4), model, eo);
  CHECK(r.timeline.steps.size() == s.step_count());
  for (const auto& rec : r.timeline.steps) {
    CHECK(rec.end_s >= rec.start_s);
    CHECK(rec.end_s <= r.timeline.makespan_s + 1e-15);
  }
  // Ring all_reduce: each GPU sends and receives 2(N-1)/N of the 256 KiB message.
  std::uint64_t total = 0;
  for (const auto& l : r.timeline.links) {
    CHECK(l.bytes == 2 * 3 * (256 << 10) / 4);
    total += l.bytes;
  }
  CHECK(r.timeline.links.size() == 8);  // 4 GPU ports, both directions
  CHECK(total == 8ULL * 2 * 3 * (256 << 10) / 4);
}

TEST_CASE("protocols trade latency for wire bytes: LL wins small messages, Simple large ones") {
  const Model model = Model::builtin("hopper");
  auto run = [&](std::uint64_t count, Protocol p) {
    CollectiveSpec spec;
    spec.nranks = 8;
    spec.count = count;
    algo::AlgorithmOptions o;
    o.channels = 1;
    o.chunk_bytes = 64 << 20;
    o.protocol = p;
    return simulate(algo::compile("ring", spec, o), flat(8), model).timeline;
  };
  const auto small_simple = run(2048, Protocol::simple), small_ll = run(2048, Protocol::ll);
  CHECK(small_ll.links[0].bytes == 2 * small_simple.links[0].bytes);
  CHECK(small_ll.total_s() < small_simple.total_s());
  const auto large_simple = run(16 << 20, Protocol::simple), large_ll = run(16 << 20, Protocol::ll);
  CHECK(large_ll.total_s() > 1.5 * large_simple.total_s());
}

TEST_CASE("a schedule larger than the topology is refused") {
  CollectiveSpec spec;
  spec.nranks = 16;
  spec.count = 1024;
  algo::AlgorithmOptions o;
  o.chunk_bytes = 1 << 20;
  CHECK_THROWS_WITH_AS(simulate(algo::compile("ring", spec, o), flat(8), Model::builtin("hopper")),
                       doctest::Contains("does not fit"), Error);
}

namespace {
// A call of `count` floats on one channel of a flat NVSwitch machine (one chunk loop unless
// `chunk_bytes` says less), without compute: its time.
double simulate_pure(const std::string& algorithm, CollectiveKind kind, int n, std::uint64_t count,
                     const Model& model = pure_alpha_beta(), std::uint64_t chunk_bytes = 0, bool in_place = false,
                     const EngineOptions& engine = no_compute()) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = n;
  spec.count = count;
  algo::AlgorithmOptions o;
  o.channels = 1;
  o.chunk_bytes = chunk_bytes ? chunk_bytes : count * 4;
  Schedule s = algo::compile(algorithm, spec, o);
  if (in_place) s = *in_place_variant(s);
  return simulate(s, flat(n), model, engine).timeline.total_s();
}

void check_closed_form(double simulated, double expected) {
  INFO("simulated=", simulated, " expected=", expected);
  CHECK(std::fabs(simulated - expected) / expected < 1e-9);
}
}  // namespace

TEST_CASE("contention-free times match the closed forms of the classic algorithms") {
  for (int n : {2, 4, 8, 64}) {
    const double log_n = std::log2(n);
    const std::uint64_t count = 4096ULL * 64;  // 1 MiB of float, divisible by every N here
    const double s = count * 4.0;
    INFO("N=", n);
    check_closed_form(simulate_pure("recursive_doubling", CollectiveKind::all_reduce, n, count),
                      log_n * (kAlpha + s / kPortBandwidth));
    check_closed_form(simulate_pure("halving_doubling", CollectiveKind::all_reduce, n, count),
                      2 * log_n * kAlpha + 2.0 * (n - 1) / n * s / kPortBandwidth);
    check_closed_form(simulate_pure("binomial", CollectiveKind::broadcast, n, count),
                      log_n * (kAlpha + s / kPortBandwidth));
    check_closed_form(simulate_pure("pairwise", CollectiveKind::alltoall, n, count),
                      (n - 1) * (kAlpha + s / n / kPortBandwidth));
    // PAT: log2(N) aggregated messages per rank, (N-1)/N of the buffer in all.
    check_closed_form(simulate_pure("pat", CollectiveKind::all_gather, n, count),
                      log_n * kAlpha + (n - 1.0) / n * s / kPortBandwidth);
  }
  // Pairwise exchange with a non-power-of-two N shifts instead of XOR: still one flow per link.
  check_closed_form(simulate_pure("pairwise", CollectiveKind::alltoall, 7, 7 * 4096),
                    6 * (kAlpha + 4096 * 4.0 / kPortBandwidth));
}

#include <nlohmann/json.hpp>

#include "sim/topology/json_io.hpp"

namespace {
// The PCIe tests' model: links at their full signalling rate and one kAlpha per Simple PCIe step,
// so a transfer of B bytes over a PCIe Gen4 x16 link takes kAlpha + B / kPcieGen4x16.
constexpr double kPcieGen4x16 = 16 * 1.96875e9;  // per direction (configs/links.json)
Model pcie_alpha_beta() {
  Model m = pure_alpha_beta();
  m.set("pcie_efficiency", 1.0, "test");
  m.set("hop_latency_us.pcie.simple", kAlpha * 1e6, "test");
  return m;
}
}  // namespace

TEST_CASE("P2P through a CPU runs at NCCL's 5/6 of the narrowest link, shared by the transfers between the two GPUs") {
  const topo::Topology t = topo::topology_from_json(nlohmann::json::parse(R"({"name": "two-on-a-cpu", "devices": [
      {"name": "gpu0", "kind": "gpu", "arch": "hopper"}, {"name": "gpu1", "kind": "gpu", "arch": "hopper"},
      {"name": "cpu0", "kind": "cpu"}],
    "links": [{"from": "gpu0", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
              {"from": "gpu1", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16}]})"), "test");
  Model m = pcie_alpha_beta();
  const std::uint64_t bytes = 100'000'000;
  const double link = kPcieGen4x16;
  const double time = simulate(point_to_point(2, {{0, 1}}, bytes), t, m, no_compute()).timeline.total_s();
  CHECK(time == test::approx(kAlpha + bytes / (link * m.cpu_p2p_bandwidth_factor())).epsilon(1e-9));
  // It is what the CPU forwards between the two GPUs: two transfers (two channels) share it, and
  // the opposite direction has its own.
  const double two = simulate(point_to_point(2, {{0, 1}, {0, 1}}, bytes), t, m, no_compute()).timeline.total_s();
  CHECK(two == test::approx(kAlpha + 2 * bytes / (link * m.cpu_p2p_bandwidth_factor())).epsilon(1e-9));
  const double both = simulate(point_to_point(2, {{0, 1}, {1, 0}}, bytes), t, m, no_compute()).timeline.total_s();
  CHECK(both == test::approx(time).epsilon(1e-9));
}

TEST_CASE("P2P through an AMD CPU runs at its own factor, NCCL's none by default") {
  // Two sockets joined by xGMI mark the host AMD (nccl::has_amd_cpu); the GPUs sit on one of them.
  const topo::Topology t = topo::topology_from_json(nlohmann::json::parse(R"({"name": "two-on-an-epyc", "devices": [
      {"name": "gpu0", "kind": "gpu", "arch": "hopper"}, {"name": "gpu1", "kind": "gpu", "arch": "hopper"},
      {"name": "cpu0", "kind": "cpu"}, {"name": "cpu1", "kind": "cpu"}],
    "links": [{"from": "gpu0", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
              {"from": "gpu1", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
              {"from": "cpu0", "to": "cpu1", "kind": "cpu", "generation": "xgmi"}]})"), "test");
  Model m = pcie_alpha_beta();
  CHECK(m.cpu_p2p_bandwidth_factor(true) == 1.0);
  CHECK(m.cpu_p2p_bandwidth_factor(false) < 1.0);
  const std::uint64_t bytes = 100'000'000;
  const double link = kPcieGen4x16;
  CHECK(simulate(point_to_point(2, {{0, 1}}, bytes), t, m, no_compute()).timeline.total_s() ==
        test::approx(kAlpha + bytes / link).epsilon(1e-9));
  m.set("cpu_p2p_bandwidth_factor.amd", 0.5, "test");
  CHECK(simulate(point_to_point(2, {{0, 1}}, bytes), t, m, no_compute()).timeline.total_s() ==
        test::approx(kAlpha + bytes / (0.5 * link)).epsilon(1e-9));
}

TEST_CASE("P2P across a socket link runs at its p2p_fraction of P2P inside a socket") {
  // gpu0 and gpu1 share cpu0; gpu2 sits on cpu1, behind an xGMI link far wider than one GPU's PCIe.
  const topo::Topology t = topo::topology_from_json(nlohmann::json::parse(R"({"name": "epyc-two-sockets", "devices": [
      {"name": "gpu0", "kind": "gpu", "arch": "hopper"}, {"name": "gpu1", "kind": "gpu", "arch": "hopper"},
      {"name": "gpu2", "kind": "gpu", "arch": "hopper"}, {"name": "cpu0", "kind": "cpu"}, {"name": "cpu1", "kind": "cpu"}],
    "links": [{"from": "gpu0", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
              {"from": "gpu1", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
              {"from": "gpu2", "to": "cpu1", "kind": "pcie", "generation": "4", "lanes": 16},
              {"from": "cpu0", "to": "cpu1", "kind": "cpu", "generation": "xgmi", "p2p_fraction": 0.8}]})"), "test");
  Model m = pcie_alpha_beta();
  const std::uint64_t bytes = 100'000'000;
  const double link = kPcieGen4x16;
  const double amd = m.cpu_p2p_bandwidth_factor(true);
  CHECK(simulate(point_to_point(3, {{0, 1}}, bytes), t, m, no_compute()).timeline.total_s() ==
        test::approx(kAlpha + bytes / (link * amd)).epsilon(1e-9));
  CHECK(simulate(point_to_point(3, {{0, 2}}, bytes), t, m, no_compute()).timeline.total_s() ==
        test::approx(kAlpha + bytes / (0.8 * link * amd)).epsilon(1e-9));
  // The rate is each pair's, not one budget of the socket link: two pairs crossing into gpu2 share
  // gpu2's PCIe link (half each), not 0.8 of it.
  CHECK(simulate(point_to_point(3, {{0, 2}, {1, 2}}, bytes), t, m, no_compute()).timeline.total_s() ==
        test::approx(kAlpha + 2 * bytes / link).epsilon(1e-9));
}

TEST_CASE("through host memory a GPU loads at shm_bandwidth_factor of its link, one budget for all its senders") {
  const topo::Topology t = topo::topology_from_json(nlohmann::json::parse(R"({"name": "three-without-p2p", "pcie_p2p": false,
    "devices": [{"name": "gpu0", "kind": "gpu", "arch": "hopper"}, {"name": "gpu1", "kind": "gpu", "arch": "hopper"},
                {"name": "gpu2", "kind": "gpu", "arch": "hopper"}, {"name": "cpu0", "kind": "cpu"}],
    "links": [{"from": "gpu0", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
              {"from": "gpu1", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
              {"from": "gpu2", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16}]})"), "test");
  Model m = pcie_alpha_beta();
  const double shm = m.get("shm_bandwidth_factor");
  const std::uint64_t bytes = 100'000'000;
  const double link = kPcieGen4x16;
  const double one = simulate(point_to_point(3, {{0, 2}}, bytes), t, m, no_compute()).timeline.total_s();
  CHECK(one == test::approx(kAlpha + bytes / (link * shm)).epsilon(1e-9));
  // Two senders into gpu2 share its loads (per pair they would each have had the full rate).
  const double two = simulate(point_to_point(3, {{0, 2}, {1, 2}}, bytes), t, m, no_compute()).timeline.total_s();
  CHECK(two == test::approx(kAlpha + 2 * bytes / (link * shm)).epsilon(1e-9));
  // Loads into different GPUs do not share.
  const double apart = simulate(point_to_point(3, {{0, 2}, {2, 1}}, bytes), t, m, no_compute()).timeline.total_s();
  CHECK(apart == test::approx(one).epsilon(1e-9));
}

TEST_CASE("every algorithm's schedules run to completion on the engine (no deadlock, data-sized timelines)") {
  topo::PresetOptions o;
  o.nodes = 3;  // 24 GPUs with NVLS switches, NICs on rails and SHARP leaves
  o.sharp = true;
  const topo::Topology t = topo::make_preset("dgx-h100", o);
  const Model model = Model::builtin("hopper");
  for (const auto& a : algo::algorithms())
    for (auto kind : a.collectives) {
      CollectiveSpec spec;
      spec.kind = kind;
      spec.nranks = 24;
      spec.count = 24 * 4096;
      spec.root = 5;
      algo::AlgorithmOptions opt;
      opt.channels = 4;
      opt.chunk_bytes = 16 << 10;  // several chunk loops
      opt.ranks_per_node = 8;
      opt.nvls = opt.sharp = true;
      if (a.name == "nvls") opt.ranks_per_node = 0;  // one node's worth of ranks below
      if (a.name == "nvls") spec.nranks = 8, spec.count = 8 * 4096;
      INFO(a.name, " ", std::string(to_string(kind)));
      const Schedule s = algo::compile(a.name, spec, opt);
      const SimulationResult r = simulate(s, t, model);
      CHECK(r.timeline.messages > 0);
      // Data-sized: no GPU sends faster than all its links together could carry it (18 NVLink4
      // lanes and a NIC, 500 GB/s), wire overhead aside.
      std::uint64_t most_sent = 0;
      const std::vector<RankVolume> volumes = rank_volumes(s);
      for (int rank = 0; rank < spec.nranks; ++rank)
        most_sent = std::max(most_sent, volumes[static_cast<std::size_t>(rank)].sent_bytes);
      REQUIRE(most_sent > 0);
      CHECK(r.timeline.total_s() >= static_cast<double>(most_sent) / 500e9);
    }
}

TEST_CASE("a stream that sends to many peers before receiving does not deadlock (alltoall on 128 GPUs)") {
  for (const char* algorithm : {"direct", "bruck", "pat"}) {
    CollectiveSpec spec;
    spec.kind = std::string(algorithm) == "pat" ? CollectiveKind::all_gather : CollectiveKind::alltoall;
    spec.nranks = 128;
    spec.count = 128 * 64;
    algo::AlgorithmOptions opt;
    opt.chunk_bytes = 1 << 20;
    INFO(algorithm);
    CHECK(simulate(algo::compile(algorithm, spec, opt), flat(128), Model::builtin("hopper")).timeline.total_s() > 0);
  }
}

TEST_CASE("staged receives run their kernel after the data: transfer, then 2 or 3 bytes of HBM per byte") {
  Model model = pure_alpha_beta();
  const double hbm = 1e12;
  model.set("hbm_bandwidth_gbps", hbm / 1e9, "test");
  const std::uint64_t count = 1 << 24;
  const double c = static_cast<double>(count);
  for (bool reduce : {false, true}) {
    Schedule s = point_to_point(2, {{0, 1}}, count);
    s.streams[1].steps[0].reduce = reduce;
    s.streams[1].steps[0].src = {BufferId::input, 0, count};
    EngineOptions staged;
    staged.staged_receives = true;
    const double expected = kAlpha + c / kPortBandwidth + (reduce ? 3 : 2) * c / hbm;
    const double got = simulate(s, flat(2), model, staged).timeline.total_s();
    INFO("reduce=", reduce, " simulated=", got, " expected=", expected);
    CHECK(std::fabs(got - expected) / expected < 1e-9);
    // Fused (the default): the receive-reduce kernel starts when the recv is posted and overlaps the
    // latency and the transfer; a plain recv costs nothing.
    const double fused = simulate(s, flat(2), model).timeline.total_s();
    const double fused_expected = std::max(kAlpha + c / kPortBandwidth, reduce ? 3 * c / hbm : 0.0);
    CHECK(std::fabs(fused - fused_expected) / fused_expected < 1e-9);
    // The executor's recv kernel is a dependent launch after the data, and reads the part of its
    // slot still in L2 for nothing.
    staged.staged_launch_s = 3e-6;
    staged.staged_slot_hbm_share = 0.25;
    const double launched = simulate(s, flat(2), model, staged).timeline.total_s();
    const double launched_expected = kAlpha + c / kPortBandwidth + 3e-6 + (reduce ? 2.25 : 1.25) * c / hbm;
    CHECK(std::fabs(launched - launched_expected) / launched_expected < 1e-9);
  }
}

TEST_CASE("sends of the same data to several peers pay one latency, sends of different data one each") {
  const Model model = pure_alpha_beta();
  const std::uint64_t count = 1000;  // bandwidth time negligible next to alpha
  auto fan_out = [&](bool same_data) {
    Schedule s;
    s.spec.nranks = 4;
    s.spec.count = 4 * count;
    s.spec.type = DataType::uint8;
    s.algorithm = "test";
    Stream tx{0, 0, {}};
    for (int peer = 1; peer < 4; ++peer) {
      Step send;
      send.kind = StepKind::send;
      send.peer = peer;
      send.src = {BufferId::input, same_data ? 0 : static_cast<std::uint64_t>(peer) * count, count};
      tx.steps.push_back(send);
      Stream rx{peer, 0, {}};
      Step recv;
      recv.kind = StepKind::recv;
      recv.peer = 0;
      recv.dst = {BufferId::output, 0, count};
      rx.steps.push_back(recv);
      s.streams.push_back(rx);
    }
    s.streams.push_back(tx);
    s.validate();
    return simulate(s, flat(4), model, no_compute()).timeline.total_s();
  };
  const double transfer = 3.0 * count / kPortBandwidth;
  CHECK(fan_out(true) <= kAlpha + transfer + 1e-15);
  CHECK(fan_out(false) >= 3 * kAlpha);
}

TEST_CASE("a ring across nodes pays the network latency only where its chain of steps crosses nodes") {
  // 16 ranks on 2 nodes, ring 0..15: the 30 steps of an all_reduce form a chain of hops around the
  // ring, at most 4 of them across nodes. A sender does not wait out a network hop's latency (the
  // proxy and the NIC carry it), so a tiny all_reduce takes 26 NVLink hops and 4 network hops,
  // not 30 network hops.
  topo::PresetOptions o;
  o.nodes = 2;
  const topo::Topology t = topo::make_preset("dgx-h100", o);
  Model m = Model::builtin("hopper");
  m.set("launch_latency_us.ll", 0, "test");
  CollectiveSpec spec;
  spec.nranks = 16;
  spec.count = 16;
  algo::AlgorithmOptions opt;
  opt.channels = 1;
  opt.protocol = Protocol::ll;
  opt.chunk_bytes = 64;
  opt.ranks_per_node = 8;
  const double nvlink = m.hop_latency_s(LatencyClass::nvlink, Protocol::ll);
  const double net = m.hop_latency_s(LatencyClass::net, Protocol::ll);
  REQUIRE(net > 2 * nvlink);
  const Schedule ring = algo::compile("ring", spec, opt);
  m.set("net_post_overhead_us", 0, "test");
  // Within 1%: the 30 steps' wire time adds 0.4%; 30 network hops would take three times as long.
  CHECK(simulate(ring, t, m, no_compute()).timeline.total_s() == test::approx(26 * nvlink + 4 * net).epsilon(1e-2));
  // NCCL's network post overhead is the GPU side of a network step: above the NVLink hop latency,
  // it paces the stream of the rank that sends across nodes, at every one of its 30 steps.
  const double post = 2e-6;
  m.set("net_post_overhead_us", post * 1e6, "test");
  const double paced = simulate(ring, t, m, no_compute()).timeline.total_s();
  CHECK(paced >= 30 * post);
  CHECK(paced <= 30 * post + 4 * net);
}

TEST_CASE("a sender fills its peer's 8 FIFO slots while the peer is busy, and waits for the peer to consume more") {
  // NCCL writes into the receiver's buffer whatever step the receiver is at, as long as one of the
  // connection's NCCL_STEPS = 8 slots is free; a slot frees when the receiver has consumed it. Here
  // the receiver copies for longer than 8 chunks take to arrive: they arrive during the copy, the
  // other 8 after it, one after another.
  Model model = pure_alpha_beta();
  const double hbm = 1e12;
  model.set("hbm_bandwidth_gbps", hbm / 1e9, "test");
  constexpr int kChunks = 16;
  const std::uint64_t chunk = 1 << 20;
  Schedule s = chunk_pipeline(kChunks, chunk);
  s.scratch_count = kChunks * chunk;
  Step copy;
  copy.kind = StepKind::copy;
  copy.src = {BufferId::input, 0, kChunks * chunk};
  copy.dst = {BufferId::scratch, 0, kChunks * chunk};
  s.streams[1].steps.insert(s.streams[1].steps.begin(), copy);  // 2 x 16 MiB of HBM traffic at 1 TB/s: 33.6 us
  s.validate();
  const double copy_time = 2.0 * kChunks * chunk / hbm, chunk_time = chunk / kPortBandwidth;
  REQUIRE(copy_time > kAlpha + 8 * chunk_time);
  const double time = simulate(s, flat(2), model).timeline.total_s();
  CHECK(time == test::approx(copy_time + 8 * chunk_time + kAlpha).epsilon(1e-6));
}

TEST_CASE("connections are told apart by their whole tag (composed schedules use tags beyond 2^24)") {
  // (0 -> 1, tag 0) and (0 -> 2, tag 3 << 24) once shared a mailbox and a FIFO: rank 2 waited for
  // ever (a hierarchical all_reduce on 128 nodes deadlocked).
  Schedule s = point_to_point(3, {{0, 1}, {0, 2}}, 1 << 20);
  for (auto& stream : s.streams)
    for (auto& step : stream.steps)
      if (step.peer == 2 || stream.rank == 2) step.tag = 3 << 24;
  s.validate();
  const double time = simulate(s, flat(3), pure_alpha_beta(), no_compute()).timeline.total_s();
  CHECK(time == test::approx(kAlpha + 2.0 * (1 << 20) / kPortBandwidth).epsilon(1e-6));  // rank 0's port, shared
}

TEST_CASE("a pipeline of chunks to one GPU pays the step latency once, not once per chunk") {
  // NCCL's 8 slots per connection let a sender write chunk k+1 while chunk k's flag travels: the
  // chunks stream at the link's rate and only the arrival of each waits out the latency.
  const Model model = pure_alpha_beta();
  constexpr int kChunks = 8;
  const std::uint64_t chunk = 1 << 20;
  const Schedule s = chunk_pipeline(kChunks, chunk);
  const double time = simulate(s, flat(2), model, no_compute()).timeline.total_s();
  CHECK(time == test::approx(kAlpha + kChunks * chunk / kPortBandwidth).epsilon(1e-6));
}

TEST_CASE("a broadcast root's chunks pay the step latency once: its copy of each chunk does not break the run") {
  // The root sends a chunk and copies it into its own output, chunk after chunk: with the copies
  // free, the chunks stream to its peer as a pipeline's do (one latency, then the link's rate).
  const std::uint64_t chunk = 1 << 20, count = 8 * chunk / 4;
  const double time = simulate_pure("ring", CollectiveKind::broadcast, 2, count, pure_alpha_beta(), chunk);
  CHECK(time == test::approx(kAlpha + 8.0 * chunk / kPortBandwidth).epsilon(1e-6));
}

namespace {
// A broadcast of one float per rank down a ring of `nranks`, LL, one channel: a chain of latencies.
struct TinyChain {
  CollectiveSpec spec;
  algo::AlgorithmOptions options;
};
TinyChain tiny_ll_chain(int nranks) {
  TinyChain c;
  c.spec.nranks = nranks;
  c.spec.count = static_cast<std::uint64_t>(nranks);
  c.spec.kind = CollectiveKind::broadcast;
  c.options.channels = 1;
  c.options.protocol = Protocol::ll;
  c.options.chunk_bytes = 64;
  return c;
}
}  // namespace

TEST_CASE("calls run back to back overlap a chain's tail with the next call's head, not a ring's") {
  // nccl-tests times a run of calls on every rank's stream. A broadcast's root moves on to the next
  // call once its part is sent, so the calls overlap along the chain: each costs its launch and a
  // hop or two, not the 7 hops of one call alone (NCCL's model says the same: L + one hop latency
  // when every channel runs the same ring, reference/nccl-model.md §3.5). In a ring all_reduce every
  // rank waits for every other, so a call still takes its whole makespan.
  Model m = pure_alpha_beta();
  const double launch = 5e-6;
  m.set("launch_latency_us.ll", launch * 1e6, "test");
  auto [spec, opt] = tiny_ll_chain(8);
  EngineOptions b2b = no_compute();
  b2b.back_to_back = true;
  const Schedule chain = algo::compile("ring", spec, opt);
  const Timeline one = simulate(chain, flat(8), m, no_compute()).timeline;
  const Timeline run = simulate(chain, flat(8), m, b2b).timeline;
  CHECK(one.total_s() == test::approx(launch + 7 * kAlpha).epsilon(1e-3));
  CHECK(run.makespan_s == test::approx(one.makespan_s).epsilon(1e-3));  // the first call is the same
  CHECK(run.total_s() >= launch);
  CHECK(run.total_s() <= launch + 3 * kAlpha);
  // nccl-tests' loop of n calls starts idle: the first call takes its whole makespan, each later one
  // a period, and the loop's time is divided by n.
  CHECK(run.per_call_s(20) == test::approx((run.makespan_s + run.launch_latency_s + 19 * run.total_s()) / 20).epsilon(1e-9));
  CHECK(run.per_call_s(0) == run.total_s());
  CHECK(one.per_call_s(20) == one.total_s());  // not run back to back: a call alone

  spec.kind = CollectiveKind::all_reduce;
  const Schedule ring = algo::compile("ring", spec, opt);
  const double alone = simulate(ring, flat(8), m, no_compute()).timeline.total_s();
  CHECK(simulate(ring, flat(8), m, b2b).timeline.total_s() == test::approx(alone).epsilon(1e-3));
}

TEST_CASE("an LL chain inside a node forwards each chunk piece by piece, not chunk by chunk") {
  // LL flags every 8-byte word, so a GPU passes on what one thread block pass (512 threads x 8 data
  // bytes) brought in without waiting for the rest of the chunk: each hop adds a piece's time and a
  // latency, and the chunk's pieces follow at the link's rate. Simple forwards whole slices.
  const Model m = pure_alpha_beta();
  CollectiveSpec spec;
  spec.nranks = 8;
  spec.kind = CollectiveKind::broadcast;
  spec.type = DataType::uint8;
  spec.count = 1 << 20;  // one chunk
  algo::AlgorithmOptions opt;
  opt.channels = 1;
  opt.chunk_bytes = spec.count;
  opt.protocol = Protocol::ll;
  const double pieces = spec.count / 4096.0, piece_time = 2 * 4096 / kPortBandwidth;  // LL: 16-byte lines of 8 data bytes
  const double ll = simulate(algo::compile("ring", spec, opt), flat(8), m, no_compute()).timeline.total_s();
  // 7 hops, each holding the stream for its latency before its first piece, then the pieces in a row.
  CHECK(ll == test::approx(8 * kAlpha + (7 + pieces - 1) * piece_time).epsilon(1e-3));
  opt.protocol = Protocol::simple;
  opt.chunk_bytes = 4 * spec.count;  // a ring broadcast's Simple chunk is a quarter of it: one chunk again
  const double simple = simulate(algo::compile("ring", spec, opt), flat(8), m, no_compute()).timeline.total_s();
  CHECK(simple == test::approx(7 * (kAlpha + spec.count / kPortBandwidth)).epsilon(1e-3));
}

namespace {

// A call of 16 ranks, 8 per node, as fold_copies would fold it.
struct FoldCase {
  const char* algorithm;
  CollectiveKind kind;
  Protocol protocol;
  std::uint64_t bytes;
  int channels;
  std::vector<std::vector<int>> rings;
};

// Folds the call's channels to `folded_channels` streams of channels / folded_channels blocks each
// and checks that the folded schedule times the same within `epsilon` (a rooted call timed back to
// back, as nccl-tests times it).
void check_fold_times_alike(const topo::Topology& t, const Model& m, const FoldCase& k, int folded_channels, double epsilon) {
  CAPTURE(k.algorithm);
  CAPTURE(to_string(k.kind));
  CAPTURE(to_string(k.protocol));
  CollectiveSpec spec;
  spec.nranks = 16;
  spec.kind = k.kind;
  spec.type = DataType::fp32;
  spec.count = k.bytes / 4;
  algo::AlgorithmOptions opt;
  opt.protocol = k.protocol;
  opt.channels = k.channels;
  opt.chunk_bytes = m.chunk_bytes(k.protocol);
  opt.ranks_per_node = 8;
  opt.rings = k.rings;
  opt.nvls = std::string_view(k.algorithm).starts_with("nvls");
  opt.sharp = std::string_view(k.algorithm).starts_with("collnet");
  const int blocks = k.channels / folded_channels;
  const algo::AlgorithmOptions folded = algo::fold_copies(k.algorithm, spec, opt);
  REQUIRE(folded.channels == folded_channels);
  REQUIRE(folded.blocks == blocks);
  const Schedule whole = algo::compile(k.algorithm, spec, opt), fewer = algo::compile(k.algorithm, spec, folded);
  CHECK(fewer.streams.size() * static_cast<std::size_t>(blocks) == whole.streams.size());
  EngineOptions e;
  e.back_to_back = is_rooted(k.kind);
  const double a = simulate(whole, t, m, e).timeline.total_s(), b = simulate(fewer, t, m, e).timeline.total_s();
  CHECK(b == test::approx(a).epsilon(epsilon));
}

}  // namespace

TEST_CASE("NCCL's duplicated channels run as one stream of two blocks in the same time") {
  // NCCL launches twice the channels its search found, the copies on the same rings. Folding each
  // pair into one stream with twice the chunk, pieces and per-block rate must not change any time:
  // every flow in the system is folded alike, so max-min shares stay as they were.
  topo::PresetOptions po;
  po.nodes = 2;
  const topo::Topology t = topo::make_preset("dgx-h100", po);
  const Model m = Model::builtin("hopper");
  auto rings = topo::rings(t, 16, 8);
  for (int c = 0; c < 8; ++c) rings.push_back(rings[static_cast<std::size_t>(c)]);
  struct Case {
    const char* algorithm;
    CollectiveKind kind;
    Protocol protocol;
    std::uint64_t bytes;
  };
  const Case cases[] = {
      {"ring", CollectiveKind::all_reduce, Protocol::simple, 64 << 20}, {"ring", CollectiveKind::all_reduce, Protocol::ll128, 4 << 20},
      {"ring", CollectiveKind::all_reduce, Protocol::ll, 256 << 10},    {"tree", CollectiveKind::all_reduce, Protocol::ll128, 8 << 20},
      {"tree", CollectiveKind::all_reduce, Protocol::simple, 32 << 20}, {"ring", CollectiveKind::all_gather, Protocol::simple, 16 << 20},
      {"ring", CollectiveKind::broadcast, Protocol::ll128, 4 << 20},
  };
  for (const Case& k : cases)
    check_fold_times_alike(t, m, {k.algorithm, k.kind, k.protocol, k.bytes, 16, rings}, 8, 1e-4);
  // One A100 node, 24 channels on 12 rings: each GPU's 24 (12) flows meet on its NVSwitch port,
  // and events at nearly the same instants resolve in another order; the times agree within 1%
  // (0.6% here; no row of the accuracy map moved by more than 0.65% when folding came in).
  const topo::Topology a100 = topo::make_preset("dgx-a100");
  const Model ampere = Model::builtin("ampere");
  CollectiveSpec spec;
  spec.nranks = 8;
  spec.kind = CollectiveKind::all_gather;
  spec.type = DataType::fp32;
  spec.count = (16 << 20) / 4;
  algo::AlgorithmOptions opt;
  opt.channels = 24;
  opt.chunk_bytes = ampere.chunk_bytes(Protocol::simple);
  opt.rings = topo::rings(a100, 8, 12);
  for (int c = 0; c < 12; ++c) opt.rings.push_back(opt.rings[static_cast<std::size_t>(c)]);
  const algo::AlgorithmOptions folded = algo::fold_copies("ring", spec, opt);
  REQUIRE(folded.blocks == 2);
  const double a = simulate(algo::compile("ring", spec, opt), a100, ampere).timeline.total_s();
  const double b = simulate(algo::compile("ring", spec, folded), a100, ampere).timeline.total_s();
  CHECK(b == test::approx(a).epsilon(0.01));
}

TEST_CASE("channels fold only where they repeat") {
  CollectiveSpec spec;
  spec.nranks = 16;
  spec.kind = CollectiveKind::all_reduce;
  spec.count = 1 << 20;
  algo::AlgorithmOptions opt;
  opt.channels = 6;
  opt.chunk_bytes = 1 << 17;
  opt.ranks_per_node = 8;
  // No ring orders: every ring channel is alike and runs as one stream of six blocks.
  CHECK(algo::fold_copies("ring", spec, opt).blocks == 6);
  CHECK(algo::fold_copies("ring", spec, opt).chunk_bytes == 6 << 17);
  // A tree all_reduce's head rotates over the node's 8 GPUs: 6 channels have 6 heads, none alike.
  CHECK(algo::fold_copies("tree", spec, opt).blocks == 1);
  opt.channels = 16;
  CHECK(algo::fold_copies("tree", spec, opt).channels == 8);
  // Three distinct rings repeated, and one that is not: only the first repeats.
  std::vector<int> a(16), b(16), c(16);
  for (int i = 0; i < 16; ++i) a[i] = i, b[i] = 15 - i, c[i] = (i + 1) % 16;
  opt.channels = 6;
  opt.rings = {a, b, c, a, b, c};
  CHECK(algo::fold_copies("ring", spec, opt).channels == 3);
  opt.rings = {a, b, c, a, b, a};
  CHECK(algo::fold_copies("ring", spec, opt).blocks == 1);
  // Algorithms whose channels differ in more than their data keep them.
  opt.rings.clear();
  CHECK(algo::fold_copies("bruck", spec, opt).blocks == 1);
  CHECK(algo::fold_copies("direct", spec, opt).channels == 1);
  CHECK(algo::fold_copies("direct", spec, opt).blocks == 6);
}

TEST_CASE("NVLS and CollNet channels fold where they repeat, in the same time") {
  // NVLS channels differ only in their slice of the data, nvls_tree's also in which of the two trees
  // crosses the nodes: 16 channels fold to 1 (2) streams of 16 (8) blocks in the same time. At 128
  // DGX H100 nodes the unfolded 1 GiB all_reduce held 19 GB.
  topo::PresetOptions po;
  po.nodes = 2;
  const topo::Topology two = topo::make_preset("dgx-h100", po);
  const Model m = Model::builtin("hopper");
  for (const std::uint64_t bytes : {std::uint64_t{2} << 20, std::uint64_t{64} << 20})
    check_fold_times_alike(two, m, {"nvls_tree", CollectiveKind::all_reduce, Protocol::simple, bytes, 16, {}}, 2, 1e-4);
  // CollNet's channels alike: direct's differ in their slice only (16 fold to 1), chain's also
  // in the GPU whose NIC leads (channel mod 8: 16 fold to 8 of 2 blocks).
  po.sharp = true;
  const topo::Topology sharp = topo::make_preset("dgx-h100", po);
  check_fold_times_alike(sharp, m, {"collnet_direct", CollectiveKind::all_reduce, Protocol::simple, 64 << 20, 16, {}}, 1, 1e-4);
  check_fold_times_alike(sharp, m, {"collnet_chain", CollectiveKind::all_reduce, Protocol::simple, 64 << 20, 16, {}}, 8, 1e-4);
  const topo::Topology one = topo::make_preset("dgx-h100");
  for (const CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather}) {
    CAPTURE(to_string(kind));
    CollectiveSpec spec;
    spec.nranks = 8;
    spec.kind = kind;
    spec.type = DataType::fp32;
    spec.count = (32 << 20) / 4;
    algo::AlgorithmOptions opt;
    opt.channels = 16;
    opt.chunk_bytes = 128 << 10;
    opt.nvls = true;
    const algo::AlgorithmOptions folded = algo::fold_copies("nvls", spec, opt);
    REQUIRE(folded.channels == 1);
    REQUIRE(folded.blocks == 16);
    const double a = simulate(algo::compile("nvls", spec, opt), one, m).timeline.total_s();
    const double b = simulate(algo::compile("nvls", spec, folded), one, m).timeline.total_s();
    CHECK(b == test::approx(a).epsilon(1e-4));
  }
}

TEST_CASE("point-to-point exchanges run as one stream of all their channels in the same time") {
  // Every channel of a direct or pairwise exchange talks to the same peers in the same order, each
  // with its slice of every block; one stream of all the blocks must time the same with an eighth of
  // the SimGrid flows (a 64-rank direct alltoall went from 33 s to 2 s).
  topo::PresetOptions po;
  po.nodes = 2;
  const topo::Topology t = topo::make_preset("dgx-h100", po);
  const Model m = Model::builtin("hopper");
  struct Case {
    const char* algorithm;
    CollectiveKind kind;
    Protocol protocol;
  };
  const Case cases[] = {{"direct", CollectiveKind::alltoall, Protocol::simple},
                        {"direct", CollectiveKind::all_gather, Protocol::ll128},
                        {"direct", CollectiveKind::reduce, Protocol::simple},
                        {"pairwise", CollectiveKind::alltoall, Protocol::ll}};
  for (const Case& k : cases) check_fold_times_alike(t, m, {k.algorithm, k.kind, k.protocol, 8 << 20, 8, {}}, 1, 1e-3);
}

namespace {
// An 8-rank all_reduce of 32768 elements on two channels of 64 KiB chunks.
struct SmallCall {
  CollectiveSpec spec;
  algo::AlgorithmOptions options;
};
SmallCall small_call(Protocol protocol) {
  SmallCall c;
  c.spec.nranks = 8;
  c.spec.count = 8 * 4096;
  c.options.channels = 2;
  c.options.chunk_bytes = 64 << 10;
  c.options.protocol = protocol;
  return c;
}
}  // namespace

TEST_CASE("an NVLS call pays the NVLS kernels' fixed cost, a ring call its protocol's launch latency") {
  Model m = Model::builtin("hopper");
  m.set("launch_latency_us.nvls", 30, "test");
  m.set("launch_latency_us.simple", 8, "test");
  m.set("launch_latency_us.ll", 5, "test");
  auto [spec, o] = small_call(Protocol::simple);
  o.nvls = true;
  CHECK(launch_latency_s(algo::compile("nvls", spec, o), m) == test::approx(30e-6));
  CHECK(launch_latency_s(algo::compile("ring", spec, o), m) == test::approx(8e-6));
  o.protocol = Protocol::ll;
  CHECK(launch_latency_s(algo::compile("ring", spec, o), m) == test::approx(5e-6));
  // The simulated call: its makespan plus that cost.
  const topo::Topology t = topo::make_preset("dgx-h100", {});
  o.protocol = Protocol::simple;
  const double with = simulate(algo::compile("nvls", spec, o), t, m).timeline.total_s();
  m.set("launch_latency_us.nvls", 10, "test");
  const double without = simulate(algo::compile("nvls", spec, o), t, m).timeline.total_s();
  CHECK(with - without == test::approx(20e-6).epsilon(1e-6));
}

TEST_CASE("a call pays the set-up of each of its thread blocks once, rooted calls back to back once a loop") {
  Model m = pure_alpha_beta();
  m.set("launch_latency_us.ll", 5, "test");
  m.set("block_setup_us", 1.5, "test");
  auto [spec, o] = small_call(Protocol::ll);
  for (int channels : {1, 4, 12}) {
    o.channels = channels;
    const Schedule ring = algo::compile("ring", spec, o);
    CHECK(block_setup_s(ring, m) == test::approx(1.5e-6 * channels));
    CHECK(launch_latency_s(ring, m) == test::approx(5e-6 + 1.5e-6 * channels));
  }
  // A stream standing for several identical blocks counts each of them: with one ring, all 12
  // channels fold into one stream of 12 blocks.
  o.channels = 12;
  const algo::AlgorithmOptions folded = algo::fold_copies("ring", spec, o);
  REQUIRE(folded.blocks == 12);
  CHECK(block_setup_s(algo::compile("ring", spec, folded), m) == test::approx(1.5e-6 * 12));

  // An all_reduce's time grows by the set-up; a broadcast run back to back does not pay it per call.
  o.channels = 4;
  const Schedule ring = algo::compile("ring", spec, o);
  const double with = simulate(ring, flat(8), m, no_compute()).timeline.total_s();
  spec.kind = CollectiveKind::broadcast;
  const Schedule chain = algo::compile("ring", spec, o);
  EngineOptions b2b = no_compute();
  b2b.back_to_back = true;
  const Timeline chain_with = simulate(chain, flat(8), m, b2b).timeline;
  m.set("block_setup_us", 0, "test");
  CHECK(with - simulate(ring, flat(8), m, no_compute()).timeline.total_s() == test::approx(6e-6).epsilon(1e-6));
  const Timeline chain_without = simulate(chain, flat(8), m, b2b).timeline;
  CHECK(chain_with.total_s() == test::approx(chain_without.total_s()).epsilon(1e-6));
  CHECK(chain_with.makespan_s + chain_with.launch_latency_s - chain_without.makespan_s - chain_without.launch_latency_s ==
        test::approx(6e-6).epsilon(1e-6));
}

TEST_CASE("a network transport delays each network message, and a Simple one on a GPU that flushes twice") {
  // The ring of the test above: a tiny all_reduce's chain crosses nodes 4 times. Over EFA every
  // crossing arrives the transport's message latency later; with Simple on an A100, which flushes
  // what the NIC wrote before reading it, the flush latency too; on an H100, which does not flush,
  // only the message latency.
  auto chain = [](const std::string& preset, const std::string& nic, Protocol proto) {
    topo::PresetOptions o;
    o.nodes = 2;
    o.nic = nic;
    const topo::Topology t = topo::make_preset(preset, o);
    Model m = Model::builtin(t.gpu_arch() == "ampere" ? "ampere" : "hopper");
    m.set("launch_latency_us." + std::string(to_string(proto)), 0, "test");
    // Without the proxy's post overhead, which paces the rank sending across nodes at every step
    // and on DGX A100's AMD host (2 us a post) would set the LL chain's time on its own.
    m.set("net_post_overhead_us", 0, "test");
    m.set("net_post_overhead_us.amd", 0, "test");
    CollectiveSpec spec;
    spec.nranks = 16;
    spec.count = 16;
    algo::AlgorithmOptions opt;
    opt.channels = 1;
    opt.protocol = proto;
    opt.chunk_bytes = 64;
    opt.ranks_per_node = 8;
    return simulate(algo::compile("ring", spec, opt), t, m, no_compute()).timeline.total_s();
  };
  const topo::NetTransport efa = topo::net_transport("efa100");
  REQUIRE(efa.message_latency_s > 0);
  REQUIRE(efa.flush_latency_s > 0);
  CHECK(chain("dgx-a100", "efa100", Protocol::simple) - chain("dgx-a100", "eth100", Protocol::simple) ==
        test::approx(4 * (efa.message_latency_s + efa.flush_latency_s)).epsilon(1e-3));
  CHECK(chain("dgx-a100", "efa100", Protocol::ll) - chain("dgx-a100", "eth100", Protocol::ll) ==
        test::approx(4 * efa.message_latency_s).epsilon(1e-3));
  const topo::NetTransport v2 = topo::net_transport("efa400");
  CHECK(chain("dgx-h100", "efa400", Protocol::simple) - chain("dgx-h100", "eth400", Protocol::simple) ==
        test::approx(4 * v2.message_latency_s).epsilon(1e-3));
}

TEST_CASE("calls run back to back: a network send's proxy post does not hold the next call's kernel") {
  // A GPU hands a network step to NCCL's proxy thread and its kernel goes on; the proxy's post
  // overhead (net_post_overhead_us) delays the message, not the GPU. A broadcast chain across two
  // nodes run back to back costs its launch and a hop per call whatever that overhead, as long as
  // it stays within the network hop's latency (the message arrives as late either way), and the
  // sending kernel does not wait for the next node's kernel to take the message of the next call.
  // Before, the node's last GPU paid both (8.65 us per call with the overhead, 9.35 without, 7.25
  // now; ABCI's two-node A100 broadcast: 8.7 us simulated per call at 8 B against 7.5 measured,
  // 7.3 on one node).
  topo::PresetOptions po;
  po.nodes = 2;
  const topo::Topology t = topo::make_preset("dgx-h100", po);
  auto [spec, opt] = tiny_ll_chain(16);
  opt.ranks_per_node = 8;
  Schedule chain = algo::compile("ring", spec, opt);
  EngineOptions b2b = no_compute();
  b2b.back_to_back = true;
  auto run = [&](double post_us, const EngineOptions& e) {
    Model m = Model::builtin("hopper");
    m.set("net_post_overhead_us", post_us, "test");
    return simulate(chain, t, m, e).timeline;
  };
  const Model hopper = Model::builtin("hopper");
  // The overheads compared: none, and one that holds the sender beyond its NVLink-class part but
  // not beyond the network hop's latency.
  const double post_us = 2.0;
  REQUIRE(post_us > hopper.get("hop_latency_us.nvlink.ll"));
  REQUIRE(post_us < hopper.get("hop_latency_us.net.ll"));
  const Timeline lean = run(0, b2b), posted = run(post_us, b2b);
  CHECK(posted.makespan_s == test::approx(lean.makespan_s).epsilon(1e-9));  // the first call
  CHECK(posted.total_s() == test::approx(lean.total_s()).epsilon(1e-9));     // every later one
  // A call alone arrives as late with either overhead too.
  CHECK(run(post_us, no_compute()).total_s() == test::approx(run(0, no_compute()).total_s()).epsilon(1e-9));

  // The root's own copy of its data after it hands the network the first hop keeps the GPU's lead.
  std::vector<int> ring = {0};
  for (int r = 8; r < 16; ++r) ring.push_back(r);
  for (int r = 1; r < 8; ++r) ring.push_back(r);
  opt.rings = {ring};
  chain = algo::compile("ring", spec, opt);
  REQUIRE(chain.streams.front().rank == 0);
  REQUIRE(chain.streams.front().steps.front().peer == 8);
  CHECK(run(post_us, b2b).total_s() == test::approx(run(0, b2b).total_s()).epsilon(1e-3));  // 1 ns apart; losing the lead costs the 2 us post
}

TEST_CASE("a step over a lane between two GPUs takes nvlink_direct_hop_saving_us less: through an NVSwitch, none") {
  Model m = pure_alpha_beta();
  const std::uint64_t bytes = 8;
  auto one_step = [&](const topo::Topology& t, double saving_us) {
    m.set("nvlink_direct_hop_saving_us", saving_us, "test");
    return simulate(point_to_point(2, {{0, 1}}, bytes), t, m, no_compute()).timeline.total_s();
  };
  const topo::Topology direct = topo::make_preset("v100-sxm2-4gpu"), switched = flat(2);
  CHECK(one_step(direct, 0) - one_step(direct, 0.3) == test::approx(0.3e-6).epsilon(1e-3));
  CHECK(one_step(switched, 0.3) == test::approx(one_step(switched, 0)));
  // Never below zero: a saving above the hop's latency leaves the transfer alone.
  CHECK(one_step(direct, 5) == test::approx(one_step(direct, 1) ).epsilon(1e-9));
}

TEST_CASE("LL blocks share the GPU's LL rate: n blocks move n / (1/channel + n/gpu) together") {
  Model m = pure_alpha_beta();
  m.set("channel_bandwidth_gbps.ll", 6, "test");
  const std::uint64_t bytes = 1 << 20;
  auto transfer_s = [&](double gpu_gbps) {
    m.set("gpu_bandwidth_gbps.ll", gpu_gbps, "test");
    return simulate(point_to_point(2, {{0, 1}}, bytes, Protocol::ll), flat(2), m, no_compute()).timeline.total_s() -
           kAlpha;
  };
  const double alone = transfer_s(0), shared = transfer_s(45);
  CHECK(shared / alone == test::approx(6 * (1.0 / 6 + 1.0 / 45)).epsilon(1e-3));  // one block
}

namespace {
// Rank 0 sends `bytes` to each of `flows` peers at once, one block per flow (point_to_point gives
// each its own channel): the time of the transfers, less the one step latency.
double fan_out_s(const Model& m, int flows, std::uint64_t bytes, Protocol protocol) {
  std::vector<std::pair<int, int>> pairs;
  for (int f = 1; f <= flows; ++f) pairs.push_back({0, f});
  return simulate(point_to_point(flows + 1, pairs, bytes, protocol), flat(flows + 1), m, no_compute()).timeline.total_s() -
         kAlpha;
}
}  // namespace

TEST_CASE("LL blocks together move at most gpu_max_bandwidth_gbps.ll: n blocks each at most 1/n of it") {
  Model m = pure_alpha_beta();
  m.set("channel_bandwidth_gbps.ll", 25, "test");
  m.set("gpu_max_bandwidth_gbps.ll", 100, "test");
  const std::uint64_t bytes = 1 << 20;
  auto transfer_s = [&](int flows) { return fan_out_s(m, flows, bytes, Protocol::ll); };
  const double wire = 2.0 * bytes;  // LL: 4 data bytes in every 8
  CHECK(transfer_s(1) == test::approx(wire / 25e9).epsilon(1e-3));  // one block: its own rate
  CHECK(transfer_s(4) == test::approx(wire / 25e9).epsilon(1e-3));  // 4 x 25 reaches the ceiling
  CHECK(transfer_s(8) == test::approx(wire / 12.5e9).epsilon(1e-3));  // 8 share 100
}

TEST_CASE("LL128 blocks together move at most gpu_max_bandwidth_gbps.ll128: fewer blocks keep their own rate") {
  Model m = pure_alpha_beta();
  m.set("channel_bandwidth_gbps.ll128", 10, "test");
  m.set("gpu_max_bandwidth_gbps.ll128", 60, "test");
  const std::uint64_t bytes = 15 << 16;  // whole 120-byte line payloads
  auto transfer_s = [&](int flows) { return fan_out_s(m, flows, bytes, Protocol::ll128); };
  const double wire = bytes * 128.0 / 120.0;  // LL128: 120 data bytes in every 128-byte line
  CHECK(transfer_s(1) == test::approx(wire / 10e9).epsilon(1e-3));  // one block: its own rate
  CHECK(transfer_s(6) == test::approx(wire / 10e9).epsilon(1e-3));  // 6 x 10 reaches the ceiling
  CHECK(transfer_s(12) == test::approx(wire / 5e9).epsilon(1e-3));  // 12 share 60
  m.set("gpu_max_bandwidth_gbps.ll128", 0, "test");                    // no ceiling
  CHECK(transfer_s(12) == test::approx(wire / 10e9).epsilon(1e-3));
}

TEST_CASE("a ring's Simple block sends at most collective_block_memory_gbps over the bytes it loads and stores per byte sent") {
  // A 2-rank ring all_gather: in place a block loads and stores each byte it sends (2) and each it
  // receives (2), 4 a byte sent; out of place it also copies its own block, whose send then costs
  // only the store: 5. The rate is the slope in size; the links (450 GB/s) would allow far more.
  // No step latency: a 2-rank ring's block sends its next chunk after receiving the last, so each
  // loop would add one to the slope.
  Model m = pure_alpha_beta();
  m.set("hop_latency_us.nvlink.simple", 0, "test");
  auto all_gather_slope = [&](bool in_place) {  // per byte each rank sends (half the buffer)
    return (simulate_pure("ring", CollectiveKind::all_gather, 2, 2 << 20, m, 64 << 10, in_place) -
            simulate_pure("ring", CollectiveKind::all_gather, 2, 1 << 20, m, 64 << 10, in_place)) /
           (4.0 * (1 << 20) / 2);
  };
  const double free_in_place = all_gather_slope(true);
  CHECK(free_in_place == test::approx(1 / kPortBandwidth).epsilon(1e-3));
  m.set("collective_block_memory_gbps", 20, "test");
  CHECK(all_gather_slope(true) == test::approx(4 / 20e9).epsilon(1e-3));
  CHECK(all_gather_slope(false) == test::approx(5 / 20e9).epsilon(1e-3));
  // A 3-rank all_reduce: send (2), pass on a partial sum (recvReduceSend: two loads, one store), keep
  // and send the final one (two loads, two stores), forward it (a load, two stores), receive the last
  // (2): 14 bytes over 4 sends, each rank sending 4/3 of the buffer.
  const double all_reduce_slope = (simulate_pure("ring", CollectiveKind::all_reduce, 3, 3 << 20, m, 64 << 10) -
                                   simulate_pure("ring", CollectiveKind::all_reduce, 3, 3 << 19, m, 64 << 10)) /
                                  (4.0 / 3 * 4 * (3 << 19));
  CHECK(all_reduce_slope == test::approx(3.5 / 20e9).epsilon(2e-3));
  // Not a point-to-point kernel's figure, nor the other way round.
  m.set("collective_block_memory_gbps", 0, "test");
  m.set("p2p_block_memory_gbps", 20, "test");
  CHECK(all_gather_slope(true) == test::approx(free_in_place).epsilon(1e-3));
}

TEST_CASE("a ring's copy of its own block costs its block's rate once, not HBM time besides, where the block's rate binds") {
  // NCCL copies a ring all_gather's own block in the pass that sends it (directCopySend): with the
  // block's loads and stores the limit, out of place is 5/4 of in place (the test above) however
  // slow the GPU's memory, as long as it is not what binds. Before, the copy also ran as a step of
  // its own on HBM: at 100 GB/s, 2 bytes a byte more.
  Model m = pure_alpha_beta();
  m.set("hop_latency_us.nvlink.simple", 0, "test");
  m.set("collective_block_memory_gbps", 20, "test");
  m.set("hbm_bandwidth_gbps", 100, "test");
  auto slope = [&](bool in_place) {  // with compute costs: EngineOptions{}
    auto run = [&](std::uint64_t count) {
      return simulate_pure("ring", CollectiveKind::all_gather, 2, count, m, 64 << 10, in_place, EngineOptions{});
    };
    return (run(2 << 20) - run(1 << 20)) / (4.0 * (1 << 20) / 2);
  };
  CHECK(slope(true) == test::approx(4 / 20e9).epsilon(1e-3));
  CHECK(slope(false) == test::approx(5 / 20e9).epsilon(1e-3));
  // Without the block's limit the copy is what HBM time gives it.
  m.set("collective_block_memory_gbps", 0, "test");
  CHECK(slope(false) > slope(true) + 1.5 / 100e9);
}

TEST_CASE("a collective's last Simple receive through a FIFO costs its last slice's copy at the block's rate, not from a rank of its own process") {
  // A 2-rank ring all_gather in place: each rank's one receive is its last. NCCL's ring all_gather
  // works in slices of two steps, a step a quarter of the chunk: with 4 MiB chunks, 2 MiB. The
  // block copies the slice out of its FIFO once it has all arrived, 2 bytes of loads and stores a
  // byte at p2p_block_memory_gbps; a part smaller than a slice is copied whole.
  Model m = pure_alpha_beta();
  m.set("hbm_bandwidth_gbps", 1e9, "test");  // no HBM time: only the block's rate
  m.set("p2p_block_memory_gbps", 20, "test");
  m.set("chunk_bytes.simple", 4 << 20, "test");
  auto time_s = [&](std::uint64_t count, int ranks_per_process) {
    EngineOptions e;
    e.ranks_per_process = ranks_per_process;
    return simulate_pure("ring", CollectiveKind::all_gather, 2, count, m, 4 << 20, true, e);
  };
  const double part = 4.0 * (1 << 18) / 2;  // bytes each rank receives of a 256 Ki-element call: 512 KiB
  CHECK(time_s(1 << 18, 1) - time_s(1 << 18, 2) == test::approx(2 * part / 20e9).epsilon(1e-6));
  // Only the last slice: past one slice of data the copy costs the same.
  CHECK(time_s(4 << 20, 1) - time_s(4 << 20, 2) == test::approx(2 * (2 << 20) / 20e9).epsilon(1e-6));
  // None without compute costs (no_compute), nor without a block rate.
  CHECK(simulate_pure("ring", CollectiveKind::all_gather, 2, 1 << 20, m, 4 << 20, true) ==
        test::approx(time_s(1 << 20, 2)).epsilon(1e-12));
  m.set("p2p_block_memory_gbps", 0, "test");
  CHECK(time_s(1 << 20, 1) == test::approx(time_s(1 << 20, 2)).epsilon(1e-12));
}

TEST_CASE("a tree's non-root Simple block splits collective_block_memory_gbps: 320 of its 512 threads reduce up, 192 broadcast down") {
  // One channel of a single-node tree all_reduce is a chain from the root, rank 0. A middle rank
  // receives, reduces and passes each byte up (3 bytes of loads and stores a byte sent) on 5/8 of
  // its block, and receives and forwards it down (3) on the other 3/8, which binds: 20 x 3/8 / 3 =
  // 2.5 GB/s. The root's block is whole (receive, reduce, keep, send: 4, so 5 GB/s); a leaf's up
  // stream sends from its input (2) on 5/8 of it (6.25 GB/s).
  Model m = pure_alpha_beta();
  auto slope = [&](int n) {  // per byte of the buffer
    return (simulate_pure("tree", CollectiveKind::all_reduce, n, 2 << 20, m, 64 << 10) -
            simulate_pure("tree", CollectiveKind::all_reduce, n, 1 << 20, m, 64 << 10)) /
           (4.0 * (1 << 20));
  };
  const double free_slope = slope(4);
  CHECK(free_slope < 1 / 50e9);  // the links alone
  m.set("collective_block_memory_gbps", 20, "test");
  CHECK(slope(4) == test::approx(1 / 2.5e9).epsilon(2e-3));
  CHECK(slope(2) == test::approx(1 / 5e9).epsilon(2e-3));  // root and leaf only: the root binds
}

TEST_CASE("an LL send to another node moves at most channel_bandwidth_gbps.ll.net per block: over NVLink or PCIe, no such cap") {
  Model m = pure_alpha_beta();
  m.set("channel_bandwidth_gbps.ll", 10, "test");
  m.set("channel_bandwidth_gbps.ll.net", 5, "test");
  topo::PresetOptions two_nodes;
  two_nodes.nodes = 2;
  const topo::Topology dgx = topo::make_preset("dgx-h100", two_nodes), pcie = topo::make_preset("pcie-gen4-8gpu");
  // The rate is the slope in size: rank 0 to rank 1 crosses NVLink (dgx) or PCIe (pcie), rank 0
  // to rank 8 the network.
  auto slope_s_per_byte = [&](const topo::Topology& t, int dst) {
    auto one = [&](std::uint64_t bytes) {
      const Schedule s = point_to_point(static_cast<int>(t.gpu_count()), {{0, dst}}, bytes, Protocol::ll);
      return simulate(s, t, m, no_compute()).timeline.total_s();
    };
    return (one(2 << 20) - one(1 << 20)) / (1 << 20);
  };
  CHECK(slope_s_per_byte(dgx, 1) == test::approx(2 / 10e9).epsilon(1e-3));
  CHECK(slope_s_per_byte(pcie, 1) == test::approx(2 / 10e9).epsilon(1e-3));
  CHECK(slope_s_per_byte(dgx, 8) == test::approx(2 / 5e9).epsilon(1e-3));
  // Without the network figure the block's own rate holds across nodes too.
  m.set("channel_bandwidth_gbps.ll.net", 0, "test");
  CHECK(slope_s_per_byte(dgx, 8) == test::approx(2 / 10e9).epsilon(1e-3));
}

TEST_CASE("an NVLS-tree call's switch traffic carries nvls_efficiency.tree's wire overhead, an NVLS call nvls_efficiency's") {
  Model m = Model::builtin("hopper");
  m.set("nvls_efficiency", 0.5, "test");
  m.set("nvls_efficiency.tree", 0.25, "test");
  auto [spec, o] = small_call(Protocol::simple);
  o.nvls = true;
  spec.nranks = 16;
  spec.count = 16 * 4096;
  topo::PresetOptions two_nodes;
  two_nodes.nodes = 2;
  const topo::Topology t = topo::make_preset("dgx-h100", two_nodes);
  o.ranks_per_node = 8;
  const Schedule tree = algo::compile("nvls_tree", spec, o);
  // The first send of rank 0 feeds its node's switch (endpoint 16): data x 1/efficiency on the wire.
  const Step* to_switch = nullptr;
  for (const auto& stream : tree.streams)
    for (const auto& step : stream.steps)
      if (!to_switch && stream.rank == 0 && step.kind == StepKind::send && tree.is_switch(step.peer)) to_switch = &step;
  REQUIRE(to_switch != nullptr);
  const double data = static_cast<double>(to_switch->count() * element_bytes(spec.type));
  CHECK(static_cast<double>(PlatformPlan::build(tree, t, m).send_wire_bytes(tree, 0, *to_switch)) ==
        test::approx(data * wire_bytes_per_data_byte(Protocol::simple) / 0.25).epsilon(1e-6));
  // The same steps under another algorithm's name pay the single-node figure.
  Schedule renamed = tree;
  renamed.algorithm = "nvls";
  CHECK(static_cast<double>(PlatformPlan::build(renamed, t, m).send_wire_bytes(renamed, 0, *to_switch)) ==
        test::approx(data * wire_bytes_per_data_byte(Protocol::simple) / 0.5).epsilon(1e-6));
}

TEST_CASE("point-to-point operations one kernel issues together pay one latency, and a proxy posts network ones in turn") {
  // Rank 0 sends a different block to each of `peers` ranks, the sends marked as issued together
  // (Step::overlap, as a direct alltoall writes them): on one node their latencies overlap, where
  // unmarked they are paid one after another; to another node NCCL's one proxy thread per GPU
  // posts them one after the other, so the k-th arrives k network posts later.
  auto fan_out = [](const topo::Topology& t, const Model& m, const std::vector<int>& peers, bool together) {
    Schedule s;
    s.spec.nranks = static_cast<int>(t.gpu_count());
    s.spec.count = 64 * peers.size();
    s.spec.type = DataType::uint8;
    s.algorithm = "test";
    Stream tx{0, 0, {}};
    for (std::size_t k = 0; k < peers.size(); ++k) {
      Step send;
      send.kind = StepKind::send;
      send.peer = peers[k];
      send.src = {BufferId::input, 64 * k, 64};
      send.overlap = together && k + 1 < peers.size();
      tx.steps.push_back(send);
      Stream rx{peers[k], 0, {}};
      Step recv;
      recv.kind = StepKind::recv;
      recv.peer = 0;
      recv.dst = {BufferId::output, 0, 64};
      rx.steps.push_back(recv);
      s.streams.push_back(rx);
    }
    s.streams.push_back(tx);
    s.validate();
    return simulate(s, t, m, no_compute()).timeline.total_s();
  };
  const Model alpha = pure_alpha_beta();
  CHECK(fan_out(flat(4), alpha, {1, 2, 3}, true) < 1.01 * kAlpha);
  CHECK(fan_out(flat(4), alpha, {1, 2, 3}, false) >= 3 * kAlpha);

  topo::PresetOptions o;
  o.nodes = 2;
  const topo::Topology two = topo::make_preset("dgx-h100", o);
  Model m = Model::builtin("hopper");
  m.set("launch_latency_us.simple", 0, "test");
  Schedule probe = point_to_point(16, {{0, 8}}, 64);
  const double post = PlatformPlan::build(probe, two, m).net_post_overhead_s(Protocol::simple);
  REQUIRE(post > 0);
  // Four ranks of the other node: three posts wait for the one before them.
  CHECK(fan_out(two, m, {8, 9, 10, 11}, true) - fan_out(two, m, {8}, true) == test::approx(3 * post).epsilon(0.02));
  // One peer on this node among them takes no post.
  CHECK(fan_out(two, m, {1, 8, 9, 10, 11}, true) == test::approx(fan_out(two, m, {8, 9, 10, 11}, true)).epsilon(0.02));
}
