#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>

#include "sim/error.hpp"
#include "sim/nccl_tuning.hpp"

using namespace ccsim;
using namespace ccsim::nccl;

namespace {

constexpr Bytes KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

Graph graph(int channels, double intra, double inter, PathType type = PathType::nvlink) {
  Graph g;
  g.channels = channels;
  g.bw_intra = intra;
  g.bw_inter = inter;
  g.type_intra = type;
  return g;
}

// 8xH100 in one node. Ring and tree: 16 channels of 370.8/16 GB/s, so their busBw is the NVL[370.8]
// that NCCL logs for an H100 (reference/nccl-model.md §3.1, §3.7). NVLS: 16 channels (§1.5) at the
// SM90 ladder's 30 GB/s, so the model's NVLS algBw (274 GB/s) is the ~275 measured (§1.5).
System h100_node(bool nvls) {
  System s;
  s.arch = Arch::hopper;
  s.nodes = 1;
  s.ranks = 8;
  s.nvls = nvls;
  s.ring = s.tree = graph(16, 370.8 / 16, 370.8 / 16);
  s.nvls_graph = graph(16, 30, 30);
  return s;
}

// 2 x 8xH100 with 8 NDR NICs (50 GB/s) per node. Ring and tree: 16 channels at the SM90 inter
// ladder's 24 GB/s (two channels per NIC). NVLS: 16 channels, 30 GB/s inside the node, 24 across.
System h100_two_nodes(bool nvls) {
  System s;
  s.arch = Arch::hopper;
  s.nodes = 2;
  s.ranks = 16;
  s.nvls = nvls;
  s.ring = s.tree = graph(16, 24, 24);
  s.nvls_graph = graph(16, 30, 24);
  return s;
}

const Estimate& cell(const std::vector<Estimate>& table, Algo a, Protocol p) {
  for (const auto& e : table)
    if (e.algo == a && e.proto == p) return e;
  FAIL("no cell");
  return table.front();
}

Estimate at(const System& s, Func f, Bytes n, Algo a, Protocol p) { return cell(cost_table(s, f, n), a, p); }

}  // namespace

TEST_CASE("NCCL tuning: names and architecture classes") {
  CHECK(to_string(Algo::tree) == "tree");
  CHECK(to_string(Algo::ring) == "ring");
  CHECK(to_string(Algo::collnet_direct) == "collnet_direct");
  CHECK(to_string(Algo::collnet_chain) == "collnet_chain");
  CHECK(to_string(Algo::nvls) == "nvls");
  CHECK(to_string(Algo::nvls_tree) == "nvls_tree");
  CHECK(to_string(Algo::pat) == "pat");
  CHECK(to_string(Func::all_reduce) == "all_reduce");
  CHECK(arch_from_sm(70) == Arch::volta);
  CHECK(arch_from_sm(79) == Arch::volta);
  CHECK(arch_from_sm(80) == Arch::ampere);
  CHECK(arch_from_sm(89) == Arch::ampere);
  CHECK(arch_from_sm(90) == Arch::hopper);
  CHECK(arch_from_sm(100) == Arch::blackwell);
  CHECK(arch_from_sm(120) == Arch::blackwell);
}

TEST_CASE("NCCL tuning: the cost table is in NCCL's index order") {
  const auto table = cost_table(h100_node(true), Func::all_reduce, 1 * MiB);
  REQUIRE(table.size() == 21);
  const Protocol order[] = {Protocol::ll, Protocol::ll128, Protocol::simple};
  for (std::size_t i = 0; i < table.size(); ++i) {
    CHECK(table[i].algo == all_algos()[i / 3]);
    CHECK(table[i].proto == order[i % 3]);
  }
}

TEST_CASE("NCCL tuning: one-node 8xH100 AllReduce latencies of §3.7") {
  const auto t = cost_table(h100_node(true), Func::all_reduce, 8);
  CHECK(cell(t, Algo::ring, Protocol::ll).latency_us == test::approx(15.0));
  CHECK(cell(t, Algo::ring, Protocol::ll128).latency_us == test::approx(40.6));
  CHECK(cell(t, Algo::ring, Protocol::simple).latency_us == test::approx(56.0));
  CHECK(cell(t, Algo::tree, Protocol::ll).latency_us == test::approx(15.2));
  CHECK(cell(t, Algo::tree, Protocol::ll128).latency_us == test::approx(31.5));
  CHECK(cell(t, Algo::tree, Protocol::simple).latency_us == test::approx(64.4));
  CHECK(cell(t, Algo::nvls, Protocol::simple).latency_us == test::approx(25.0));
}

