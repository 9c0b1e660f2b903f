#pragma once
// What NCCL would see of a machine (its topology detection and graph search, reduced to the figures
// its cost model reads), and what it would pick for a collective call: the algorithm, protocol and
// channel count. This is the bridge from ccsim's Topology to nccl_tuning's cost model, and from the
// model's choice back to ccsim's algorithm names.
#include <optional>
#include <string>
#include <vector>

#include "sim/collective.hpp"
#include "sim/nccl_env.hpp"
#include "sim/nccl_tuning.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim::nccl {

// The cost model's inputs for a communicator of the first `nranks` GPUs (rank order) of `t`, as
// NCCL release 2.`release` sets them up (0: the latest, System::release) under the run's channel
// settings.
System describe(const topo::Topology& t, int nranks, int release = 0, const EnvSettings& settings = {});

// Whether the machine's sockets are AMD (xGMI between them): NCCL's AMD rows and overheads apply.
bool has_amd_cpu(const topo::Topology& t);

// Whether NCCL flushes data a NIC wrote into the GPU before the GPU reads it (Simple; LL and LL128
// carry their own flags): GPUs before Hopper always flush, Hopper and later do not need to
// (aws-ofi-nccl platform-aws.cpp on NCCL_NET_FORCE_FLUSH; NCCL's cost model counts a net plugin's
// latency a second time for Simple "to cover the flush", reference/nccl-model.md §3.5).
bool flushes_network_receives(const topo::Topology& t);

// NCCL's own bandwidth figure for one link (GB/s per direction), as its topology code sets it:
// NVLink lanes x the per-link constant of the GPU generation, PCIe width x rate / 80, the NIC speed,
// the CPU interconnect constants (reference/nccl-model.md §3.1).
double link_gbps(const topo::Topology& t, topo::LinkId id);

// The collectives NCCL's cost model covers; the others are point-to-point in NCCL.
std::optional<Func> function_of(CollectiveKind kind);
// NCCL's nBytes for the cost model: the per-rank buffer, or the total for all_gather and
// reduce_scatter (§3.6).
Bytes cost_bytes(const CollectiveSpec& spec);

// Thread blocks (channels) NCCL runs a ring or tree collective on: twice the rings (and trees) its
// search found, min(ring, tree), as ncclTopoPostset duplicates every channel once more so that two
// blocks share each ring ("24 coll channels" in NCCL's init log of 8-GPU A100 and H100 nodes, whose
// search finds 12 rings, and "16" for two H100 nodes; at most MAXCHANNELS).
int collective_channels(const System& s);

// Channels NCCL launches for a message of `nbytes`: collective_channels for ring and tree (the
// graph's count for the others), reduced for small messages so that every thread still has work
// (§1.7).
int launched_channels(const System& s, Algo algo, Protocol proto, Bytes nbytes, int nranks);

// Channels NCCL splits one point-to-point operation of `bytes` (to or from one peer) over
// (enqueue.cc addP2pToPlan, NCCL 2.19+): at least as many as leave every rank's peers one channel
// each of the p2p channels, never more than the per-peer limit, and parts no smaller than an
// eighth of a FIFO step (half on several nodes) nor larger than 32 steps (one step).
int p2p_operation_channels(const System& s, Bytes bytes);
// The protocol of a point-to-point operation of `bytes`: NCCL sends small ones with LL (enqueue.cc
// addP2pToPlan, NCCL_P2P_LL_THRESHOLD 16 KiB: per operation from 2.12, times the per-peer channel
// limit from 2.19), the rest with Simple, within a node and across nodes alike (an LL message to
// another node pays the proxy's cost per operation: model parameter hop_latency_us.net.ll.p2p).
Protocol p2p_protocol(const System& s, Bytes bytes);
// What one point-to-point operation of a call moves between two ranks: the whole buffer of a
// sendrecv, one rank's block of an alltoall, gather or scatter.
Bytes p2p_peer_bytes(const CollectiveSpec& spec);

// The chunk one channel pipelines for a call of `nbytes` (NCCL's nBytes), as NCCL sizes it
// (enqueue.cc calcCollChunking, NCCL 2.2x): Ring Simple moves `protocol_chunk` (CHUNKSTEPS steps);
// every other algorithm one step with Simple (`protocol_chunk` / ALLREDUCE_CHUNKSTEPS), the
// protocol's chunk with LL and LL128. NVLS and NVLSTree start from NVLS_CHUNKSIZE and shrink for
// smaller calls relative to channels x heads; Tree LL128 and PAT halve theirs for small calls.
Bytes chunk_bytes(const System& s, Func func, Algo algo, Protocol proto, Bytes nbytes, int channels,
                  Bytes protocol_chunk);

struct Choice {
  std::string algorithm;  // a ccsim algorithm name
  Protocol protocol = Protocol::simple;
  int channels = 1;
  std::optional<double> estimate_us;  // NCCL's own time estimate, when its model covers the call
};
// Whether NCCL may run this call with NVLS or NVLS tree (enqueue.cc: nvlsSupport requires
// ncclNvlsSupported(op, type), all_gather aside): sum, min and max of 32/64-bit integers, half and
// bfloat16; sum only of float and double; no 8-bit types, no prod, and no avg (NCCL runs avg as a
// premultiplied or post-divided sum, which multimem.ld_reduce has no form of).
bool nvls_supported(const CollectiveSpec& spec);
// Whether NCCL may run this call with CollNet (enqueue.cc ncclGetCollNetSupport: the plugin's
// support for the op, avg taken as a sum): sum, min, max and avg; not prod (nor ccsim's lor).
bool collnet_supported(const CollectiveSpec& spec);
// The communicator as NCCL's model sees it for one call: nvlsSupport and collNetSupport also ask
// the call's op and type.
System for_call(const System& system, const CollectiveSpec& spec);

// What NCCL would run for this call. Point-to-point collectives (alltoall, gather, scatter,
// sendrecv) get direct sends with Simple over the p2p channels.
Choice choose(const System& s, const CollectiveSpec& spec);

}  // namespace ccsim::nccl
