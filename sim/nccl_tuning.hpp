#pragma once
// NCCL 2.30's algorithm/protocol cost model (tuning.cc ncclTopoTuneModel and ncclTopoGetAlgoTime,
// enqueue.cc's cost table; reference/nccl-model.md §1-§3). It is a pure function of a described
// system: no topology detection or graph search happens here. The caller passes the graphs NCCL's
// search would have found, and gets NCCL's time estimate for every (algorithm, protocol) pair and
// the pair NCCL would pick. Estimates are NCCL's own figures, not a simulation: they are what
// decides NCCL's choice, whether or not they match measured times.
#include <string>
#include <string_view>
#include <vector>

#include "sim/protocol.hpp"
#include "sim/units.hpp"

namespace ccsim::nccl {

// NCCL's architecture index for its bandwidth tables (§3.3). Ordered, so `>=` compares generations.
enum class Arch { volta, ampere, hopper, blackwell };
Arch arch_from_sm(int sm);  // <80 volta, 80-89 ampere, 90-99 hopper, >=100 blackwell

// NCCL's algorithm index order (NCCL_ALGO_*): the cost table and the tie rule follow it.
enum class Algo { tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat };
// "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat": also the names of
// ccsim's algorithms.
std::string_view to_string(Algo algo);
const std::vector<Algo>& all_algos();  // in NCCL's index order
// Whether ccsim's algorithm of this name is one of NCCL's collective algorithms (all_algos).
bool is_nccl_algo(std::string_view name);
// NCCL's protocol index order (NCCL_PROTO_*: LL, LL128, Simple), which its cost table follows.
const std::vector<Protocol>& nccl_protocol_order();

// The collectives NCCL's cost model covers (NCCL_NUM_FUNCTIONS, §1.1). AlltoAll, gather, scatter
// and send/recv are point-to-point in NCCL and have no cost model.
enum class Func { broadcast, reduce, all_gather, reduce_scatter, all_reduce };
std::string_view to_string(Func func);

// The path class of a graph's intra-node hops. Only NVLink gets the NVLINK latency row; every other
// class (PCI, and NET for a graph with one GPU per node) takes the PCI row, as NCCL does (§3.2).
enum class PathType { nvlink, pci, net };

// The newest release whose cost model this file encodes (2.30).
constexpr int kLatestRelease = 30;
// The oldest of the run of releases whose cost model it follows (2.18).
constexpr int kOldestTunedRelease = 18;
// One release before that run whose cost model it follows too: NCCL 2.8 (the ABCI 2.0 acceptance
// runs, and the A100 era's software). 2.9-2.17, of which no copy was at hand, take 2.30's.
constexpr int kLegacyTunedRelease = 8;
// Whether ccsim follows `release`'s own cost model (2.x as x; 0: not known).
constexpr bool has_own_cost_model(int release) {
  return release == kLegacyTunedRelease || (release >= kOldestTunedRelease && release < kLatestRelease);
}
// The release whose cost model picks for a run of `release`: itself where ccsim follows its own,
// else kLatestRelease.
constexpr int choosing_release(int release) { return has_own_cost_model(release) ? release : kLatestRelease; }
// "2.26.2" or "2.26" -> 26; 0 for an empty or unreadable version or a major other than 2.
int release_of(std::string_view nccl_version);

// One NCCL graph after the search (§3.1).
struct Graph {
  int channels = 0;        // 0: no such graph, so the algorithms built on it are unavailable
  double bw_intra = 0;     // GB/s per channel
  double bw_inter = 0;     // GB/s per channel; on one node NCCL's search leaves it equal to bw_intra
  PathType type_intra = PathType::nvlink;
  double latency_inter_us = 0;  // the graph's latencyInter
  bool tree_pattern = false;    // pattern TREE (3): all NIC traffic through one GPU, bandwidth x0.85
  bool same_channels = true;    // every channel has the same ring (Ring broadcast/reduce latency)
};

// NCCL's environment settings that ccsim follows: channel counts (0: unset, NCCL's default), NVLS
// on or off, and what NCCL_ALGO / NCCL_PROTO leave the cost model (sim/nccl_env.hpp reads them).
// The channel settings change how many thread blocks a call runs on, not what the cost model
// picks: its bandwidths read the graphs the search found (tuning.cc busBw = graph nChannels x bw),
// while the channels a call launches start from the communicator's count after these limits
// (connect.cc ncclTopoPostset, enqueue.cc).
struct EnvSettings {
  int min_channels = 0;           // NCCL_MIN_NCHANNELS (NCCL_MIN_NRINGS): copies of the first channels up to it
  int max_channels = 0;           // NCCL_MAX_NCHANNELS (NCCL_MAX_NRINGS): only the first ones
  int min_ctas = 0;               // NCCL_MIN_CTAS: as min_channels, and NVLS's floor
  int max_ctas = 0;               // NCCL_MAX_CTAS: as max_channels, and NVLS's ceiling
  int nvls_channels = 0;          // NCCL_NVLS_NCHANNELS: the blocks of an NVLS / NVLS tree call
  int net_channels_per_peer = 0;  // NCCL_NCHANNELS_PER_NET_PEER: a network peer's point-to-point channels
  int min_p2p_channels = 0;       // NCCL_MIN_P2P_NCHANNELS
  int max_p2p_channels = 0;       // NCCL_MAX_P2P_NCHANNELS
  // NCCL_BUFFSIZE: bytes of a connection's Simple FIFO (NCCL's default 4 MiB, NCCL_STEPS 8 steps of
  // it): a ring's Simple chunk is 4 of its steps, half of it (cli::with_nccl_buffers). 0: unset.
  int buffsize = 0;
  // NCCL_P2P_NET_CHUNKSIZE / NCCL_P2P_NVL_CHUNKSIZE / NCCL_P2P_PCI_CHUNKSIZE: the data a step of a
  // point-to-point FIFO holds across nodes / on an all-NVLink node / otherwise (System::
  // p2p_chunk_bytes; NCCL's defaults 128 KiB, 512 KiB, 128 KiB). 0: unset.
  int p2p_net_chunk = 0, p2p_nvl_chunk = 0, p2p_pci_chunk = 0;
  // NCCL_NVLS_ENABLE: 0 turns NVLS and NVLS tree off (nvlsSupport 0), 1 and 2 (NCCL's default:
  // where the machine has it) leave it as the machine allows; -1: unset.
  int nvls_enable = -1;
  // NCCL_COLLNET_ENABLE: 0 turns CollNet off on a machine whose switches reduce (--sharp, which
  // stands for SHARP with NCCL's CollNet plugin in use, as NCCL_COLLNET_ENABLE=1 has it); 1 leaves
  // the machine's (no SHARP switches, no CollNet); -1: unset.
  int collnet_enable = -1;
  // NCCL_LL128_C2C: 0 keeps LL128 across nodes to GPUs within PXB of their NIC on Hopper and later
  // too, where 1 (NCCL's default) lets it reach PXN and P2C (tuning.cc); -1: unset.
  int ll128_c2c = -1;
  // NCCL_ALGO / NCCL_PROTO as given (validated), empty: unset. They narrow the cost model's choice
  // for the collectives they name (nccl::enabled_algos); point-to-point calls ignore them, as in
  // NCCL (enqueue.cc addP2pToPlan picks LL or Simple by size alone).
  std::string algo, proto;
};

// The communicator as the cost model sees it. Every flag here is a condition NCCL decides from the
// topology and environment before the model runs (§1.1, §2); the model only obeys it.
struct System {
  Arch arch = Arch::hopper;     // of the oldest GPU (NCCL's minCompCap)
  // The NCCL 2.x release whose cost model decides (its minor number: 26 for 2.26.2); 0 or anything
  // from kLatestRelease on: 2.30's. Releases 2.18-2.29 follow their own tables and formulas where
  // they differ in ways the model reads (`release_rules` in nccl_tuning.cpp), and 2.8 its own
  // tables and formulas; 2.9-2.17 (no source at hand) and earlier take 2.30's.
  int release = 0;
  // release, with 0 (the run's release is not known) read as kLatestRelease.
  int effective_release() const { return release == 0 ? kLatestRelease : release; }
  int nodes = 1;                // the §3.3 caps read column 1 node / 2 nodes / more than 2 (3 included)
  int ranks = 8;                // must be a multiple of nodes: ppn = ranks / nodes
  bool amd_cpu = false;         // AMD hosts: llMaxBw row 1 across nodes, 2 us net overhead (§3.2, §3.3)
  bool x86_cpu = true;          // false for ARM/POWER hosts: no Blackwell NVLSTree size correction
  bool power_cpu = false;       // POWER hosts: Tree/Simple PCI latency equals Ring's
  bool ll128_enabled = true;    // the LL128 conditions of §2 hold
  // What the network's plugin leaves NCCL when the user sets no NCCL_PROTO: one that cannot
  // promise the ordering LL and LL128 rely on sets NCCL_PROTO=simple itself (aws-ofi-nccl on
  // first-generation EFA); a user's own NCCL_PROTO wins.
  bool net_allows_ll = true;
  bool net_allows_ll128 = true;
  bool collnet = false;         // a CollNet (SHARP) plugin is present and enabled
  bool collnet_ag_rs = false;   // ...and serves all_gather/reduce_scatter (iallgather/ireducescatter, 1 GPU per NIC)
  bool nvls = false;            // NVSwitch with multicast, SM90+
  bool pat_allowed = false;     // PAT's conditions hold (1 GPU per node, host-driven network)
  Graph ring, tree, collnet_chain, collnet_direct, nvls_graph;
  // Point-to-point operations (send/recv, and alltoall, gather, scatter made of them; src/graph/
  // paths.cc ncclTopoComputeP2pChannels): the channels they spread over (p2pnChannels), the most
  // one operation with one peer takes (p2pnChannelsPerPeer: the fewest any peer allows, NVLink
  // peers two per link's worth, others two, a network peer two or fewer on many ranks), both powers
  // of two, and the data a step of their FIFO holds (p2pChunkSize: NCCL_P2P_NVL_CHUNKSIZE 512 KiB on
  // one all-NVLink node, else the PCI/NET 128 KiB).
  int p2p_channels = 1;
  int p2p_channels_per_peer = 1;
  Bytes p2p_chunk_bytes = Bytes{512} << 10;
  EnvSettings nccl_env_settings;  // the run's NCCL channel settings, which launched channels obey
};

// The graph an algorithm runs on (its channels and per-channel bandwidths).
const Graph& graph_of(const System& system, Algo algo);

// One cell of NCCL's cost table.
struct Estimate {
  Algo algo = Algo::ring;
  Protocol proto = Protocol::simple;
  double time_us = -1;      // NCCL's estimate; < 0: the pair is unavailable (all other fields 0)
  double bus_bw_gbps = 0;   // NCCL's busBw after the refinements of §3.4 step 4 (what §3.7 quotes)
  double latency_us = 0;    // the latency term of the time, the ring plateau included
  double alg_bw_gbps = 0;   // the bandwidth term of the time: busBw converted (§3.4.5), tree correction included
};

// nbytes is NCCL's nBytes (§3.6): elemSize x count of the call, where count is per rank for
// broadcast, reduce and all_reduce but the total (per-rank count x ranks) for all_gather and
// reduce_scatter, i.e. nccl-tests' "size" column in every case. The model is for one operation
// (latCount 1). fp8: the call's data type is an 8-bit float (NCCL's penalty on large Ring AR).
//
// Every (algorithm, protocol) pair in NCCL's order: algorithms by index, protocols LL, LL128,
// Simple inside each. Throws ccsim::Error on an inconsistent System (ranks < 1, nodes < 1, ranks
// not a multiple of nodes).
std::vector<Estimate> cost_table(const System& system, Func func, Bytes nbytes, bool fp8 = false);

// NCCL's pick: the least time, the earlier pair on a tie. Throws ccsim::Error when no pair is
// available (e.g. no ring graph).
Estimate choose(const System& system, Func func, Bytes nbytes, bool fp8 = false);

}  // namespace ccsim::nccl