TEST_CASE("NCCL tuning: two-node Ring/Simple latency and the ring plateau of §3.6") {
  const System s = h100_two_nodes(false);
  // 8.4 + 28 x 3.4 + 2 x 14. The plateau starts at nBytes / (16 channels x 16 ranks) >= 64.
  CHECK(at(s, Func::all_reduce, 8, Algo::ring, Protocol::simple).latency_us == test::approx(131.6));
  CHECK(at(s, Func::all_reduce, 16 * KiB - 1, Algo::ring, Protocol::simple).latency_us == test::approx(131.6));
  CHECK(at(s, Func::all_reduce, 16 * KiB, Algo::ring, Protocol::simple).latency_us == test::approx(184.24));
  CHECK(at(s, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::simple).latency_us == test::approx(184.24));
  // Only Ring/Simple AllReduce has the plateau.
  CHECK(at(s, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll128).latency_us == test::approx(75.2));
  CHECK(at(s, Func::all_gather, 1 * GiB, Algo::ring, Protocol::simple).latency_us ==
        test::approx(8.4 + 14 * 3.4 + 1 * 14));
  // Before Ampere the plateau costs x1.9.
  System volta = s;
  volta.arch = Arch::volta;
  CHECK(at(volta, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::simple).latency_us == test::approx(131.6 * 1.9));
  // One node has no plateau.
  CHECK(at(h100_node(false), Func::all_reduce, 1 * GiB, Algo::ring, Protocol::simple).latency_us ==
        test::approx(56.0));
}

TEST_CASE("NCCL tuning: multi-node latency terms of §3.5") {
  const System s = h100_two_nodes(true);
  const auto t = cost_table(s, Func::all_reduce, 8);
  // Net overhead (1 us, x3 for Simple) lifts LL's 0.6 us NVLink hop to 1 us.
  CHECK(cell(t, Algo::ring, Protocol::ll).latency_us == test::approx(6.6 + 28 * 1.0 + 2 * 2.7));
  CHECK(cell(t, Algo::tree, Protocol::ll).latency_us == test::approx(6.8 + 2 * (7 * 0.6 + 1 * 5.0)));
  CHECK(cell(t, Algo::tree, Protocol::simple).latency_us == test::approx(8.4 + 2 * (7 * 4.0 + 14)));
  CHECK(cell(t, Algo::nvls_tree, Protocol::simple).latency_us == test::approx(25 + 2 * 20.9));
  // AMD hosts post at 2 us (x3 = 6 us for Simple, above the 3.4 us NVLink hop).
  System amd = s;
  amd.amd_cpu = true;
  CHECK(at(amd, Func::all_reduce, 8, Algo::ring, Protocol::simple).latency_us == test::approx(8.4 + 28 * 6.0 + 2 * 14));
  // The graph's latencyInter counts twice for Simple (the flush), once otherwise.
  System lat = s;
  lat.ring.latency_inter_us = 1.5;
  CHECK(at(lat, Func::all_reduce, 8, Algo::ring, Protocol::simple).latency_us ==
        test::approx(8.4 + 28 * 3.4 + 2 * (14 + 3.0)));
  CHECK(at(lat, Func::all_reduce, 8, Algo::ring, Protocol::ll).latency_us ==
        test::approx(6.6 + 28 * 1.0 + 2 * (2.7 + 1.5)));
}

TEST_CASE("NCCL tuning: broadcast and reduce latencies") {
  System s = h100_node(false);
  CHECK(at(s, Func::broadcast, 8, Algo::ring, Protocol::simple).latency_us == test::approx(8.4 + 3.4));
  s.ring.same_channels = false;  // nsteps = nRanks hops, Simple at Tree's per-hop latency
  CHECK(at(s, Func::reduce, 8, Algo::ring, Protocol::simple).latency_us == test::approx(8.4 + 8 * 4.0));
  CHECK(at(s, Func::reduce, 8, Algo::ring, Protocol::ll).latency_us == test::approx(6.6 + 8 * 0.6));
  s.ring.type_intra = PathType::pci;
  CHECK(at(s, Func::reduce, 8, Algo::ring, Protocol::ll).latency_us == test::approx(6.6 + 8 * 1.0));
}

