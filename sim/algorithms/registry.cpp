#include "sim/algorithms/registry.hpp"

#include <algorithm>
#include <numeric>

#include "sim/algorithms/binomial.hpp"
#include "sim/algorithms/bruck.hpp"
#include "sim/algorithms/collnet.hpp"
#include "sim/algorithms/direct.hpp"
#include "sim/algorithms/recursive.hpp"
#include "sim/algorithms/hierarchical.hpp"
#include "sim/algorithms/nvls.hpp"
#include "sim/algorithms/pat.hpp"
#include "sim/algorithms/pipeline.hpp"
#include "sim/algorithms/ring.hpp"
#include "sim/algorithms/tree.hpp"
#include "sim/error.hpp"

namespace ccsim::algo {

bool Algorithm::supports(CollectiveKind kind) const {
  return std::find(collectives.begin(), collectives.end(), kind) != collectives.end();
}

namespace {

// Smallest p dividing the channel count with ring(c) == ring(c mod p) for every channel.
int ring_period(const AlgorithmOptions& o) {
  if (o.rings.empty()) return 1;
  for (int p = 1; p < o.channels; ++p) {
    if (o.channels % p != 0) continue;
    bool repeats = true;
    for (int c = p; c < o.channels && repeats; ++c)
      repeats = o.rings[static_cast<std::size_t>(c)] == o.rings[static_cast<std::size_t>(c % p)];
    if (repeats) return p;
  }
  return o.channels;
}

// A tree's channel c follows ring c's chain; all_reduce also alternates the two trees (c mod 2)
// and rotates the chain's head over the node's GPUs (c mod ppn).
int tree_period(const CollectiveSpec& spec, const AlgorithmOptions& o) {
  const int p = ring_period(o);
  if (spec.kind != CollectiveKind::all_reduce) return p;
  return std::lcm(std::lcm(p, 2), ranks_per_node(spec, o, "tree"));
}

// Channels after which an algorithm's channels repeat exactly under these options; 0 where they
// are not known to (the algorithms NCCL does not duplicate).
int channel_period(const std::string& algorithm, const CollectiveSpec& spec, const AlgorithmOptions& o) {
  if (algorithm == "ring") return ring_period(o);
  if (algorithm == "tree") return tree_period(spec, o);
  // Point-to-point exchanges give every channel the same peers in the same order, each its own
  // slice of every block (channel_part): one stream of all the blocks times them the same (within
  // 0.1% for every collective and protocol on five machines) with a channel's share of SimGrid
  // flows. Bruck, binomial and recursive doubling send a channel's slices of several blocks as
  // separate pieces that pipeline; folded, they would become one message that pays its network
  // latency after the whole (up to 30% slower across nodes), so they keep their channels.
  if (algorithm == "direct" || algorithm == "pairwise") return 1;
  // NVLS and CollNet direct channels differ only in their slice of the data; nvls_tree's also
  // alternate the two trees across nodes (channel mod 2).
  if (algorithm == "nvls" || algorithm == "collnet_direct") return 1;
  // CollNet chain channel c leads with GPU c mod ppn (its NIC).
  if (algorithm == "collnet_chain") return ranks_per_node(spec, o, "collnet_chain");
  if (algorithm == "nvls_tree") return ranks_per_node(spec, o, "nvls_tree") < spec.nranks ? 2 : 1;
  return 0;
}

}  // namespace

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> all = {
      {"ring",
       "NCCL's ring: data split over channels, each pipelined in chunks around its ring "
       "(all_reduce: N-1 reduce-scatter then N-1 all-gather steps per chunk; broadcast/reduce: a chain "
       "from/to the root)",
       {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather,
        CollectiveKind::broadcast, CollectiveKind::reduce},
       ring},
      {"direct",
       "every rank sends to every peer at once, then receives (NCCL p2p all-to-all; one-shot all_reduce: "
       "the whole buffer to every peer); sendrecv sends to rank+1",
       {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather,
        CollectiveKind::alltoall, CollectiveKind::broadcast, CollectiveKind::reduce, CollectiveKind::gather,
        CollectiveKind::scatter, CollectiveKind::sendrecv},
       direct},
      {"pairwise",
       "N-1 rounds, one peer per round: partner rank XOR k for a power-of-two N, else send to rank+k and "
       "receive from rank-k (MPI pairwise exchange)",
       {CollectiveKind::alltoall, CollectiveKind::all_gather},
       pairwise},
      {"recursive_doubling",
       "log2(N) rounds exchanging everything held with rank XOR 2^k; non-power-of-two N folded first (MPICH)",
       {CollectiveKind::all_reduce, CollectiveKind::all_gather},
       recursive_doubling},
      {"halving_doubling",
       "Rabenseifner: reduce-scatter by recursive halving, all-gather by recursive doubling; non-power-of-two "
       "N folded first",
       {CollectiveKind::all_reduce},
       halving_doubling},
      {"binomial",
       "binomial tree from/to any root, ceil(log2 N) rounds, blocking sends (MPICH)",
       {CollectiveKind::broadcast, CollectiveKind::reduce, CollectiveKind::gather, CollectiveKind::scatter},
       binomial},
      {"bruck",
       "Bruck: ceil(log2 N) rounds for any N, blocks forwarded by rank distance 2^k",
       {CollectiveKind::all_gather, CollectiveKind::alltoall},
       bruck},
      {"pat",
       "PAT (parallel aggregated trees): reversed-dimension Bruck all_gather, farthest first, and its "
       "transpose for reduce_scatter; ceil(log2 N) aggregated messages per rank",
       {CollectiveKind::all_gather, CollectiveKind::reduce_scatter},
       pat},
      {"tree",
       "NCCL's tree: a chain inside each node and a double binary tree across nodes; all_reduce reduces up "
       "and broadcasts down concurrently, chunk by chunk; broadcast and reduce use one tree from the root",
       {CollectiveKind::all_reduce, CollectiveKind::broadcast, CollectiveKind::reduce},
       tree,
       true,
       "any; nodes from the topology (GPUs sharing a node form the chain)"},
      {"nvls",
       "NVLink SHARP: the NVSwitch reduces each head's part for it and multicasts the result; sum, min, "
       "max, avg",
       {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather},
       nvls,
       true,
       "one node whose NVSwitches reduce and multicast (dgx-h100, nvswitch-flat)"},
      {"nvls_tree",
       "NVLS inside each node, a double binary tree across nodes among the GPUs heading the same part, "
       "NVLS multicast back; sum, min, max, avg",
       {CollectiveKind::all_reduce},
       nvls_tree,
       true,
       "nodes whose NVSwitches reduce and multicast (dgx-h100 --nodes N)"},
      {"hierarchical",
       "reduce-scatter inside each node, all_reduce across nodes, all-gather inside each node; each level "
       "any algorithm with one stream per channel (--levels intra,inter; default ring,ring)",
       {CollectiveKind::all_reduce},
       hierarchical,
       true,
       "any; nodes from the topology"},
      {"collnet_direct",
       "CollNet direct (SHARP): GPUs scatter parts to the node's heads over NVLink, each head reduces and "
       "exchanges through its own NIC with its rail's switch, then broadcasts back",
       {CollectiveKind::all_reduce},
       collnet_direct,
       true,
       "nodes of at most 8 GPUs, one NIC per GPU, SHARP-capable network switches (--sharp)"},
      {"collnet_chain",
       "CollNet chain (SHARP): a chain inside each node reduces to the channel's head, which exchanges with "
       "the network switch; the result runs back down the chain",
       {CollectiveKind::all_reduce},
       collnet_chain,
       true,
       "nodes of at most 8 GPUs with NICs, SHARP-capable network switches (--sharp)"},
  };
  return all;
}

