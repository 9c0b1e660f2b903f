#include "sim/nccl_tuning.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "sim/error.hpp"
#include "sim/nccl_env.hpp"

namespace ccsim::nccl {

const Graph& graph_of(const System& s, Algo a) {
  switch (a) {
    case Algo::tree: return s.tree;
    case Algo::ring: return s.ring;
    case Algo::collnet_direct: return s.collnet_direct;
    case Algo::collnet_chain: return s.collnet_chain;
    case Algo::nvls:
    case Algo::nvls_tree: return s.nvls_graph;  // §3.1: one NVLS graph serves both
    // Not in the reference: NCCL hands PAT the tree graph (graphs[] = {tree, ring, collnet,
    // collnet, nvls, nvls, tree} wherever ncclTopoTuneModel is called).
    case Algo::pat: return s.tree;
  }
  return s.ring;
}

namespace {

constexpr int kProtocols = 3;
// NCCL's protocol index order (LL, LL128, Simple): the tables below and the tie rule follow it.
constexpr Protocol kProtocolOrder[kProtocols] = {Protocol::ll, Protocol::ll128, Protocol::simple};

int index_of(Protocol p) {
  switch (p) {
    case Protocol::ll: return 0;
    case Protocol::ll128: return 1;
    case Protocol::simple: return 2;
  }
  return 2;
}
int index_of(Algo a) { return static_cast<int>(a); }
int index_of(Arch a) { return static_cast<int>(a); }

// ---- §3.2: latencies in us, [algorithm][LL, LL128, Simple]. "-" cells of the reference are 0:
// those pairs are disabled before their latency could matter.
constexpr double kBaseLat[7][kProtocols] = {
    {6.8, 14.0, 8.4},  // tree
    {6.6, 14.0, 8.4},  // ring
    {0, 0, 0},         // collnet direct
    {0, 0, 0},         // collnet chain
    {0, 0, 0},         // nvls
    {0, 0, 0},         // nvls tree
    {8, 8, 8},         // pat
};
enum HwRow { kNvlinkRow, kPciRow, kNetRow };
constexpr double kHwLat[3][7][kProtocols] = {
    {// NVLINK
     {0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    {// PCI
     {1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {// NET
     {5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}},
};
constexpr double kCollNetArityUs = 0.4;  // §1.4: serialisation per extra local rank (CollNetDirect)

// ---- §3.3: bandwidth caps in GB/s, [architecture][node column].
constexpr double kLlMaxBw[4][3] = {{39, 39, 20.4}, {87.7, 22.5, 19.0}, {141, 45, 35}, {282, 90, 70}};
constexpr double kPerChMaxRingLL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kPerChMaxTreeLL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChMaxTree[4][3] = {{26.5, 18.5, 10}, {24, 23.6, 17.8}, {38.7, 41.4, 36}, {70, 42.8, 24}};
// Volta and Ampere have no NVLS: their "-" is 0, which (like their 0 efficiency) zeroes the bandwidth.
constexpr double kPerChMaxNvlsTree[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 57.7, 45.5}, {0, 96, 80}};
constexpr double kNvlsEfficiency[4] = {0, 0, 0.85, 0.74};

// ---- Earlier releases. What NCCL 2.18-2.29 did differently in the parts this model reads, from
// stored copies of their src/graph/tuning.cc (public code search, read, not copied): 2.19/2.20
// (search-index file 358953574), 2.23-2.26 (6399501814: PAT, no Blackwell row) and 2.27
// (15804745244: Blackwell row = 2x Hopper's), and the version notes of reference/nccl-model.md §3.8
// (2.18: Tree/Simple 4 us a hop; 2.21: Hopper llMaxBw 141/45/35; 2.28: nvlsEfficiency; 2.29: NET
// NVLSTree 20.9). 2.18 and 2.21-2.22, of which no copy was at hand, take 2.19's rules but for what
// §3.8 dates (2.18's Tree/Simple hop, 2.21's Hopper llMaxBw); 2.28-2.29 take 2.30's but for what
// §3.8 dates later (Blackwell Ring LL128 34.5 in 2.29; NET NVLSTree 14 before).
struct Rules {
  int release = kLatestRelease;
  bool blackwell_row = true;      // 2.27+: a Blackwell row in the tables; before, Blackwell reads Hopper's
  bool blackwell_doubles = false; // 2.27: the Blackwell row is twice Hopper's
  bool nvls_efficiency = true;    // 2.28+: nvlsEfficiency, (nCh-1)/nCh and x2 for AllReduce; before, min(bwIntra, bwInter) and x5/6
  bool pat = true;                // 2.23+
  bool early = false;             // 2.18-2.22: Ring LL x1/4 (x1/3 for AG/RS/broadcast on one node), Ring LL128 x0.7
                                  // with one GPU per node, Tree Simple 28 us (2.18: 4) with no base, NVLS 23 us,
                                  // nInterSteps 2 x nNodes, no ppn=1 network row, NVLS AG/RS at 5/6
  bool hopper_ll_max = true;      // 2.21+: Hopper's own llMaxBw row (2.18-2.20 read Ampere's)
  double net_nvls_tree_us = 20.9; // NET NVLSTree Simple: 14 before 2.29
  double blackwell_ring_ll128 = 40.0;  // 2.29: 34.5
  // The §3.6 tree correction for NVLSTree on Blackwell x86 hosts: absent from 2.27's
  // ncclTopoGetAlgoTime (15804745244: Tree only), present in 2.29's and 2.30's; 2.28, whose
  // Blackwell-specific NVLSTree caps came with it (§3.8), is taken to have it too.
  bool nvls_tree_correction = true;
  // NCCL_MAX_NVLS_ARITY (src/include/device.h): the most GPUs of one node an NVLS all_gather or
  // reduce_scatter spans; with more local ranks NCCL skips NVLS for them (enqueue.cc/tuning's
  // "func != ncclFuncAllReduce && comm->localRanks > NCCL_MAX_NVLS_ARITY"). 32 from 2.20 on
  // ("NCCL_VERSION_CODE > 22000"), 8 before; an NVL72 rack's 72 GPUs exceed either.
  int max_nvls_arity = 32;
  // NCCL 2.8: three algorithms (Tree, Ring, CollNet) and tables and formulas of their own (the
  // kV28 section below).
  bool v2_8 = false;
};

Rules release_rules(int release) {
  Rules r;
  if (choosing_release(release) == kLatestRelease) return r;
  r.release = release;
  r.blackwell_row = release >= 27;
  r.blackwell_doubles = release == 27;
  r.nvls_efficiency = release >= 28;
  r.pat = release >= 23;
  r.early = release < 23;
  r.hopper_ll_max = release >= 21;
  if (release < 29) r.net_nvls_tree_us = 14;
  if (release == 29) r.blackwell_ring_ll128 = 34.5;
  r.nvls_tree_correction = release >= 28;
  if (release < 20) r.max_nvls_arity = 8;
  r.v2_8 = release == kLegacyTunedRelease;
  return r;
}

// ---- NCCL 2.8 (src/graph/tuning.cc of NVIDIA/nccl v2.8.3-1, commit 920dbe5, read, not copied; the
// figures of reference/nccl-model.md §3.8's 2.8 row). Indices: [Tree, Ring, CollNet][LL, LL128, Simple].
constexpr double kV28BaseLat[3][kProtocols] = {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}, {4.4, 4.4, 0}};
constexpr double kV28HwLat[3][3][kProtocols] = {
    {{.52, 1.25, 28}, {.47, 1.9, 3.4}, {.5, 1.2, 4.0}},   // NVLINK
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {1.0, 1.9, 5.5}},   // PCI
    {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}, {5.0, 5.0, 10.7}},  // NET
};
// LL128's cap per channel by collective (broadcast, reduce, all_gather, reduce_scatter,
// all_reduce: Func's order), for ring and tree alike; the Tree cap per channel [Volta or
// anything but A100, A100][node column]; an A100 graph's busBw cap.
constexpr double kV28Ll128PerCh[5] = {18.8, 12.0, 18.3, 15.2, 16.9};
constexpr double kV28PerChMaxTree[2][3] = {{26.5, 18.5, 10.0}, {24.0, 22.5, 16.0}};
constexpr double kV28A100BusCap = 235.0;
// 2.8's LL128 row of the tree correction (§3.6) differs from later releases' at 512 KiB, 4-16 MiB
// and 128-256 MiB.
constexpr double kV28TreeCorrectionLL128[23] = {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6,
                                                .6, .5, .6, .6, .7, .7, .8, .9, .9, .92, .92};
int v28_index(Algo a) { return a == Algo::tree ? 0 : a == Algo::ring ? 1 : 2; }

// ---- §3.6: bandwidth factor for Tree AllReduce by size, [protocol][log2(nBytes/64)].
constexpr int kCorrectionSizes = 24;
constexpr double kTreeCorrection[kProtocols][kCorrectionSizes] = {
    {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1, 1},
    {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1, 1},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};
// The correction stops below 512 MiB = 64 B << 23, so the table's last entry is never read.
constexpr Bytes kCorrectionLimit = Bytes{64} << 23;

int floor_log2(Bytes v) {
  int r = -1;
  while (v) {
    v >>= 1;
    ++r;
  }
  return r;
}

bool is_block(Func f) { return f == Func::all_gather || f == Func::reduce_scatter; }

// Everything the per-pair formulas share.
struct Comm {
  const System& s;
  Func func;
  int ppn;
  int arch;    // row of the §3.3 tables (the release's: Blackwell reads Hopper's before 2.27)
  int column;  // node column of the §3.3 tables
  int nsteps;  // ring steps of the collective (§1.2, §3.4.5)
  Rules rules;
};

bool is_blackwell(const Comm& c) { return c.arch == index_of(Arch::blackwell); }

// §3.3 caps, as the release has them.
double per_ch_max_ring_ll128(const Comm& c) {
  if (is_blackwell(c) && c.rules.blackwell_doubles) return 2 * kPerChMaxRingLL128[index_of(Arch::hopper)][c.column];
  if (is_blackwell(c)) return c.rules.blackwell_ring_ll128;
  return kPerChMaxRingLL128[c.arch][c.column];
}
double per_ch_max_tree_ll128(const Comm& c) {
  if (is_blackwell(c) && c.rules.blackwell_doubles) return 2 * kPerChMaxTreeLL128[index_of(Arch::hopper)][c.column];
  return kPerChMaxTreeLL128[c.arch][c.column];
}
double per_ch_max_tree(const Comm& c) {
  if (is_blackwell(c) && c.rules.blackwell_doubles) return 2 * kPerChMaxTree[index_of(Arch::hopper)][c.column];
  return kPerChMaxTree[c.arch][c.column];
}

// §3.3 gives columns "1 node / 2 nodes / >=4 nodes". §3.4 splits every other node-count rule at
// "<= 2 nodes", so the third column is really "more than 2 nodes", and 3 nodes read it too.
int node_column(int nodes) { return nodes == 1 ? 0 : nodes == 2 ? 1 : 2; }

bool is_collnet(Algo a) { return a == Algo::collnet_direct || a == Algo::collnet_chain; }

// §1.1 (which algorithm serves which collective, and its conditions) and §2 (protocols).
bool serves(const Comm& c, Algo a, Protocol p) {
  const System& s = c.s;
  const Func f = c.func;
  if (c.rules.v2_8) {
    // 2.8 has Tree, Ring and one CollNet, ccsim's chain (its LL, at a sixth of Simple's rate, is
    // not run here); LL128 only where every GPU is a V100 or every one an A100 (SM70 / SM80).
    if (a != Algo::tree && a != Algo::ring && a != Algo::collnet_chain) return false;
    if (p == Protocol::ll128 && s.arch != Arch::volta && s.arch != Arch::ampere) return false;
  }
  switch (a) {
    case Algo::ring: break;
    case Algo::tree:
      if (f != Func::all_reduce) return false;
      break;
    case Algo::collnet_direct:
    case Algo::collnet_chain:
      // §1.4: both variants allow at most 8 local GPUs.
      if (!s.collnet || c.ppn > 8) return false;
      if (f == Func::all_reduce) break;
      if (a == Algo::collnet_direct && is_block(f) && s.collnet_ag_rs) break;
      return false;
    case Algo::nvls:
      // Across nodes NVLS runs only together with CollNet (SHARP), and only all_reduce: NCCL
      // 2.18-2.22 say "we only support single-node NVLS allgather and reducescatter" (enqueue.cc);
      // later releases allow them with SHARP's own allgather/reduce-scatter, which ccsim has no
      // schedule for, so it keeps the earlier rule for every release.
      if (!s.nvls || (s.nodes > 1 && !s.collnet)) return false;
      if (f != Func::all_reduce && !is_block(f)) return false;
      if (s.nodes > 1 && f != Func::all_reduce) return false;
      if (f != Func::all_reduce && c.ppn > c.rules.max_nvls_arity) return false;
      break;
    case Algo::nvls_tree:
      if (!s.nvls || s.nodes == 1 || f != Func::all_reduce) return false;
      break;
    case Algo::pat:
      if (!s.pat_allowed || !c.rules.pat || !is_block(f)) return false;
      break;
  }
  if (p != Protocol::simple && a != Algo::ring && a != Algo::tree) return false;
  if (p == Protocol::ll && !s.net_allows_ll) return false;
  if (p == Protocol::ll128 && !ll128_allowed(s, f)) return false;
  return graph_of(s, a).channels > 0;
}

double ll_max_bw(const Comm& c) {
  // §3.3 †: one node reads the architecture's row; several nodes read row 0 (Intel and every other
  // vendor) or row 1 (AMD/mixed), whatever the GPU, so the Hopper and Blackwell rows' multi-node
  // cells are never read.
  int row = c.s.nodes == 1 ? c.arch : c.s.amd_cpu ? 1 : 0;
  if (row == index_of(Arch::hopper) && !c.rules.hopper_ll_max) row = index_of(Arch::ampere);
  return kLlMaxBw[row][c.column];
}

// Ring LL's share of the wire in 2.8 and 2.18-2.22: a quarter, a third for one node's all_gather,
// reduce_scatter and broadcast (later releases: half).
double early_ring_ll_share(const Comm& c) {
  const bool quarter = c.s.nodes > 1 || c.func == Func::all_reduce || c.func == Func::reduce;
  return quarter ? 0.25 : 1.0 / 3.0;
}

// NCCL 2.8's busBw for one pair, in GB/s: §3.4's steps with 2.8's caps (an A100 graph's 235, LL128
// per collective, the Tree's without a Hopper row) and its shares (Ring LL a quarter, or a third for
// one node's all_gather, reduce_scatter and broadcast; Ring LL128 0.7 with one GPU per node; Tree
// LL128 0.915 across nodes; CollNet 0.9).
double bus_bandwidth_v28(const Comm& c, Algo a, Protocol p) {
  const System& s = c.s;
  const Graph& g = graph_of(s, a);
  const double channels = g.channels;
  const bool a100 = s.arch == Arch::ampere;  // compCap80; ccsim's Ampere holds SM86/89 too
  double bus = channels * ((s.nodes <= 2 || is_collnet(a)) ? g.bw_intra : g.bw_inter);
  if (a100) bus = std::min(bus, kV28A100BusCap);
  // llMaxBw: one node reads its GPU's row (A100 or not), several the CPU vendor's (§3.3's rows 0-1).
  const double ll_max = kLlMaxBw[s.nodes == 1 ? (a100 ? 1 : 0) : (s.amd_cpu ? 1 : 0)][c.column];
  const double ll128_cap = channels * kV28Ll128PerCh[static_cast<int>(c.func)];
  switch (a) {
    case Algo::ring:
      if (p == Protocol::ll) bus = std::min(ll_max, bus * early_ring_ll_share(c));
      if (p == Protocol::ll128) bus = std::min(bus * (c.ppn < 2 ? 0.7 : 0.92), ll128_cap);
      break;
    case Algo::tree:
      bus = std::min(0.92 * bus, channels * kV28PerChMaxTree[a100 ? 1 : 0][c.column]);
      if (p == Protocol::ll) bus = std::min(bus / 3.8, ll_max);
      if (p == Protocol::ll128) bus = std::min(bus * (s.nodes == 1 ? 7.0 / 9.0 : 0.915), ll128_cap);
      break;
    default:
      bus *= 0.9;  // CollNet
      break;
  }
  return bus;
}

// §3.4 steps 1-4: NCCL's busBw for one pair, in GB/s.
double bus_bandwidth(const Comm& c, Algo a, Protocol p) {
  if (c.rules.v2_8) return bus_bandwidth_v28(c, a, p);
  const System& s = c.s;
  const Graph& g = graph_of(s, a);
  const double channels = g.channels;
  double bw = (s.nodes <= 2 || is_collnet(a)) ? g.bw_intra : g.bw_inter;
  if ((a == Algo::nvls || a == Algo::nvls_tree) && !c.rules.nvls_efficiency) {
    // Before 2.28 the graph's own figures, the tree's network side halved beyond 2 nodes.
    if (a == Algo::nvls_tree) bw = std::min(g.bw_intra, s.nodes <= 2 ? g.bw_inter : g.bw_inter / 2);
    else if (c.rules.release == 27 && c.func != Func::all_reduce)
      bw = std::min(g.bw_intra * (c.ppn - 1) / c.ppn, 0.9 * g.bw_inter);
    else bw = std::min(g.bw_intra, g.bw_inter);
  } else if (a == Algo::nvls || a == Algo::nvls_tree) {
    // One channel leaves (nCh-1)/nCh = 0: NVLS needs two.
    double intra = g.bw_intra * kNvlsEfficiency[c.arch] * (channels - 1) / channels;
    // AllReduce pipelines its reduce-scatter and all-gather halves, so each sees twice the rate.
    intra *= c.func == Func::all_reduce ? 2.0 : static_cast<double>(c.ppn - 1) / c.ppn;
    const double inter = g.bw_inter * (a == Algo::nvls_tree && s.nodes <= 2 ? 2.0 : 1.0);
    bw = std::min(intra, inter);
    if (a == Algo::nvls_tree) bw = std::min(bw, kPerChMaxNvlsTree[c.arch][c.column]);
  }
  double bus = channels * bw;

  // Step 4, in the reference's order: each later line refines the earlier ones' result.
  if (a == Algo::ring && p == Protocol::ll) {
    bus = std::min(ll_max_bw(c), (c.rules.early ? early_ring_ll_share(c) : 0.5) * bus);
  }
  if (a == Algo::ring && p == Protocol::ll128)
    bus = std::min((c.rules.early && c.ppn < 2 ? 0.7 : 0.92) * bus, channels * per_ch_max_ring_ll128(c));
  if (a == Algo::tree && c.func == Func::all_reduce) bus = std::min(0.92 * bus, channels * per_ch_max_tree(c));
  if (a == Algo::tree && p == Protocol::ll) bus = std::min(bus / 3.8, ll_max_bw(c));
  if (a == Algo::tree && p == Protocol::ll128)
    bus = std::min(bus * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), channels * per_ch_max_tree_ll128(c));
  if (a == Algo::tree && g.tree_pattern) bus *= 0.85;
  if (a == Algo::pat) bus *= 0.75;
  if (a == Algo::collnet_direct) {
    if (is_block(c.func)) {
      // Each local GPU is a head with its own NIC, so the heads add up rather than the channels.
      bus = c.ppn * std::min(g.bw_intra, 0.9 * g.bw_inter);
    } else {
      // Fewer channels than local GPUs leave some heads without a NIC of their own.
      double factor = c.ppn / channels;
      factor -= (factor - 1) / 2;
      bus /= factor;
      if (s.arch >= Arch::hopper) bus *= 0.85;
    }
  }
  return bus;
}

// §3.4 step 5: busBw to the algorithm bandwidth NCCL stores.
double algorithm_bandwidth(const Comm& c, Algo a, double bus) {
  const bool nvls = a == Algo::nvls || a == Algo::nvls_tree;
  // Before 2.28 NVLS converted at 5/6, for AG/RS too before 2.23 (only CollNetDirect's were exempt).
  if (nvls && !c.rules.nvls_efficiency && (c.func == Func::all_reduce || c.rules.early)) return bus * 5.0 / 6.0;
  // AG/RS on anything but a ring is already counted per algorithm byte.
  if (a != Algo::ring && is_block(c.func)) return bus;
  if (a == Algo::ring || a == Algo::nvls || a == Algo::nvls_tree) return bus * c.s.ranks / c.nsteps;
  return bus * 0.5;  // tree and CollNet AllReduce move each byte up and back down
}

double hw_latency(const Comm& c, HwRow row, Algo a, Protocol p) {
  if (c.rules.v2_8) return kV28HwLat[row][v28_index(a)][index_of(p)];
  // §3.2: POWER hosts give Tree/Simple over PCI Ring's latency.
  if (c.s.power_cpu && row == kPciRow && a == Algo::tree && p == Protocol::simple)
    return hw_latency(c, kPciRow, Algo::ring, p);
  if (p == Protocol::simple && c.rules.early) {
    if (a == Algo::tree) return c.rules.release == 18 ? 4.0 : 28.0;
    if (row == kNvlinkRow && (a == Algo::nvls || a == Algo::nvls_tree)) return 23;
  }
  if (row == kNetRow && a == Algo::nvls_tree && p == Protocol::simple) return c.rules.net_nvls_tree_us;
  return kHwLat[row][index_of(a)][index_of(p)];
}

// §3.2 "Network post overhead per step".
double net_overhead_us(const System& s) { return s.amd_cpu ? 2.0 : 1.0; }

// §3.5: NCCL's latency for one pair, in us, before the ring plateau of §3.6.
// 2.8 (no graph latencyInter, no network post overhead, LL's intra-node hops x1.8 across nodes,
// its own tables through hw_latency and the base below) shares these formulas too.
double latency(const Comm& c, Algo a, Protocol p) {
  const System& s = c.s;
  const Graph& g = graph_of(s, a);
  const int pi = index_of(p);
  const HwRow intra_row = g.type_intra == PathType::nvlink ? kNvlinkRow : kPciRow;
  const double intra = hw_latency(c, intra_row, a, p) * (c.rules.v2_8 && s.nodes > 1 && p == Protocol::ll ? 1.8 : 1.0);
  // With one GPU per node every step waits on the network in full, which Tree's row models (2.23+).
  double inter = c.ppn == 1 && !c.rules.early ? hw_latency(c, kNetRow, Algo::tree, p) : hw_latency(c, kNetRow, a, p);
  // Simple pays latencyInter twice: the second covers the flush of received data.
  if (!c.rules.v2_8) inter += g.latency_inter_us * (p == Protocol::simple ? 2 : 1);
  // 2.18-2.22 gave Tree/Simple no base latency (its hops cost 28 us, 4 in 2.18); 2.8 its own table.
  const double base = c.rules.v2_8 ? kV28BaseLat[v28_index(a)][pi]
                      : c.rules.early && a == Algo::tree && p == Protocol::simple ? 0.0
                                                                                 : kBaseLat[index_of(a)][pi];
  // The tree's depth across nodes is an integer number of levels (floor), as a binary tree's is.
  const int log2_nodes = floor_log2(static_cast<Bytes>(s.nodes));

  switch (a) {
    case Algo::ring: {
      if (c.func == Func::broadcast || c.func == Func::reduce) {
        // Reading §3.2: across nodes a ring's hops are charged at the NET row.
        const HwRow row = s.nodes == 1 ? intra_row : kNetRow;
        if (g.same_channels) return base + hw_latency(c, row, Algo::ring, p);
        const double step = hw_latency(c, row, p == Protocol::simple ? Algo::tree : Algo::ring, p);
        return base + c.nsteps * step;
      }
      // 2.18-2.22 counted 2 x nNodes network steps for AllReduce (tuning.cc of 2.19); 2.8 and later
      // releases 2 x (nNodes-1).
      const bool two_per_node = c.rules.early && !c.rules.v2_8 && s.nodes > 1;
      const int n_inter = c.func == Func::all_reduce ? (two_per_node ? 2 * s.nodes : 2 * (s.nodes - 1)) : s.nodes - 1;
      // Across nodes every step still posts a network operation (x3 for Simple), whatever its link
      // (from 2.12; 2.8 charged none).
      const double overhead = s.nodes > 1 && !c.rules.v2_8 ? net_overhead_us(s) * (p == Protocol::simple ? 3 : 1) : 0.0;
      return base + (c.nsteps - n_inter) * std::max(intra, overhead) + n_inter * inter;
    }
    case Algo::tree: return base + 2 * ((c.ppn - 1) * intra + log2_nodes * inter);
    case Algo::collnet_direct:
      return base + 2 * (std::min(1, c.ppn - 1) * intra + (c.ppn - 1) * kCollNetArityUs) + inter;
    case Algo::collnet_chain: return base + 2 * (c.ppn - 1) * intra + inter;
    case Algo::nvls: return intra + (s.nodes > 1 ? inter : 0.0);  // baseLat is not added
    case Algo::nvls_tree: return base + intra + 2 * log2_nodes * inter;
    case Algo::pat: return base + log2_nodes * inter / 3.5 + 2.8 * s.ranks;
  }
  return base;
}

int ring_steps(Func f, int ranks) {
  switch (f) {
    case Func::all_reduce: return 2 * (ranks - 1);
    case Func::all_gather:
    case Func::reduce_scatter: return ranks - 1;
    case Func::broadcast:
    case Func::reduce: return ranks;
  }
  return ranks;
}

void check(const System& s) {
  if (s.nodes < 1) throw Error("NCCL cost model: node count " + std::to_string(s.nodes) + " is below 1");
  if (s.ranks < 1) throw Error("NCCL cost model: rank count " + std::to_string(s.ranks) + " is below 1");
  if (s.ranks % s.nodes != 0)
    throw Error("NCCL cost model: " + std::to_string(s.ranks) + " ranks do not split evenly over " +
                std::to_string(s.nodes) + " nodes");
}

}  // namespace