TEST_CASE("NCCL tuning: bandwidth side of §3.7") {
  const System s = h100_node(false);
  const auto t = cost_table(s, Func::all_reduce, 1 * GiB);
  CHECK(cell(t, Algo::ring, Protocol::simple).bus_bw_gbps == test::approx(16 * 370.8 / 16));
  CHECK(cell(t, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(141));  // Hopper one-node llMaxBw
  CHECK(cell(t, Algo::ring, Protocol::ll128).bus_bw_gbps == test::approx(0.92 * 370.8));
  // A faster graph meets LL128's per-channel cap instead.
  System fast = s;
  fast.ring = graph(12, 50, 50);
  CHECK(at(fast, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll128).bus_bw_gbps == test::approx(12 * 36.7));
  CHECK(at(fast, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(141));
  // Bus to algorithm bandwidth: x nRanks / 2(nRanks-1) for a ring AllReduce, and the time formula.
  const Estimate& simple = cell(t, Algo::ring, Protocol::simple);
  CHECK(simple.alg_bw_gbps == test::approx(370.8 * 8 / 14));
  CHECK(simple.time_us == test::approx(56.0 + static_cast<double>(GiB) / (1000 * 370.8 * 8 / 14)));
  // Tree: min(0.92 busBw, nCh x perChMaxTree), then x1/3.8 for LL and x7/9 on one node for LL128,
  // then x0.5 to the algorithm bandwidth.
  CHECK(cell(t, Algo::tree, Protocol::simple).bus_bw_gbps == test::approx(0.92 * 370.8));
  CHECK(cell(t, Algo::tree, Protocol::ll).bus_bw_gbps == test::approx(0.92 * 370.8 / 3.8));
  CHECK(cell(t, Algo::tree, Protocol::ll128).bus_bw_gbps == test::approx(0.92 * 370.8 * 7 / 9));
  CHECK(cell(t, Algo::tree, Protocol::simple).alg_bw_gbps == test::approx(0.92 * 370.8 * 0.5));
  System pattern = s;
  pattern.tree.tree_pattern = true;
  CHECK(at(pattern, Func::all_reduce, 1 * GiB, Algo::tree, Protocol::simple).bus_bw_gbps ==
        test::approx(0.92 * 370.8 * 0.85));
}

TEST_CASE("NCCL tuning: node columns of the caps") {
  System s = h100_two_nodes(false);
  // Across nodes llMaxBw reads row 0 (Intel) or row 1 (AMD), whatever the GPU.
  CHECK(at(s, Func::all_reduce, 1 * MiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(39));
  s.amd_cpu = true;
  CHECK(at(s, Func::all_reduce, 1 * MiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(22.5));
  // Three nodes read the third column, like four.
  for (int nodes : {3, 4}) {
    System m = h100_two_nodes(false);
    m.nodes = nodes;
    m.ranks = 8 * nodes;
    CHECK(at(m, Func::all_reduce, 1 * MiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(20.4));
    // Beyond 2 nodes the base bandwidth is bwInter; the tree cap is 36 per channel.
    m.tree = graph(16, 40, 45);
    CHECK(at(m, Func::all_reduce, 1 * GiB, Algo::tree, Protocol::simple).bus_bw_gbps == test::approx(16 * 36.0));
    CHECK(at(m, Func::all_reduce, 1 * GiB, Algo::tree, Protocol::ll128).bus_bw_gbps == test::approx(16 * 29.0));
  }
}

TEST_CASE("NCCL tuning: NVLS and NVLSTree bandwidth") {
  const System one = h100_node(true);
  // AllReduce: min(30 x 0.85 x 15/16 x 2, 30) per channel; x nRanks/nsteps to the algorithm bw.
  const Estimate ar = at(one, Func::all_reduce, 1 * GiB, Algo::nvls, Protocol::simple);
  CHECK(ar.bus_bw_gbps == test::approx(480));
  CHECK(ar.alg_bw_gbps == test::approx(480.0 * 8 / 14));
  // AllGather: x (ppn-1)/ppn instead of x2, and no conversion (not a ring).
  const Estimate ag = at(one, Func::all_gather, 1 * GiB, Algo::nvls, Protocol::simple);
  CHECK(ag.bus_bw_gbps == test::approx(16 * 30 * 0.85 * 15 / 16 * 7 / 8));
  CHECK(ag.alg_bw_gbps == test::approx(ag.bus_bw_gbps));
  // One channel leaves NVLS no bandwidth at all.
  System single = one;
  single.nvls_graph.channels = 1;
  CHECK(at(single, Func::all_reduce, 1 * GiB, Algo::nvls, Protocol::simple).time_us < 0);
  // NVLSTree on 2 nodes: the inter-node side doubles, the per-channel cap is 57.7.
  const Estimate nt = at(h100_two_nodes(true), Func::all_reduce, 1 * GiB, Algo::nvls_tree, Protocol::simple);
  CHECK(nt.bus_bw_gbps == test::approx(16 * 30 * 0.85 * 15 / 16 * 2));
  System capped = h100_two_nodes(true);
  capped.nvls_graph = graph(16, 60, 40);
  CHECK(at(capped, Func::all_reduce, 1 * GiB, Algo::nvls_tree, Protocol::simple).bus_bw_gbps ==
        test::approx(16 * 57.7));
  // Before Hopper the NVLS efficiency is 0.
  System ampere = one;
  ampere.arch = Arch::ampere;
  CHECK(at(ampere, Func::all_reduce, 1 * GiB, Algo::nvls, Protocol::simple).time_us < 0);
}

TEST_CASE("NCCL tuning: tree correction factor below 512 MiB") {
  const System s = h100_node(false);
  const double full = 0.92 * 370.8 * 0.5;
  // 1 MiB = 64 B << 14: the Simple row's entry 14 is 0.5.
  CHECK(at(s, Func::all_reduce, 1 * MiB, Algo::tree, Protocol::simple).alg_bw_gbps == test::approx(full * 0.5));
  CHECK(at(s, Func::all_reduce, 1 * MiB + 5, Algo::tree, Protocol::simple).alg_bw_gbps == test::approx(full * 0.5));
  CHECK(at(s, Func::all_reduce, 64, Algo::tree, Protocol::simple).alg_bw_gbps == test::approx(full * 0.9));
  CHECK(at(s, Func::all_reduce, 256 * MiB, Algo::tree, Protocol::simple).alg_bw_gbps == test::approx(full * 0.9));
  CHECK(at(s, Func::all_reduce, 512 * MiB, Algo::tree, Protocol::simple).alg_bw_gbps == test::approx(full));
  CHECK(at(s, Func::all_reduce, 32, Algo::tree, Protocol::simple).alg_bw_gbps == test::approx(full));
  // 64 KiB = 64 B << 10: LL 0.6, LL128 0.6.
  CHECK(at(s, Func::all_reduce, 64 * KiB, Algo::tree, Protocol::ll).alg_bw_gbps ==
        test::approx(0.92 * 370.8 / 3.8 * 0.5 * 0.6));
  // Rings are never corrected.
  CHECK(at(s, Func::all_reduce, 1 * MiB, Algo::ring, Protocol::simple).alg_bw_gbps == test::approx(370.8 * 8 / 14));
}

TEST_CASE("NCCL tuning: choices on 8xH100") {
  const System s = h100_node(true);
  // The smallest latency wins at 8 B: Ring/LL (15.0) ahead of Tree/LL (15.2).
  const Estimate tiny = choose(s, Func::all_reduce, 8);
  CHECK(tiny.algo == Algo::ring);
  CHECK(tiny.proto == Protocol::ll);
  CHECK(tiny.time_us == test::approx(15.0 + 8 / (1000 * 141.0 * 8 / 14)));
  for (Bytes n : {16 * MiB, 256 * MiB, 1 * GiB, 8 * GiB}) {
    const Estimate big = choose(s, Func::all_reduce, n);
    CHECK(big.algo == Algo::nvls);
    CHECK(big.proto == Protocol::simple);
  }
  // Without NVLS, large messages take Ring/Simple, medium ones LL128.
  CHECK(choose(h100_node(false), Func::all_reduce, 1 * GiB).algo == Algo::ring);
  CHECK(choose(h100_node(false), Func::all_reduce, 1 * GiB).proto == Protocol::simple);
  CHECK(choose(h100_node(false), Func::all_reduce, 16 * MiB).proto == Protocol::ll128);
}

TEST_CASE("NCCL tuning: ties keep the earlier index") {
  // Two nodes of one Ampere GPU with CollNet: with one channel and ppn 1, CollNetDirect and
  // CollNetChain compute identical figures. Rings and trees are made slow enough to lose.
  System s;
  s.arch = Arch::ampere;
  s.nodes = 2;
  s.ranks = 2;
  s.collnet = true;
  s.ring = s.tree = graph(1, 1, 1);
  s.collnet_direct = s.collnet_chain = graph(1, 20, 20);
  const auto t = cost_table(s, Func::all_reduce, 1 * GiB);
  REQUIRE(cell(t, Algo::collnet_direct, Protocol::simple).time_us ==
          cell(t, Algo::collnet_chain, Protocol::simple).time_us);
  CHECK(choose(s, Func::all_reduce, 1 * GiB).algo == Algo::collnet_direct);
  s.collnet_chain.bw_intra = 20.001;
  CHECK(choose(s, Func::all_reduce, 1 * GiB).algo == Algo::collnet_chain);
}

TEST_CASE("NCCL tuning: which algorithm serves which collective (§1.1)") {
  // Everything switched on: broadcast and reduce still run only on rings.
  System all = h100_two_nodes(true);
  all.collnet = all.collnet_ag_rs = all.pat_allowed = true;
  all.collnet_direct = all.collnet_chain = graph(8, 24, 24);
  for (Func f : {Func::broadcast, Func::reduce})
    for (const auto& e : cost_table(all, f, 1 * MiB)) CHECK((e.time_us >= 0) == (e.algo == Algo::ring));
  CHECK(choose(all, Func::broadcast, 1 * GiB).algo == Algo::ring);

  // Unavailable pairs have time < 0 and no figures.
  const auto one = cost_table(h100_node(false), Func::all_reduce, 1 * MiB);
  const Estimate& nvls_off = cell(one, Algo::nvls, Protocol::simple);
  CHECK(nvls_off.time_us < 0);
  CHECK(nvls_off.bus_bw_gbps == 0);
  CHECK(nvls_off.latency_us == 0);
  const auto on = cost_table(h100_node(true), Func::all_reduce, 1 * MiB);
  CHECK(cell(on, Algo::nvls, Protocol::simple).time_us > 0);
  CHECK(cell(on, Algo::nvls, Protocol::ll).time_us < 0);      // NVLS is Simple only
  CHECK(cell(on, Algo::nvls, Protocol::ll128).time_us < 0);
  CHECK(cell(on, Algo::nvls_tree, Protocol::simple).time_us < 0);  // NVLSTree needs nNodes > 1
  CHECK(cell(on, Algo::pat, Protocol::simple).time_us < 0);
  CHECK(cell(on, Algo::collnet_direct, Protocol::simple).time_us < 0);

  // Tree serves AllReduce only; NVLS also AG/RS; PAT only AG/RS and when allowed.
  const auto ag = cost_table(h100_node(true), Func::all_gather, 1 * MiB);
  CHECK(cell(ag, Algo::tree, Protocol::simple).time_us < 0);
  CHECK(cell(ag, Algo::nvls, Protocol::simple).time_us > 0);
  CHECK(cell(ag, Algo::ring, Protocol::ll).time_us > 0);

  // Across nodes NVLS needs CollNet; NVLSTree does not.
  const auto multi = cost_table(h100_two_nodes(true), Func::all_reduce, 1 * MiB);
  CHECK(cell(multi, Algo::nvls, Protocol::simple).time_us < 0);
  CHECK(cell(multi, Algo::nvls_tree, Protocol::simple).time_us > 0);
  System sharp = h100_two_nodes(true);
  sharp.collnet = true;
  sharp.collnet_direct = sharp.collnet_chain = graph(8, 24, 24);
  const auto with_sharp = cost_table(sharp, Func::all_reduce, 1 * MiB);
  CHECK(cell(with_sharp, Algo::nvls, Protocol::simple).time_us > 0);
  CHECK(cell(with_sharp, Algo::collnet_direct, Protocol::simple).time_us > 0);
  CHECK(cell(with_sharp, Algo::collnet_chain, Protocol::simple).time_us > 0);
  CHECK(cell(with_sharp, Algo::collnet_chain, Protocol::ll).time_us < 0);
  // CollNet AG/RS only with a plugin that has them; CollNetChain never.
  CHECK(at(sharp, Func::reduce_scatter, 1 * MiB, Algo::collnet_direct, Protocol::simple).time_us < 0);
  sharp.collnet_ag_rs = true;
  CHECK(at(sharp, Func::reduce_scatter, 1 * MiB, Algo::collnet_direct, Protocol::simple).time_us > 0);
  CHECK(at(sharp, Func::reduce_scatter, 1 * MiB, Algo::collnet_chain, Protocol::simple).time_us < 0);
  // More than 8 local GPUs: no CollNet.
  System wide = sharp;
  wide.ranks = 32;
  CHECK(at(wide, Func::all_reduce, 1 * MiB, Algo::collnet_direct, Protocol::simple).time_us < 0);

  // LL128 off: only LL and Simple remain.
  System no128 = h100_node(false);
  no128.ll128_enabled = false;
  for (const auto& e : cost_table(no128, Func::all_reduce, 1 * MiB))
    if (e.proto == Protocol::ll128) CHECK(e.time_us < 0);
  CHECK(at(no128, Func::all_reduce, 1 * MiB, Algo::ring, Protocol::ll).time_us > 0);

  // No graph, no algorithm.
  System no_tree = h100_node(false);
  no_tree.tree.channels = 0;
  CHECK(at(no_tree, Func::all_reduce, 1 * MiB, Algo::tree, Protocol::ll).time_us < 0);
  System nothing = h100_node(false);
  nothing.ring.channels = 0;
  CHECK_THROWS_AS(choose(nothing, Func::broadcast, 1 * MiB), Error);
}

TEST_CASE("NCCL tuning: NVLS all_gather and reduce_scatter span at most NCCL_MAX_NVLS_ARITY GPUs of a node") {
  // One NVL72 rack (72 GPUs in one NVLink domain): NCCL runs NVLS for all_reduce there, but not
  // for all_gather or reduce_scatter, whose multicast group would exceed 32 local ranks.
  System rack = h100_node(true);
  rack.arch = Arch::blackwell;
  rack.ranks = 72;
  for (Func f : {Func::all_gather, Func::reduce_scatter}) {
    CHECK(at(rack, f, 1 * GiB, Algo::nvls, Protocol::simple).time_us < 0);
    CHECK(choose(rack, f, 1 * GiB).algo == Algo::ring);
  }
  CHECK(at(rack, Func::all_reduce, 1 * GiB, Algo::nvls, Protocol::simple).time_us > 0);
  // 32 local ranks are allowed from 2.20 on; before, the limit was 8 (an 8-GPU HGX board fits both).
  System thirty_two = rack;
  thirty_two.ranks = 32;
  CHECK(at(thirty_two, Func::all_gather, 1 * GiB, Algo::nvls, Protocol::simple).time_us > 0);
  thirty_two.release = 19;
  CHECK(at(thirty_two, Func::all_gather, 1 * GiB, Algo::nvls, Protocol::simple).time_us < 0);
  System eight = h100_node(true);
  eight.release = 19;
  CHECK(at(eight, Func::all_gather, 1 * GiB, Algo::nvls, Protocol::simple).time_us > 0);
}

TEST_CASE("NCCL tuning: PAT and CollNet formulas") {
  // Four nodes of one GPU: PAT uses the tree graph, busBw x0.75, no AG/RS conversion.
  System s;
  s.arch = Arch::hopper;
  s.nodes = 4;
  s.ranks = 4;
  s.pat_allowed = true;
  s.ring = s.tree = graph(4, 40, 40, PathType::net);
  const Estimate pat = at(s, Func::all_gather, 1 * MiB, Algo::pat, Protocol::simple);
  CHECK(pat.bus_bw_gbps == test::approx(4 * 40 * 0.75));
  CHECK(pat.alg_bw_gbps == test::approx(4 * 40 * 0.75));
  // 8 + log2(4) x 14 / 3.5 + 2.8 x 4; one GPU per node takes Tree's NET row.
  CHECK(pat.latency_us == test::approx(8 + 2 * 14 / 3.5 + 2.8 * 4));
  CHECK(at(s, Func::all_reduce, 1 * MiB, Algo::pat, Protocol::simple).time_us < 0);
  // Ring AG with ppn 1: 3 network steps at Tree's NET Simple latency; intra hops do not exist.
  CHECK(at(s, Func::all_gather, 1 * MiB, Algo::ring, Protocol::simple).latency_us == test::approx(8.4 + 3 * 14));

  // CollNetDirect AllReduce: 8 GPUs per node over 4 channels, f = 2 - 0.5, x0.85 on Hopper, x0.5.
  System c = h100_two_nodes(false);
  c.collnet = true;
  c.collnet_direct = graph(4, 40, 20);
  c.collnet_chain = graph(4, 40, 20);
  const Estimate direct = at(c, Func::all_reduce, 1 * GiB, Algo::collnet_direct, Protocol::simple);
  CHECK(direct.bus_bw_gbps == test::approx(4 * 40 / 1.5 * 0.85));
  CHECK(direct.alg_bw_gbps == test::approx(4 * 40 / 1.5 * 0.85 * 0.5));
  CHECK(direct.latency_us == test::approx(2 * (3.7 + 7 * 0.4) + 31));
  const Estimate chain = at(c, Func::all_reduce, 1 * GiB, Algo::collnet_chain, Protocol::simple);
  CHECK(chain.bus_bw_gbps == test::approx(4 * 40));
  CHECK(chain.latency_us == test::approx(2 * 7 * 2.8 + 30));
  // CollNetDirect AG/RS: ppn x min(bwIntra, 0.9 bwInter), no conversion.
  c.collnet_ag_rs = true;
  const Estimate rs = at(c, Func::reduce_scatter, 1 * GiB, Algo::collnet_direct, Protocol::simple);
  CHECK(rs.bus_bw_gbps == test::approx(8 * 18.0));
  CHECK(rs.alg_bw_gbps == test::approx(8 * 18.0));
}

TEST_CASE("NCCL tuning: fp8, one rank and bad systems") {
  System big = h100_two_nodes(false);
  const double plain = at(big, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::simple).time_us;
  CHECK(cell(cost_table(big, Func::all_reduce, 1 * GiB, true), Algo::ring, Protocol::simple).time_us ==
        test::approx(plain * 1024));
  CHECK(choose(big, Func::all_reduce, 1 * GiB, true).algo == Algo::tree);
  // Eight ranks are spared.
  const System node = h100_node(false);
  CHECK(cell(cost_table(node, Func::all_reduce, 1 * GiB, true), Algo::ring, Protocol::simple).time_us ==
        test::approx(at(node, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::simple).time_us));

  System one = h100_node(true);
  one.ranks = 1;
  const Estimate e = choose(one, Func::all_reduce, 1 * GiB);
  CHECK(e.algo == Algo::ring);
  CHECK(e.proto == Protocol::simple);
  CHECK(e.time_us == 0);

  System bad = h100_node(false);
  bad.ranks = 12;
  bad.nodes = 8;
  CHECK_THROWS_AS(cost_table(bad, Func::all_reduce, 8), Error);
  bad.nodes = 0;
  CHECK_THROWS_AS(cost_table(bad, Func::all_reduce, 8), Error);
}

TEST_CASE("NCCL tuning: a release number from a version") {
  CHECK(release_of("2.26.2") == 26);
  CHECK(release_of("2.30") == 30);
  CHECK(release_of("2.8.4") == 8);
  CHECK(release_of("") == 0);
  CHECK(release_of("3.0.1") == 0);
  CHECK(release_of("2.x") == 0);
}

TEST_CASE("NCCL tuning: releases before 2.28 rate NVLS by the graph alone") {
  System one = h100_node(true);
  one.release = 26;
  // min(bwIntra, bwInter) per channel, no efficiency, and 5/6 of it as the algorithm bandwidth.
  const Estimate ar = at(one, Func::all_reduce, 1 * GiB, Algo::nvls, Protocol::simple);
  CHECK(ar.bus_bw_gbps == test::approx(16 * 30));
  CHECK(ar.alg_bw_gbps == test::approx(16 * 30 * 5.0 / 6));
  // AG/RS: 2.23-2.26 take the same per-channel figure unconverted; 2.27 scales by (ppn-1)/ppn.
  CHECK(at(one, Func::all_gather, 1 * GiB, Algo::nvls, Protocol::simple).alg_bw_gbps == test::approx(16 * 30));
  one.release = 27;
  CHECK(at(one, Func::all_gather, 1 * GiB, Algo::nvls, Protocol::simple).alg_bw_gbps == test::approx(16 * 30 * 7.0 / 8));
  // 2.18-2.22 converted NVLS AG/RS at 5/6 too.
  one.release = 20;
  CHECK(at(one, Func::all_gather, 1 * GiB, Algo::nvls, Protocol::simple).alg_bw_gbps == test::approx(16 * 30 * 5.0 / 6));

  // NVLSTree on 2 nodes: min(bwIntra, bwInter), no doubling and no cap; the network hop costs 14
  // us before 2.29, 20.9 from then on.
  System two = h100_two_nodes(true);
  two.release = 26;
  const Estimate nt = at(two, Func::all_reduce, 1 * GiB, Algo::nvls_tree, Protocol::simple);
  CHECK(nt.bus_bw_gbps == test::approx(16 * 24));
  CHECK(nt.alg_bw_gbps == test::approx(16 * 24 * 5.0 / 6));
  CHECK(nt.latency_us == test::approx(25 + 2 * 14));
  two.release = 28;
  CHECK(at(two, Func::all_reduce, 1 * GiB, Algo::nvls_tree, Protocol::simple).latency_us == test::approx(25 + 2 * 14));
  two.release = 29;
  CHECK(at(two, Func::all_reduce, 1 * GiB, Algo::nvls_tree, Protocol::simple).latency_us == test::approx(25 + 2 * 20.9));
  // Beyond 2 nodes the network side is halved.
  System four = h100_two_nodes(true);
  four.nodes = 4;
  four.ranks = 32;
  four.release = 26;
  CHECK(at(four, Func::all_reduce, 1 * GiB, Algo::nvls_tree, Protocol::simple).bus_bw_gbps == test::approx(16 * 12));
}

TEST_CASE("NCCL tuning: Blackwell's NVLSTree takes the tree correction on x86 hosts from 2.28, not in 2.27") {
  System s = h100_two_nodes(true);
  s.arch = Arch::blackwell;
  auto bw = [&](int release, Bytes n) {
    s.release = release;
    return at(s, Func::all_reduce, n, Algo::nvls_tree, Protocol::simple).alg_bw_gbps;
  };
  // 1 MiB = 64 B << 14: the Simple row's factor there is 0.5; from 512 MiB on none applies.
  for (int release : {28, 29, 0}) CHECK(bw(release, 1 * MiB) == test::approx(0.5 * bw(release, 512 * MiB)));
  CHECK(bw(27, 1 * MiB) == test::approx(bw(27, 512 * MiB)));
  // Before 2.27 Blackwell reads Hopper's row, which has no such correction.
  CHECK(bw(26, 1 * MiB) == test::approx(bw(26, 512 * MiB)));
  // Nor on an Arm or POWER host.
  s.x86_cpu = false;
  CHECK(bw(0, 1 * MiB) == test::approx(bw(0, 512 * MiB)));
}

TEST_CASE("NCCL tuning: Blackwell's row by release") {
  System s = h100_node(false);
  s.arch = Arch::blackwell;
  s.ring = s.tree = graph(16, 100, 100);
  auto ll128_cap = [&](int release) {
    s.release = release;
    return at(s, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll128).bus_bw_gbps / 16;
  };
  CHECK(ll128_cap(26) == test::approx(36.7));  // no Blackwell row yet: Hopper's
  CHECK(ll128_cap(27) == test::approx(73.4));  // twice Hopper's
  CHECK(ll128_cap(29) == test::approx(34.5));
  CHECK(ll128_cap(0) == test::approx(40.0));
  // One node's LL cap: Hopper's 141 before 2.27, Blackwell's 282 from then on.
  s.ring = s.tree = graph(16, 40, 40);
  s.release = 26;
  CHECK(at(s, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(141));
  s.release = 27;
  CHECK(at(s, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(282));
}

TEST_CASE("NCCL tuning: 2.18-2.22") {
  System one = h100_node(false);
  one.release = 20;
  // Ring LL: a quarter of the wire for AllReduce (a third for one node's all_gather), under
  // Ampere's one-node llMaxBw of 87.7 until 2.21 gave Hopper 141.
  one.ring = one.tree = graph(16, 15, 15);
  CHECK(at(one, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(16 * 15 / 4.0));
  CHECK(at(one, Func::all_gather, 1 * GiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(16 * 15 / 3.0));
  one.ring = one.tree = graph(16, 100, 100);
  CHECK(at(one, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(87.7));
  CHECK(at(one, Func::all_gather, 1 * GiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(87.7));
  one.release = 21;
  CHECK(at(one, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll).bus_bw_gbps == test::approx(141));
  // Tree/Simple: 28 us a hop and no base latency; NVLS 23 us.
  one.nvls = true;
  CHECK(at(one, Func::all_reduce, 1 * GiB, Algo::tree, Protocol::simple).latency_us == test::approx(2 * 7 * 28));
  // 2.18 had 2.19's rules but Tree/Simple's 4 us hop (§3.8).
  one.release = 18;
  CHECK(at(one, Func::all_reduce, 1 * GiB, Algo::tree, Protocol::simple).latency_us == test::approx(2 * 7 * 4));
  one.release = 20;
  CHECK(at(one, Func::all_reduce, 1 * GiB, Algo::nvls, Protocol::simple).latency_us == test::approx(23));
  // A multi-node ring AllReduce counted 2 x nNodes network steps.
  System two = h100_two_nodes(false);
  two.release = 20;
  // Intra steps cost NVLink's 3.4 us (above Simple's 3 us of network posts), network steps 14.
  CHECK(at(two, Func::all_reduce, 1 * KiB, Algo::ring, Protocol::simple).latency_us ==
        test::approx(8.4 + (30 - 4) * 3.4 + 4 * 14.0));
  // No PAT before 2.23.
  System pat;
  pat.arch = Arch::hopper;
  pat.nodes = pat.ranks = 4;
  pat.pat_allowed = true;
  pat.ring = pat.tree = graph(4, 40, 40, PathType::net);
  pat.release = 22;
  CHECK(at(pat, Func::all_gather, 1 * MiB, Algo::pat, Protocol::simple).time_us < 0);
  pat.release = 23;
  CHECK(at(pat, Func::all_gather, 1 * MiB, Algo::pat, Protocol::simple).time_us > 0);
}

TEST_CASE("NCCL tuning: 2.8's tables and formulas") {
  // Two ABCI V-nodes: 4 V100 all-to-all by NVLink a node, 2 channels. At 4 B the latencies decide:
  // Ring LL 3.6 + 12 x 0.47 x 1.8 + 2 x 2.7, Tree LL 4.4 + 2 x (3 x 0.52 x 1.8 + 1 x 5.0), so 2.8
  // runs Ring LL where 2.30 (Ring LL 6.6 + 12 x 0.6 + 2 x 2.7 ...) runs Tree LL.
  System v;
  v.arch = Arch::volta;
  v.nodes = 2;
  v.ranks = 8;
  v.ring = graph(2, 12, 12);
  v.tree = graph(2, 24, 12);
  v.release = 8;
  CHECK(at(v, Func::all_reduce, 4, Algo::ring, Protocol::ll).latency_us == test::approx(3.6 + 12 * 0.47 * 1.8 + 2 * 2.7));
  CHECK(at(v, Func::all_reduce, 4, Algo::tree, Protocol::ll).latency_us == test::approx(4.4 + 2 * (3 * 0.52 * 1.8 + 5.0)));
  CHECK(choose(v, Func::all_reduce, 4).algo == Algo::ring);
  v.release = 0;
  CHECK(choose(v, Func::all_reduce, 4).algo == Algo::tree);
  v.release = 8;
  // Ring Simple's plateau from nRanks/16 x 64 KiB, x1.9 on every GPU; Tree Simple's 28 us hops.
  CHECK(at(v, Func::all_reduce, 32 * KiB - 4, Algo::ring, Protocol::simple).latency_us == test::approx(8.4 + 12 * 3.4 + 2 * 9.6));
  CHECK(at(v, Func::all_reduce, 32 * KiB, Algo::ring, Protocol::simple).latency_us ==
        test::approx(1.9 * (8.4 + 12 * 3.4 + 2 * 9.6)));
  CHECK(at(v, Func::all_reduce, 1 * MiB, Algo::tree, Protocol::simple).latency_us == test::approx(2 * (3 * 28 + 28)));
  // Caps: an A100 graph's busBw at 235, LL128 per collective (all_gather 18.3 a channel, all_reduce
  // 16.9), the Tree's
  // A100 row (2 nodes: 22.5 a channel) and LL128's own tree share across nodes (0.915).
  System a;
  a.arch = Arch::ampere;
  a.nodes = 1;
  a.ranks = 8;
  a.ring = a.tree = graph(24, 20, 20);
  a.release = 8;
  CHECK(at(a, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::simple).bus_bw_gbps == test::approx(235));
  CHECK(at(a, Func::all_gather, 1 * GiB, Algo::ring, Protocol::ll128).bus_bw_gbps == test::approx(0.92 * 235));
  a.ring = a.tree = graph(4, 40, 40);
  CHECK(at(a, Func::all_gather, 1 * GiB, Algo::ring, Protocol::ll128).bus_bw_gbps == test::approx(4 * 18.3));
  CHECK(at(a, Func::all_reduce, 1 * GiB, Algo::ring, Protocol::ll128).bus_bw_gbps == test::approx(4 * 16.9));
  a.nodes = 2;
  a.ranks = 16;
  CHECK(at(a, Func::all_reduce, 1 * GiB, Algo::tree, Protocol::simple).bus_bw_gbps == test::approx(4 * 22.5));
  a.ring = a.tree = graph(4, 10, 10);
  CHECK(at(a, Func::all_reduce, 1 * GiB, Algo::tree, Protocol::ll128).bus_bw_gbps == test::approx(0.92 * 40 * 0.915));
  // The tree correction's LL128 row: 0.5 at 512 KiB (later releases 0.6), 0.92 at 128 MiB (1).
  const double ll128 = at(a, Func::all_reduce, 1 * GiB, Algo::tree, Protocol::ll128).alg_bw_gbps;
  CHECK(at(a, Func::all_reduce, 512 * KiB, Algo::tree, Protocol::ll128).alg_bw_gbps == test::approx(0.5 * ll128));
  CHECK(at(a, Func::all_reduce, 128 * MiB, Algo::tree, Protocol::ll128).alg_bw_gbps == test::approx(0.92 * ll128));
  // No NVLS, NVLS tree or PAT, and no LL128 on GPUs other than V100 and A100.
  System h = h100_two_nodes(true);
  h.release = 8;
  CHECK(at(h, Func::all_reduce, 1 * GiB, Algo::nvls_tree, Protocol::simple).time_us < 0);
  CHECK(at(h, Func::all_reduce, 1 * MiB, Algo::ring, Protocol::ll128).time_us < 0);
  CHECK(at(h, Func::all_reduce, 1 * MiB, Algo::ring, Protocol::simple).time_us > 0);
}

TEST_CASE("NCCL tuning: releases without a source at hand take 2.30's model") {
  CHECK(has_own_cost_model(8));
  CHECK(!has_own_cost_model(9));
  CHECK(!has_own_cost_model(17));
  CHECK(has_own_cost_model(18));
  for (int release : {7, 9, 17, 30, 31}) {
    System a = h100_two_nodes(true), b = h100_two_nodes(true);
    a.release = release;
    for (Bytes n : {Bytes{1} * KiB, 4 * MiB, 1 * GiB}) {
      const auto ta = cost_table(a, Func::all_reduce, n), tb = cost_table(b, Func::all_reduce, n);
      for (std::size_t i = 0; i < ta.size(); ++i) CHECK(ta[i].time_us == test::approx(tb[i].time_us));
    }
  }
}
