#include "sim/nccl_system.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/error.hpp"
#include "sim/topology/rings.hpp"

namespace ccsim::nccl {

namespace {

Arch arch_of(const std::string& family) {
  if (family == "volta") return Arch::volta;
  if (family == "ampere") return Arch::ampere;
  if (family == "hopper" || family == "h200") return Arch::hopper;
  if (family == "blackwell" || family == "gb200" || family == "gb10") return Arch::blackwell;
  throw Error("no NCCL architecture class for GPU family \"" + family + "\"");
}

// Per-link NVLink constant in GB/s by GPU generation (topo.h; reference/nccl-model.md §3.1).
double nvlink_constant(Arch a) {
  switch (a) {
    case Arch::volta: return 20;
    case Arch::ampere: return 20;
    case Arch::hopper: return 20.6;
    case Arch::blackwell: return 40.1;
  }
  return 20;
}

// NCCL's search ladders (search.cc; §3.1): per-channel speeds it tries, highest first.
const std::vector<double>& intra_ladder(Arch a) {
  static const std::vector<double> base = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
  static const std::vector<double> sm90 = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  static const std::vector<double> sm100 = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  return a == Arch::blackwell ? sm100 : a == Arch::hopper ? sm90 : base;
}
const std::vector<double>& inter_ladder(Arch a) {
  static const std::vector<double> sm90 = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> sm100 = {96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
  // Before Hopper, search.cc's speedArrayInter (its 10, 9 and 7 sit between SM90's 12 and 6).
  static const std::vector<double> base = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
  return a == Arch::blackwell ? sm100 : a == Arch::hopper ? sm90 : base;
}

// The highest ladder speed not above `limit` (the slowest rung when even that is too fast).
double ladder_speed(const std::vector<double>& ladder, double limit) {
  for (double s : ladder)
    if (s <= limit + 1e-9) return s;
  return ladder.back();
}

constexpr int kMaxSearchChannels = 32;  // MAXCHANNELS/2: the search's own limit before duplication

// NCCL's bandwidth of a route: the narrowest hop, hops striped over several links adding up; P2P
// through an Intel CPU costs x6/5, through an AMD one nothing more (§3.1).
double route_gbps(const topo::Topology& t, const topo::Route& r) {
  double bw = 1e30;
  for (const auto& hop : r.hops) {
    double sum = 0;
    for (auto l : hop.links) sum += link_gbps(t, l);
    bw = std::min(bw, sum);
  }
  if (r.via_cpu && !has_amd_cpu(t)) bw /= 1.2;
  return bw;
}

struct NodeView {
  int nodes = 1;
  int ppn = 1;
  double intra_gbps = 0;   // what one GPU can push to its ring neighbour inside a node
  bool intra_nvlink = true;
  int nics = 0;            // NICs of a node
  double nic_gbps = 0;     // one NIC
  double gpu_nic_gbps = 0;  // a GPU's path to its NIC, NCCL's path bandwidth (its PCIe links)
};

NodeView view(const topo::Topology& t, int nranks) {
  NodeView v;
  const int gpn = t.gpus_per_node();
  v.ppn = std::min(gpn, nranks);
  v.nodes = (nranks + v.ppn - 1) / v.ppn;
  v.intra_gbps = 1e30;
  // Along the ring the search finds, not rank order: on a hybrid cube-mesh (DGX-1) GPU r and r + 1
  // are not always NVLink neighbours, and rank order would cross PCIe where NCCL's rings do not.
  const std::vector<int> order = v.ppn > 1 ? topo::rings(t, v.ppn, 1).front() : std::vector<int>{0};
  for (int k = 0; k < v.ppn && v.ppn > 1; ++k) {
    const int r = order[static_cast<std::size_t>(k)];
    const int next = order[static_cast<std::size_t>((k + 1) % v.ppn)];
    const topo::Route route = t.route(static_cast<std::size_t>(r), static_cast<std::size_t>(next));
    v.intra_nvlink = v.intra_nvlink && route.latency_class == LatencyClass::nvlink;
    double bw = route_gbps(t, route);
    // A GPU with NVLinks to several peers (no switch) drives rings over all of them at once: NCCL
    // finds one ring per set of disjoint links, so the GPU's whole NVLink width counts.
    if (route.latency_class == LatencyClass::nvlink && !route.through_gpu) {
      double total = 0;
      for (auto [e, end] = boost::out_edges(t.gpu(static_cast<std::size_t>(r)), t.graph()); e != end; ++e) {
        const auto& l = t.link(t.graph()[*e]);
        if (l.kind == topo::LinkKind::nvlink) total += link_gbps(t, t.graph()[*e]);
      }
      bw = std::max(bw, total);
    }
    v.intra_gbps = std::min(v.intra_gbps, bw);
  }
  if (v.ppn == 1) v.intra_gbps = 5000;  // LOC: no intra-node hop
  if (v.nodes > 1) {
    const auto nics = t.nics_of_node(0);
    v.nics = static_cast<int>(nics.size());
    for (auto nic : nics)
      for (auto [e, end] = boost::out_edges(nic, t.graph()); e != end; ++e) {
        const auto id = t.graph()[*e];
        if (t.link(id).kind == topo::LinkKind::net) v.nic_gbps = std::max(v.nic_gbps, link_gbps(t, id));
      }
    if (v.nics == 0 || v.nic_gbps <= 0) throw Error("topology " + t.name() + " spans nodes but has no network NIC");
    v.gpu_nic_gbps = route_gbps(t, t.path(t.gpu(0), t.nic_of(0)));
  }
  return v;
}

// Channel duplication after the search (ncclTopoDupChannels, §3.1).
void duplicate(Graph& g, Arch a) {
  if (g.bw_intra < 25) return;
  if (a >= Arch::hopper && g.bw_intra < 50 && g.channels > 4) return;
  g.channels *= 2;
  g.bw_intra /= 2;
  g.bw_inter /= 2;
}

// The search's pass 2 for trees (search.cc): from the ring's solution, raise the intra-node speed
// one rung at a time while it is below twice the inter-node speed and the node still carries
// every channel at it. A tree sends each byte across nodes once where a ring sends it 2(N-1)/N
// times, so its chain inside the node may run faster than the NICs; the cost model reads this
// speed on up to 2 nodes (reference/nccl-model.md §3.4 step 1).
void raise_tree_intra(Graph& g, const std::vector<double>& ladder, double intra_gbps) {
  for (auto it = ladder.rbegin(); it != ladder.rend(); ++it) {
    if (*it <= g.bw_intra + 1e-9) continue;
    if (g.bw_intra >= 2 * g.bw_inter - 1e-9) break;
    if (g.channels * *it > intra_gbps + 1e-9) break;
    g.bw_intra = *it;
  }
}

// NCCL's point-to-point channels (paths.cc ncclTopoGetNchannels, ncclTopoComputeP2pChannels): a
// peer over NVLink (not through another GPU) allows two channels per link's worth of the path's
// bandwidth, any other local peer two, a network peer two, from NCCL 2.20 halved while twice the
// ranks exceed four times the p2p channels (with at least the NICs the GPU needs, one here); the
// fewest any peer allows, rounded up to a power of two, is the per-peer limit for all. Before 2.20
// a network peer had NCCL_NCHANNELS_PER_NET_PEER's 2 at any scale: in NVIDIA/nccl issue 1272
// sendrecv_perf on 8 GH200 nodes (32 ranks) moved 24.2 GB/s under 2.19.4 and 18.3 under 2.20.5,
// 24.2 again with NCCL_NCHANNELS_PER_NET_PEER=4. From 2.29 a network peer takes one channel per
// NCCL_P2P_PER_CHANNEL_NET_BW (14 GB/s) of the GPU's NICs, at least one per NIC (4 on a 400G NIC,
// 2 on a 200G one), and on several nodes the per-peer limit halves only while it times the rounds
// of 8 peers (NCCL_MAX_DEV_WORK_P2P_PER_BATCH) a kernel takes exceeds the p2p channels (a public
// write-up of a B300 alltoall change between 2.28.9 and 2.29.2 quotes both versions' code).
// NCCL counts the GPU's NICs (ncclTopoGetLocalNetCountByBw: its channels' NICs, until they carry
// its bandwidth to the CPU), each at the GPU's path bandwidth to it, which its PCIe links cap (a
// Gen4 x16 GPU: 24 GB/s, 2 channels, whatever its NIC's rate); ccsim takes the node's NICs shared
// by its GPUs, each at the lesser of the NIC's rate and GPU 0's path to its own.
int network_peer_channels(const NodeView& v, int release) {
  if (release < 29) return 2;
  const int local_nics = std::max(1, v.nics / std::max(1, v.ppn));
  const double per_nic = v.gpu_nic_gbps > 0 ? std::min(v.nic_gbps, v.gpu_nic_gbps) : v.nic_gbps;
  const int net_gbps = static_cast<int>(local_nics * per_nic);  // NCCL truncates the float
  constexpr int kPerChannelNetGbps = 14;                            // NCCL_P2P_PER_CHANNEL_NET_BW
  return std::max(local_nics, (net_gbps + kPerChannelNetGbps - 1) / kPerChannelNetGbps);
}

void describe_p2p(const topo::Topology& t, const NodeView& v, System& s) {
  // p2pnChannels: the communicator's channels within NCCL_MIN/MAX_P2P_NCHANNELS.
  const EnvSettings& set = s.nccl_env_settings;
  int channels = std::min(collective_channels(s), kMaxChannels);
  if (set.max_p2p_channels > 0) channels = std::min(channels, set.max_p2p_channels);
  channels = std::max(channels, set.min_p2p_channels);
  int per_peer = channels;
  const double nvlink = nvlink_constant(s.arch);
  bool all_nvlink = true;
  for (int a = 0; a < v.ppn; ++a)
    for (int b = 0; b < v.ppn; ++b) {
      if (a == b) continue;
      const topo::Route route = t.route(static_cast<std::size_t>(a), static_cast<std::size_t>(b));
      const bool nvl = route.latency_class == LatencyClass::nvlink && !route.through_gpu;
      all_nvlink = all_nvlink && route.latency_class == LatencyClass::nvlink;
      per_peer = std::min(per_peer, nvl ? 2 * std::max(1, static_cast<int>(route_gbps(t, route) / nvlink + 1e-9)) : 2);
    }
  const int release = s.effective_release();
  if (v.nodes > 1) {
    int net = network_peer_channels(v, release);
    while (release >= 20 && release < 29 && net * s.ranks > channels * 4 && net > 1) net /= 2;
    if (set.net_channels_per_peer > 0) net = set.net_channels_per_peer;  // replaces the rule
    per_peer = std::min(per_peer, net);
  }
  auto pow2_up = [](int n) { return static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(1, n)))); };
  s.p2p_channels = std::min(pow2_up(channels), kMaxChannels);
  s.p2p_channels_per_peer = std::min(pow2_up(per_peer), s.p2p_channels);
  if (release >= 29 && v.nodes > 1 && set.net_channels_per_peer <= 0) {
    constexpr int kPeersPerRound = 8;  // NCCL_MAX_DEV_WORK_P2P_PER_BATCH
    const int rounds = (s.ranks + kPeersPerRound - 1) / kPeersPerRound;
    while (s.p2p_channels_per_peer * rounds > s.p2p_channels && s.p2p_channels_per_peer > 1) s.p2p_channels_per_peer /= 2;
  }
  // NCCL_P2P_NVL_CHUNKSIZE on one node whose GPUs all reach each other over NVLink, else
  // NCCL_P2P_PCI_CHUNKSIZE / NCCL_P2P_NET_CHUNKSIZE (init.cc; reference/nccl-model.md §1.7).
  const bool nvl_node = v.nodes == 1 && all_nvlink && v.ppn > 1;
  s.p2p_chunk_bytes = nvl_node ? Bytes{512} << 10 : Bytes{128} << 10;
  const int given = v.nodes > 1 ? set.p2p_net_chunk : nvl_node ? set.p2p_nvl_chunk : set.p2p_pci_chunk;
  if (given > 0) s.p2p_chunk_bytes = static_cast<Bytes>(given);
}

}  // namespace