int release_of(std::string_view v) {
  if (v.size() < 3 || v[0] != '2' || v[1] != '.') return 0;
  int minor = 0;
  std::size_t i = 2;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) minor = minor * 10 + (v[i] - '0');
  return i == 2 ? 0 : minor;
}

Arch arch_from_sm(int sm) {
  if (sm < 80) return Arch::volta;
  if (sm < 90) return Arch::ampere;
  if (sm < 100) return Arch::hopper;
  return Arch::blackwell;
}

std::string_view to_string(Algo algo) {
  switch (algo) {
    case Algo::tree: return "tree";
    case Algo::ring: return "ring";
    case Algo::collnet_direct: return "collnet_direct";
    case Algo::collnet_chain: return "collnet_chain";
    case Algo::nvls: return "nvls";
    case Algo::nvls_tree: return "nvls_tree";
    case Algo::pat: return "pat";
  }
  return "?";
}

const std::vector<Protocol>& nccl_protocol_order() {
  static const std::vector<Protocol> order(std::begin(kProtocolOrder), std::end(kProtocolOrder));
  return order;
}

const std::vector<Algo>& all_algos() {
  static const std::vector<Algo> all = {Algo::tree,         Algo::ring, Algo::collnet_direct, Algo::collnet_chain,
                                        Algo::nvls,         Algo::nvls_tree, Algo::pat};
  return all;
}

