#pragma once
// Bandwidth lower bounds on the time of a collective: no algorithm, whatever its schedule, can beat
// them on this machine. Two limits, the larger wins:
//  - injection: every GPU must send and receive a minimum volume (all_reduce 2(N-1)/N S without
//    in-network reduction) through the links it has, all of them together, per direction;
//  - bisection: the data one half of the communicator needs from the other half must cross the
//    minimum cut between them (Boost.Graph max-flow over every link, per direction).
// Latency is ignored: the bounds are for large messages, and say how far an algorithm is from what
// the wires allow (efficiency = bound time / achieved time).
#include <string>
#include <string_view>
#include <vector>

#include "sim/collective.hpp"
#include "sim/model.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim {

// What bounds data movement for a communicator of the first `nranks` GPUs of a topology. Depends on
// the machine only: compute it once per machine and use it for every call.
struct Capacity {
  std::vector<double> injection_bytes_per_s;  // per rank, per direction: all its links together
  std::vector<bool> first_side;               // per rank: on the first side of the cut
  double cut_bytes_per_s = 0;                 // max flow across the cut, per direction; 0: no cut
};

// The cut splits the nodes the communicator spans into a first and a second half; within one node,
// it splits the ranks in halves (a PCIe box: the socket link). Links are symmetric per direction, so
// one max-flow serves both directions. Bandwidths are the model's effective ones
// (Topology::effective_bandwidth).
Capacity capacity(const topo::Topology& topology, const Model& model, int nranks);

struct Bound {
  double injection_s = 0;
  double bisection_s = 0;
  double time_s() const { return injection_s > bisection_s ? injection_s : bisection_s; }
  std::string_view limiter() const { return bisection_s > injection_s ? "bisection" : "injection"; }
};

// `in_network_reduction`: the algorithm reduces in a switch (NVLS, SHARP), so each GPU sends its
// data once instead of 2(N-1)/N times; bound such algorithms with it, the others without.
Bound lower_bound(const CollectiveSpec& spec, const Capacity& capacity, bool in_network_reduction);

// Algorithms whose schedules reduce in a switch (nvls, nvls_tree, collnet_*).
bool reduces_in_network(const std::string& algorithm);

}  // namespace ccsim