int p2p_operation_channels(const System& s, Bytes bytes) {
  if (bytes == 0) return 1;
  // enqueue.cc: an operation starts on the fewest channels that leave one per peer across the
  // p2p channels and doubles up to the per-peer limit. Up to 2.18 (group.cc, then enqueue.cc) it
  // also stopped at the most that put no more than four operations on a channel ("we loose the
  // sync warp"): with 8 ranks on 32 channels, 16; 2.19's rewrite of the p2p planner dropped that.
  constexpr int kLastFourPerChannel = 18;
  int most = std::max(1, s.p2p_channels_per_peer);
  int fewest = most;
  while (fewest * s.ranks > s.p2p_channels && fewest > 1) fewest /= 2;
  while (s.effective_release() <= kLastFourPerChannel && most * s.ranks > s.p2p_channels * 4 && most > 1) most /= 2;
  const Bytes step = s.p2p_chunk_bytes;
  const Bytes min_part = s.nodes > 1 ? step / 2 : step / 8;
  const Bytes max_part = s.nodes > 1 ? step : step * 32;
  int n = static_cast<int>(std::min<Bytes>(static_cast<Bytes>(fewest), (bytes + min_part - 1) / min_part));
  Bytes part = std::max(min_part, (bytes + static_cast<Bytes>(n) - 1) / static_cast<Bytes>(n));
  while (part > max_part && n <= most / 2) {
    n *= 2;
    part = (bytes + static_cast<Bytes>(n) - 1) / static_cast<Bytes>(n);
  }
  return n;
}

