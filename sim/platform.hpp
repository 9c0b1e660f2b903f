#pragma once
// The simulated network for one schedule: the links its messages cross and the route of every rank
// pair it uses, derived from the topology's router and the model's link efficiencies. Engines build
// their platform from this plan; nothing here knows SimGrid.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/model.hpp"
#include "sim/schedule.hpp"
#include "sim/timeline.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim {

struct PlatformLink {
  std::string forward_name;   // "gpu0->nvswitch0"
  std::string backward_name;  // "nvswitch0->gpu0"
  double bandwidth_bytes_per_s = 0;  // per direction, after protocol efficiency
};

struct PlatformRoute {
  std::vector<std::pair<std::size_t, bool>> hops;  // (index into links, forward?)
  LatencyClass latency_class = LatencyClass::nvlink;
  double extra_latency_s = 0;  // switches on the way (topology what-ifs), the network transport's message latency
  double flush_latency_s = 0;  // a Simple message's further wait across the network (NetTransport)
  bool direct_nvlink = false;  // one NVLink hop between two GPUs: no NVSwitch on the way
  bool via_host = false;       // through host memory: NCCL's SHM transport, or a network receive without GPUDirect RDMA
};

class PlatformPlan {
 public:
  // Ranks map to the topology's GPUs in order; Error if the schedule has more ranks than GPUs.
  static PlatformPlan build(const Schedule& schedule, const topo::Topology& topology, const Model& model);

  const std::vector<PlatformLink>& links() const { return links_; }
  const std::map<std::pair<int, int>, PlatformRoute>& routes() const { return routes_; }
  const PlatformRoute& route(int src_rank, int dst_rank) const;
  int ranks() const { return ranks_; }
  int endpoints() const { return endpoints_; }  // ranks, then in-network switches
  // The GPU side of one network step (NCCL's network post overhead on this host, by protocol).
  double net_post_overhead_s(Protocol p) const { return net_post_overhead_s_[static_cast<int>(p)]; }

  // Wire bytes each link direction carries when the schedule runs (independent of timing).
  std::vector<LinkRecord> traffic(const Schedule& schedule) const;
  // Wire bytes of one send of `rank`: the protocol's format, and NVLS's multimem overhead when
  // either end is an NVLS switch.
  std::uint64_t send_wire_bytes(const Schedule& schedule, int rank, const Step& step) const;

 private:
  int ranks_ = 0;
  int endpoints_ = 0;
  double nvls_wire_factor_ = 1;
  double net_post_overhead_s_[3] = {};
  std::vector<PlatformLink> links_;
  std::map<std::pair<int, int>, PlatformRoute> routes_;
};

// Bytes on the wire for a step's data under its protocol.
std::uint64_t wire_bytes(const Step& step, std::size_t element_bytes);

}  // namespace ccsim