std::string default_algorithm(CollectiveKind kind) {
  return find_algorithm("ring").supports(kind) ? "ring" : "direct";
}

const Algorithm& find_algorithm(const std::string& name) {
  for (const auto& a : algorithms())
    if (a.name == name) return a;
  std::string known;
  for (const auto& a : algorithms()) known += (known.empty() ? "" : ", ") + a.name;
  throw Error("unknown algorithm \"" + name + "\" (known: " + known + ")");
}

Schedule compile(const std::string& algorithm, const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const Algorithm& a = find_algorithm(algorithm);
  if (!a.supports(spec.kind)) {
    std::string served;
    for (auto k : a.collectives) served += (served.empty() ? "" : ", ") + std::string(to_string(k));
    throw Error("algorithm " + a.name + " does not implement " + std::string(to_string(spec.kind)) +
                " (it serves: " + served + ")");
  }
  spec.validate();
  if (options.channels < 1) throw Error("channel count must be at least 1, got " + std::to_string(options.channels));
  if (options.chunk_bytes == 0) throw Error("chunk size must be positive");
  if (!options.rings.empty()) {
    if (static_cast<int>(options.rings.size()) < options.channels)
      throw Error("ring orders given for " + std::to_string(options.rings.size()) + " channels, " +
                  std::to_string(options.channels) + " needed");
    for (const auto& ring : options.rings) {
      std::vector<int> sorted = ring;
      std::sort(sorted.begin(), sorted.end());
      for (int i = 0; i < spec.nranks; ++i)
        if (static_cast<int>(sorted.size()) != spec.nranks || sorted[static_cast<std::size_t>(i)] != i)
          throw Error("a ring order must list every rank 0.." + std::to_string(spec.nranks - 1) + " once");
    }
  }
  if (options.blocks < 1) throw Error("blocks per channel must be at least 1, got " + std::to_string(options.blocks));
  Schedule s = a.generate(spec, options);
  s.blocks_per_stream = options.blocks;
  s.validate();
  return s;
}

AlgorithmOptions fold_copies(const std::string& algorithm, const CollectiveSpec& spec, const AlgorithmOptions& options) {
  if (options.blocks != 1 || options.channels < 2) return options;
  if (!options.rings.empty() && static_cast<int>(options.rings.size()) < options.channels) return options;  // compile says why
  const int p = channel_period(algorithm, spec, options);
  if (p < 1 || p >= options.channels || options.channels % p != 0) return options;
  AlgorithmOptions folded = options;
  folded.blocks = options.channels / p;
  folded.channels = p;
  folded.chunk_bytes = options.chunk_bytes * static_cast<Bytes>(folded.blocks);
  if (!folded.rings.empty()) folded.rings.resize(static_cast<std::size_t>(p));
  return folded;
}

}  // namespace ccsim::algo