Protocol p2p_protocol(const System& s, Bytes bytes) {
  const int release = s.effective_release();
  constexpr Bytes kThreshold = Bytes{16} << 10;  // NCCL_P2P_LL_THRESHOLD
  if (release < 12) return Protocol::simple;
  const Bytes limit = release >= 19 ? kThreshold * static_cast<Bytes>(std::max(1, s.p2p_channels_per_peer)) : kThreshold;
  return bytes <= limit ? Protocol::ll : Protocol::simple;
}

Bytes p2p_peer_bytes(const CollectiveSpec& spec) { return spec.block_count() * element_bytes(spec.type); }

bool has_amd_cpu(const topo::Topology& t) {
  for (const auto& l : t.links())
    if (l.kind == topo::LinkKind::cpu && l.generation == "xgmi") return true;
  return false;
}

double link_gbps(const topo::Topology& t, topo::LinkId id) {
  const auto& l = t.link(id);
  switch (l.kind) {
    case topo::LinkKind::nvlink: {
      // The constant belongs to the GPU end; switch-to-switch NVLink takes the fabric's generation.
      const auto& da = t.device(l.a);
      const auto& db = t.device(l.b);
      const std::string& family = da.kind == topo::DeviceKind::gpu ? da.arch : db.kind == topo::DeviceKind::gpu ? db.arch : "";
      const Arch a = family.empty() ? (l.generation == "5" ? Arch::blackwell : l.generation == "4" ? Arch::hopper : Arch::ampere)
                                    : arch_of(family);
      return l.lanes * nvlink_constant(a);
    }
    case topo::LinkKind::pcie: {
      // width x rate / 80 (topo.cc): 12 / 24 / 48 / 96 GB/s for x16 Gen3..Gen6.
      const double per_lane = l.generation == "3" ? 0.75 : l.generation == "4" ? 1.5 : l.generation == "5" ? 3.0 : 6.0;
      return l.lanes * per_lane;
    }
    case topo::LinkKind::cpu:
      // NCCL's own constants for the link between sockets (topo.h, §3.1), far below what the links
      // carry: links.json holds the physical rates the engine uses.
      if (l.generation == "upi-spr") return l.lanes * 22.0;
      if (l.generation == "upi-skl") return l.lanes * 10.0;
      if (l.generation == "xgmi") return l.lanes * 16.0;
      if (l.generation == "qpi-bdw") return l.lanes * 6.0;
      if (l.generation == "grace-nvlink") return l.lanes * 6.0;  // ARM_BW
      return l.bandwidth_bytes_per_s / 1e9;
    case topo::LinkKind::c2c:
    case topo::LinkKind::net:
      // links.json holds NIC speeds / 8000, what NCCL reads too.
      return l.bandwidth_bytes_per_s / 1e9;
  }
  return 0;
}

