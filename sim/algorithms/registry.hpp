#pragma once
// Every collective algorithm by name: which collectives it serves and how it compiles a call into
// a schedule. Algorithms see core types only (never the engine or SimGrid).
#include <functional>
#include <string>
#include <vector>

#include "sim/collective.hpp"
#include "sim/schedule.hpp"
#include "sim/units.hpp"

namespace ccsim::algo {

struct AlgorithmOptions {
  Protocol protocol = Protocol::simple;
  int channels = 1;
  Bytes chunk_bytes = 0;  // data per pipelined step of one channel
  int ranks_per_node = 0;  // consecutive ranks that share a node (tree, hierarchical); 0: one node
  bool nvls = false;       // the GPUs' NVSwitches reduce and multicast (NVLS)
  bool sharp = false;      // the network switches reduce (InfiniBand SHARP: CollNet)
  std::vector<std::string> levels;  // hierarchical: algorithm inside a node, then across nodes
  // Ring order per channel (rank at each ring position); empty means 0, 1, ..., N-1 everywhere.
  std::vector<std::vector<int>> rings;
  // NCCL thread blocks each channel stands for. NCCL runs copies of the channels its search found,
  // on the same rings (ncclTopoPostset); k identical blocks move k times one block's data at k
  // times its rate, so they may run as one stream (fold_copies). Pieces of a hop and the engine's
  // per-block rate cap scale by it.
  int blocks = 1;
};

struct Algorithm {
  std::string name;
  std::string description;
  std::vector<CollectiveKind> collectives;
  std::function<Schedule(const CollectiveSpec&, const AlgorithmOptions&)> generate;
  bool node_aware = false;  // its schedule depends on AlgorithmOptions::ranks_per_node
  std::string topologies = "any";  // what it needs of the machine

  bool supports(CollectiveKind kind) const;
};

const std::vector<Algorithm>& algorithms();
// What `ccsim perf` runs when no algorithm is named: NCCL's ring for the collectives it has a ring
// for, and direct point-to-point for those NCCL builds from send/recv (alltoall, gather, scatter,
// sendrecv; reference/nccl-model.md §1.1).
std::string default_algorithm(CollectiveKind kind);
// Error naming the known algorithms when `name` is unknown.
const Algorithm& find_algorithm(const std::string& name);
// Validates the spec and options, refuses (Error with the reason) a collective the algorithm does
// not serve, generates, and validates the resulting schedule.
Schedule compile(const std::string& algorithm, const CollectiveSpec& spec, const AlgorithmOptions& options);
// The same call with identical channels run as one stream of several blocks, where the algorithm's
// channels repeat (ring and tree under NCCL's channel duplication; NVLS, CollNet and point-to-point
// channels, alike but for their slice of the data): the same times, with a fraction of the streams
// to simulate. A channel's chunk grows with its blocks, so every loop moves what it did. Options
// come back unchanged where nothing repeats.
AlgorithmOptions fold_copies(const std::string& algorithm, const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