bool is_nccl_algo(std::string_view name) {
  const auto& all = all_algos();
  return std::any_of(all.begin(), all.end(), [&](Algo a) { return to_string(a) == name; });
}

std::string_view to_string(Func func) {
  switch (func) {
    case Func::broadcast: return "broadcast";
    case Func::reduce: return "reduce";
    case Func::all_gather: return "all_gather";
    case Func::reduce_scatter: return "reduce_scatter";
    case Func::all_reduce: return "all_reduce";
  }
  return "?";
}

std::vector<Estimate> cost_table(const System& system, Func func, Bytes nbytes, bool fp8) {
  check(system);
  std::vector<Estimate> table;
  table.reserve(all_algos().size() * kProtocols);
  for (Algo a : all_algos())
    for (Protocol p : kProtocolOrder) table.push_back(Estimate{a, p, -1, 0, 0, 0});

  // One rank has nothing to communicate: NCCL's table (enqueue.cc) then holds only Ring/Simple,
  // at no cost, and the step counts below would divide by zero.
  if (system.ranks == 1) {
    for (auto& e : table)
      if (e.algo == Algo::ring && e.proto == Protocol::simple) e.time_us = 0;
    return table;
  }

  const Rules rules = release_rules(system.effective_release());
  const Arch row = system.arch == Arch::blackwell && !rules.blackwell_row ? Arch::hopper : system.arch;
  const Comm c{system, func, system.ranks / system.nodes, index_of(row), node_column(system.nodes),
               ring_steps(func, system.ranks), rules};
  const double bytes = static_cast<double>(nbytes);
  for (auto& e : table) {
    if (!serves(c, e.algo, e.proto)) continue;
    const double bus = bus_bandwidth(c, e.algo, e.proto);
    double bw = algorithm_bandwidth(c, e.algo, bus);
    if (!(bw > 0)) continue;  // §3.4.6: a zero bandwidth means "not available"

    // §3.6 tree correction, also for NVLSTree on Blackwell with x86 hosts. Sizes under 64 B have
    // no log2(nBytes/64) index and sizes from 512 MiB on are excluded, so both keep their bandwidth.
    const bool corrected = e.algo == Algo::tree || (e.algo == Algo::nvls_tree && c.rules.nvls_tree_correction &&
                                                     is_blackwell(c) && system.x86_cpu);
    if (corrected && func == Func::all_reduce && nbytes >= 64 && nbytes < kCorrectionLimit) {
      const int k = floor_log2(nbytes >> 6);
      bw *= c.rules.v2_8 && e.proto == Protocol::ll128 ? kV28TreeCorrectionLL128[k] : kTreeCorrection[index_of(e.proto)][k];
    }

    double lat = latency(c, e.algo, e.proto);
    // §3.6 ring plateau. The divisor is the communicator's channel count, which is the ring's;
    // 2.8 starts it at nRanks/16 x 64 KiB and takes 1.9 on every GPU.
    const bool plateau_size =
        c.rules.v2_8 ? static_cast<double>(nbytes) >= system.ranks / 16.0 * 65536
                     : nbytes / (static_cast<Bytes>(system.ring.channels) * static_cast<Bytes>(system.ranks)) >= 64;
    if (e.algo == Algo::ring && e.proto == Protocol::simple && system.nodes > 1 && func == Func::all_reduce && plateau_size)
      lat *= system.arch >= Arch::ampere && !c.rules.v2_8 ? 1.4 : 1.9;

    double time = lat + bytes / (1000 * bw);  // latCount 1: one operation, not a group
    // §3.6: large fp8 ring sums lose precision, so NCCL all but forbids them.
    if (fp8 && e.algo == Algo::ring && func == Func::all_reduce && system.ranks > 8) time *= 1024;

    e.time_us = time;
    e.bus_bw_gbps = bus;
    e.latency_us = lat;
    e.alg_bw_gbps = bw;
  }
  return table;
}

Estimate choose(const System& system, Func func, Bytes nbytes, bool fp8) {
  const auto table = cost_table(system, func, nbytes, fp8);
  const Estimate* best = nullptr;
  // Strictly less: on a tie the earlier index (algorithm, then LL < LL128 < Simple) stays.
  for (const auto& e : table)
    if (e.time_us >= 0 && (!best || e.time_us < best->time_us)) best = &e;
  if (!best)
    throw Error("NCCL cost model: no algorithm/protocol serves " + std::string(to_string(func)) +
                " on this system (no ring graph?)");
  return *best;
}

}  // namespace ccsim::nccl