// NCCL enables LL128 by default across nodes only where a 128-byte store reaches the peer GPU
// whole and in order along the GPU-NIC path (NVIDIA/nccl issue 786): every rank's path to its NIC
// (the graphs' typeInter) within PXB, or on Hopper and later within PXN, which takes in a NIC on
// the CPU a GPU reaches by NVLink-C2C (P2C, under NCCL_LL128_C2C=1, the default) and one reached
// through an NVLink peer (PXN) (tuning.cc, reference/nccl-model.md §2); NCCL_LL128_C2C=0 keeps
// Hopper and later to PXB too (HPE's workaround for LL128 over GH200's P2C path, NVIDIA/nccl PR
// 2053). 2.8 had the PXB rule alone and no Hopper.
namespace {
bool nic_paths_allow_ll128(const topo::Topology& t, int nranks, Arch arch, const EnvSettings& settings) {
  using topo::Topology;
  const bool c2c = arch >= Arch::hopper && settings.ll128_c2c != 0;
  const Topology::NicPath farthest_allowed = c2c ? Topology::NicPath::pxn : Topology::NicPath::pxb;
  for (int r = 0; r < nranks; ++r)
    if (t.nic_path(static_cast<std::size_t>(r)) > farthest_allowed) return false;
  return true;
}
}  // namespace

