#pragma once
// Composition: a schedule built from schedules of sub-communicators, run one after another. Each
// phase's sub-schedule is compiled by any registered algorithm with one channel, its ranks mapped
// to global ranks, its buffers to regions of the global buffers, and its steps appended to the
// global streams of the phase's channel, so program order sequences the phases. Callers give each
// channel its own slice of the data, so no phase of one channel touches another channel's data;
// scratch is the composer's to place: each channel gets an area of its own (channels run at once).
#include <functional>

#include "sim/algorithms/pipeline.hpp"
#include "sim/algorithms/registry.hpp"

namespace ccsim::algo {

struct Phase {
  std::string algorithm;
  CollectiveSpec spec;             // of the sub-communicator
  std::vector<int> ranks;          // sub rank i is global rank ranks[i]
  int channel = 0;                 // the global channel whose streams run it
  // Where a sub rank's buffer element lies in the global rank's memory.
  std::function<Region(int sub_rank, BufferId buffer)> base;
  bool keep_finalize = true;       // false: the sub-op's last touches are left to the caller
  // Consecutive sub ranks that share a node: 0 when all do (a phase inside a node), 1 when each is
  // on a node of its own (a phase across nodes). Node-aware algorithms and the hops that stream
  // line by line (pipeline.hpp, Hops) follow it.
  int ranks_per_node = 0;
};

class Composer {
 public:
  Composer(const CollectiveSpec& spec, const AlgorithmOptions& options, std::string name);
  // Compiles and appends a phase. Error when the sub-algorithm refuses, or runs several streams per
  // channel or in-network switches (those cannot be sequenced by program order alone).
  void add(const Phase& phase);
  // A local step on a global rank's stream of channel c.
  StepWriter writer(int rank, int channel);
  Schedule take();

 private:
  Stream& stream(int rank, int channel);
  Schedule schedule_;
  AlgorithmOptions options_;
  std::vector<int> rank_phases_;  // per rank: the highest phase number among the phases it is in
  std::uint64_t channel_scratch_ = 0;  // elements: the most scratch any phase asked for
};

}  // namespace ccsim::algo