System describe(const topo::Topology& t, int nranks, int release, const EnvSettings& settings) {
  System s;
  s.release = release;
  s.nccl_env_settings = settings;
  s.arch = arch_of(t.gpu_arch());
  s.ranks = nranks;
  const NodeView v = view(t, nranks);
  s.nodes = v.nodes;
  s.amd_cpu = has_amd_cpu(t);
  s.ll128_enabled = s.arch >= Arch::volta && v.intra_nvlink && (v.nodes == 1 || nic_paths_allow_ll128(t, nranks, s.arch, settings));
  const topo::NetTransport transport = v.nodes > 1 ? t.net_transport() : topo::NetTransport{};
  // A net plugin sets NCCL_PROTO only where the user has not (aws-ofi-nccl): the user's wins.
  s.net_allows_ll = transport.ll || !settings.proto.empty();
  s.net_allows_ll128 = transport.ll128 || !settings.proto.empty();
  s.nvls = t.has_nvls() && s.arch >= Arch::hopper && v.ppn > 1 && settings.nvls_enable != 0;
  s.collnet = t.has_sharp() && v.nodes > 1 && v.ppn <= 8 && settings.collnet_enable != 0;
  s.pat_allowed = v.ppn == 1 && v.nodes > 1;

  Graph ring;
  ring.type_intra = v.intra_nvlink ? PathType::nvlink : PathType::pci;
  if (v.nodes == 1) {
    const double speed = ladder_speed(intra_ladder(s.arch), v.intra_gbps);
    ring.channels = std::clamp(static_cast<int>(std::floor(v.intra_gbps / speed + 1e-9)), 1, kMaxSearchChannels);
    ring.bw_intra = ring.bw_inter = speed;
  } else {
    // Each ring leaves the node through one NIC; the speed must fit the NIC and, summed over the
    // rings, what a GPU can push inside the node.
    double speed = ladder_speed(inter_ladder(s.arch), v.nic_gbps);
    int per_nic = std::max(1, static_cast<int>(std::floor(v.nic_gbps / speed + 1e-9)));
    // Fewer NICs than GPUs per node: rings share them; more GPUs cannot add channels beyond the NICs.
    // A rail-optimised node gives each GPU its own NIC: a job on fewer GPUs than the node has
    // NICs reaches only theirs.
    const int usable_nics = std::min(v.nics, v.ppn);
    int channels = std::min(kMaxSearchChannels, usable_nics * per_nic);
    for (const double rung : inter_ladder(s.arch)) {
      if (rung > speed) continue;
      speed = rung;
      if (channels * speed <= v.intra_gbps + 1e-9) break;
    }
    ring.channels = channels;
    ring.bw_intra = ring.bw_inter = speed;
  }
  ring.latency_inter_us = transport.plugin_latency_us;  // the search copies the NICs' latency
  Graph tree = ring;
  if (v.nodes > 1) raise_tree_intra(tree, inter_ladder(s.arch), v.intra_gbps);
  duplicate(ring, s.arch);
  duplicate(tree, s.arch);
  s.ring = ring;
  s.tree = tree;
  if (v.nodes > 1 && v.nics < v.ppn) s.tree.tree_pattern = true;  // all NIC traffic through one GPU
  if (s.collnet) {
    s.collnet_direct = ring;
    s.collnet_chain = ring;
  }
  describe_p2p(t, v, s);
  if (s.nvls) {
    Graph g;
    g.channels = s.arch == Arch::blackwell ? (v.nodes > 1 ? 32 : 24) : 16;  // §1.5
    // NVLS moves S(N+1)/N per GPU where a ring moves 2S(N-1)/N (§1.5), at the switch's reduction
    // efficiency (nvlsEfficiency, §3.3): the per-channel speed in ring-equivalent (bus) terms.
    const double n = v.ppn;
    const double efficiency = s.arch == Arch::blackwell ? 0.74 : 0.85;
    g.bw_intra = ladder_speed(intra_ladder(s.arch), v.intra_gbps * efficiency * 2 * (n - 1) / (n + 1) / g.channels);
    g.bw_inter = v.nodes > 1 ? ring.bw_inter : g.bw_intra;
    g.type_intra = PathType::nvlink;
    g.latency_inter_us = ring.latency_inter_us;
    s.nvls_graph = g;
  }
  return s;
}

bool flushes_network_receives(const topo::Topology& t) { return arch_of(t.gpu_arch()) < Arch::hopper; }

std::optional<Func> function_of(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::broadcast: return Func::broadcast;
    case CollectiveKind::reduce: return Func::reduce;
    case CollectiveKind::all_gather: return Func::all_gather;
    case CollectiveKind::reduce_scatter: return Func::reduce_scatter;
    case CollectiveKind::all_reduce: return Func::all_reduce;
    default: return std::nullopt;
  }
}

Bytes cost_bytes(const CollectiveSpec& spec) {
  // nccl-tests' count is already the total for the block collectives (CollectiveSpec::count).
  return spec.size_bytes();
}

Bytes chunk_bytes(const System& s, Func func, Algo algo, Protocol proto, Bytes nbytes, int channels,
                  Bytes protocol_chunk) {
  constexpr Bytes kChunkSteps = 4;              // ALLREDUCE_CHUNKSTEPS = NCCL_STEPS / 2 (§1.2)
  constexpr Bytes kNvlsChunk = Bytes{128} << 10;  // NCCL_NVLS_CHUNKSIZE default (§1.5)
  const Bytes nch = static_cast<Bytes>(std::max(1, channels));
  const int nodes = std::max(1, s.nodes);
  const int ppn = std::max(1, s.ranks / nodes);
  Bytes chunk = algo != Algo::ring && proto == Protocol::simple ? std::max<Bytes>(1, protocol_chunk / kChunkSteps)
                                                                 : protocol_chunk;
  // Each rule shrinks the chunk while the call is small next to the work running at once.
  auto shrink_to = [&](Bytes limit, Bytes concurrent, Bytes factor) {
    if (nbytes < factor * concurrent * chunk && chunk > limit) chunk = limit;
  };
  // ...or halves it while each of `parts` running at once gets fewer than `chunks` of it (NCCL
  // divides in integers), down to `floor`.
  auto halve_while = [&](Bytes parts, double chunks, Bytes floor) {
    while (static_cast<double>(nbytes / (parts * chunk)) < chunks && chunk > floor) chunk /= 2;
  };
  switch (algo) {
    case Algo::nvls: {
      chunk = std::min(chunk, kNvlsChunk);
      // Across nodes (NVLS with CollNet) a slow NVLS all_reduce, under 150 GB/s of algorithm
      // bandwidth in NCCL's own model, moves 32 KiB chunks (calcCollChunking).
      if (nodes > 1) {
        double nvls_gbps = 0;
        for (const Estimate& e : cost_table(s, Func::all_reduce, nbytes))
          if (e.algo == Algo::nvls && e.proto == Protocol::simple) nvls_gbps = e.alg_bw_gbps;
        if (nvls_gbps < 150) chunk = std::min(chunk, Bytes{32} << 10);
      }
      const Bytes ops = nch * static_cast<Bytes>(ppn);  // channels x NVLS heads (one per local GPU)
      shrink_to(Bytes{64} << 10, ops, 64);
      shrink_to(Bytes{32} << 10, ops, 8);
      shrink_to(Bytes{16} << 10, ops, 2);
      break;
    }
    case Algo::nvls_tree: {
      chunk = nodes >= 4 ? std::min(kNvlsChunk, Bytes{64} << 10) : kNvlsChunk;
      const Bytes ops = nch * static_cast<Bytes>(ppn);
      shrink_to(Bytes{256} << 10, ops, 32);
      shrink_to(Bytes{128} << 10, ops, 16);
      shrink_to(Bytes{64} << 10, ops, 4);
      shrink_to(Bytes{32} << 10, ops, 1);
      break;
    }
    case Algo::tree:
      if (proto == Protocol::ll128) {
        int log2_nodes = 0;
        while ((2 << log2_nodes) <= nodes) ++log2_nodes;
        const double steps = 1 + log2_nodes + 0.1 * ppn;
        halve_while(nch, steps * 64 / ppn, Bytes{128} << 10);
        halve_while(nch, steps * 16 / ppn, Bytes{32} << 10);
      }
      break;
    case Algo::pat: {
      const Bytes factor = func == Func::all_gather ? 32 : 16;  // reduce_scatter: 16
      while (chunk * nch * factor > nbytes && chunk > (Bytes{64} << 10)) chunk /= 2;
      break;
    }
    case Algo::collnet_direct: {
      // Every local GPU heads a part (nHeads = ppn), and a rank with heads above or below it sits
      // at depth 2 (1 with one GPU a node). NCCL's third rule repeats the second's depth x 8.
      const Bytes parts = nch * static_cast<Bytes>(ppn);
      const double depth = ppn > 1 ? 2 : 1;
      halve_while(parts, depth * 64, Bytes{128} << 10);
      halve_while(parts, depth * 8, Bytes{64} << 10);
      halve_while(parts, depth * 8, Bytes{32} << 10);
      break;
    }
    case Algo::collnet_chain: {
      // The chain runs through the node's GPUs (collnetChain.depth = nRanks / nNodes).
      chunk = std::min<Bytes>(chunk, Bytes{256} << 10);
      const double depth = ppn;
      halve_while(nch, depth * 64, Bytes{128} << 10);
      halve_while(nch, depth * 8, Bytes{64} << 10);
      halve_while(nch, depth, Bytes{32} << 10);
      break;
    }
    default:
      break;
  }
  return chunk;
}

int collective_channels(const System& s) {
  const int ring = std::max(1, s.ring.channels);
  const int searched = s.tree.channels > 0 ? std::min(ring, s.tree.channels) : ring;
  // ncclTopoPostset: the first of the duplicated channels up to the maximum, then copies of those
  // up to the minimum ("we permit combining max, then min").
  const EnvSettings& set = s.nccl_env_settings;
  int nc = std::min(kMaxChannels, 2 * searched);
  if (set.max_channels > 0) nc = std::min(nc, set.max_channels);
  if (set.max_ctas > 0) nc = std::min(nc, set.max_ctas);
  return std::min(kMaxChannels, std::max({nc, set.min_channels, set.min_ctas}));
}

int launched_channels(const System& s, Algo algo, Protocol proto, Bytes nbytes, int nranks) {
  // NVLS's blocks are NCCL_NVLS_NCHANNELS within the CTA limits (nvls.cc), whatever the size.
  const EnvSettings& set = s.nccl_env_settings;
  if (algo == Algo::nvls || algo == Algo::nvls_tree) {
    int nc = set.nvls_channels > 0 ? set.nvls_channels : graph_of(s, algo).channels;
    if (set.max_ctas > 0) nc = std::min(nc, set.max_ctas);
    return std::clamp(std::max(nc, set.min_ctas), 1, kMaxChannels);
  }
  // CollNet and PAT keep their graph's channel count: their work is split by heads, not by size.
  if (algo != Algo::ring && algo != Algo::tree) return std::max(1, graph_of(s, algo).channels);
  int nc = collective_channels(s);
  const double threads = proto == Protocol::ll128 ? 640 : 512;
  double per_thread = proto == Protocol::simple ? 64 : 8;
  if (proto == Protocol::ll && algo == Algo::ring) per_thread *= nranks;
  while (nc > 1 && static_cast<double>(nbytes) < nc * threads * per_thread) --nc;
  return nc;
}

bool nvls_supported(const CollectiveSpec& spec) {
  if (spec.kind == CollectiveKind::all_gather) return true;
  const bool sum = spec.op == ReduceOp::sum, min_max = spec.op == ReduceOp::min || spec.op == ReduceOp::max;
  switch (spec.type) {
    case DataType::int32:
    case DataType::uint32:
    case DataType::int64:
    case DataType::uint64:
    case DataType::fp16:
    case DataType::bf16: return sum || min_max;
    case DataType::fp32:
    case DataType::fp64: return sum;
    default: return false;
  }
}

bool collnet_supported(const CollectiveSpec& spec) {
  return !is_reduction(spec.kind) || (spec.op != ReduceOp::prod && spec.op != ReduceOp::lor);
}

System for_call(const System& system, const CollectiveSpec& spec) {
  System s = system;
  s.nvls = s.nvls && nvls_supported(spec);
  s.collnet = s.collnet && collnet_supported(spec);
  // PAT has no reduce_scatter kernel that scales: NCCL skips it for avg, whose device op is a
  // PreMulSum (floats) or a SumPostDiv (integers) (enqueue.cc: "Tree reduceScatter doesn't
  // support scaling yet").
  if (spec.kind == CollectiveKind::reduce_scatter && spec.op == ReduceOp::avg) s.pat_allowed = false;
  return s;
}

Choice choose(const System& system, const CollectiveSpec& spec) {
  const System s = for_call(system, spec);
  Choice c;
  const auto f = function_of(spec.kind);
  if (!f) {
    c.algorithm = "direct";
    c.protocol = p2p_protocol(s, p2p_peer_bytes(spec));
    c.channels = p2p_operation_channels(s, p2p_peer_bytes(spec));
    return c;
  }
  const Estimate e = nccl::choose(s, *f, cost_bytes(spec));
  c.algorithm = std::string(to_string(e.algo));
  c.protocol = e.proto;
  c.channels = launched_channels(s, e.algo, e.proto, cost_bytes(spec), spec.nranks);
  c.estimate_us = e.time_us;
  return c;
}

}  // namespace ccsim::nccl
