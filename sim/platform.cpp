#include "sim/platform.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/error.hpp"
#include "sim/nccl_system.hpp"

namespace ccsim {

std::uint64_t wire_bytes(const Step& step, std::size_t element_bytes) {
  const double data = static_cast<double>(step.count() * element_bytes);
  return static_cast<std::uint64_t>(std::ceil(data * wire_bytes_per_data_byte(step.protocol)));
}

PlatformPlan PlatformPlan::build(const Schedule& schedule, const topo::Topology& topology, const Model& model) {
  PlatformPlan plan;
  plan.ranks_ = schedule.spec.nranks;
  plan.endpoints_ = schedule.endpoint_count();
  // NVLS-tree kernels give their scatter and gather roles fewer warps than single-node NVLS
  // (model parameter nvls_efficiency.tree says why), so their switch traffic has a rate of its own.
  plan.nvls_wire_factor_ = 1 / model.get(schedule.algorithm == "nvls_tree" ? "nvls_efficiency.tree" : "nvls_efficiency");
  const bool amd = nccl::has_amd_cpu(topology);
  const double post = model.get(amd ? "net_post_overhead_us.amd" : "net_post_overhead_us") * 1e-6;
  for (auto p : all_protocols()) plan.net_post_overhead_s_[static_cast<int>(p)] = p == Protocol::simple ? 3 * post : post;
  if (static_cast<std::size_t>(plan.ranks_) > topology.gpu_count())
    throw Error("a " + std::to_string(plan.ranks_) + "-rank collective does not fit topology " + topology.name() +
                " with " + std::to_string(topology.gpu_count()) + " GPUs");

  std::set<std::pair<int, int>> pairs;
  for (const auto& stream : schedule.streams)
    for (const auto& step : stream.steps)
      if (step.kind == StepKind::send) pairs.insert({stream.rank, step.peer});

  // NCCL's collective algorithms cross nodes on the NICs their graphs give each channel; every
  // other algorithm is made of point-to-point operations, which take the peer's rail (PXN).
  const bool point_to_point = schedule.algorithm != "hierarchical" && !nccl::is_nccl_algo(schedule.algorithm);

  // One platform link per topology link, or per group of parallel links a hop stripes over.
  std::map<std::vector<topo::LinkId>, std::size_t> link_index;
  auto device_name = [&](topo::DeviceId d) { return topology.device(d).name; };
  // A GPU reaches an NVLS switch endpoint through its NVLink port; the switch answers back through it.
  auto route_between = [&](int src, int dst) {
    if (!schedule.is_switch(src) && !schedule.is_switch(dst))
      return point_to_point ? topology.p2p_operation_route(static_cast<std::size_t>(src), static_cast<std::size_t>(dst),
                                                           static_cast<std::size_t>(plan.ranks_))
                            : topology.route(static_cast<std::size_t>(src), static_cast<std::size_t>(dst));
    if (schedule.is_switch(src) && schedule.is_switch(dst))
      throw Error("schedule " + schedule.algorithm + ": a switch endpoint cannot send to another switch");
    const int gpu = schedule.is_switch(src) ? dst : src;
    const SwitchEndpoint& sw = schedule.switches[static_cast<std::size_t>((schedule.is_switch(src) ? src : dst) - schedule.spec.nranks)];
    topo::Route r;
    if (sw.kind == SwitchEndpoint::Kind::nvls) r.hops.push_back(topology.nvls_port(static_cast<std::size_t>(gpu)));
    else r = topology.route_to_sharp(static_cast<std::size_t>(gpu));
    if (schedule.is_switch(src)) {  // the same links, walked back from the switch
      std::vector<topo::RouteHop> back;
      topo::DeviceId at = topology.gpu(static_cast<std::size_t>(gpu));
      for (const auto& hop : r.hops) {  // find each hop's far end, walking from the GPU
        const topo::Link& l = topology.link(hop.links.front());
        const topo::DeviceId far = hop.links.size() > 1 ? (l.a == at ? l.b : l.a) : (l.a == hop.from ? l.b : l.a);
        back.insert(back.begin(), topo::RouteHop{hop.links, far});
        at = far;
      }
      r.hops = back;
    }
    return r;
  };
  const topo::NetTransport transport = topology.net_transport();
  const double flush_s = nccl::flushes_network_receives(topology) ? transport.flush_latency_s : 0.0;
  std::map<std::pair<int, int>, std::size_t> cpu_pairs;  // GPU pairs that P2P through a CPU
  std::map<int, std::size_t> host_loads;                 // GPUs that load from host memory
  for (const auto& [src, dst] : pairs) {
    const topo::Route route = route_between(src, dst);
    PlatformRoute pr;
    pr.latency_class = route.latency_class;
    pr.extra_latency_s = route.device_latency_s;
    pr.direct_nvlink = route.latency_class == LatencyClass::nvlink && route.hops.size() == 1 && !route.through_gpu &&
                       !schedule.is_switch(src) && !schedule.is_switch(dst);
    if (route.latency_class == LatencyClass::net) {
      pr.extra_latency_s += transport.message_latency_s;
      pr.flush_latency_s = flush_s;
    }
    for (const auto& hop : route.hops) {
      std::vector<topo::LinkId> key = hop.links;
      std::sort(key.begin(), key.end());
      // The device every link of the hop touches: "forward" leaves it.
      const topo::Link& first = topology.link(key.front());
      topo::DeviceId common = first.a;
      if (key.size() > 1) {
        const topo::Link& second = topology.link(key[1]);
        common = (first.a == second.a || first.a == second.b) ? first.a : first.b;
      }
      auto [it, fresh] = link_index.try_emplace(key, plan.links_.size());
      if (fresh) {
        PlatformLink pl;
        std::string far;
        for (auto l : key) {
          const topo::Link& link = topology.link(l);
          const topo::DeviceId other = link.a == common ? link.b : link.a;
          far += (far.empty() ? "" : ",") + device_name(other);
          pl.bandwidth_bytes_per_s += topology.effective_bandwidth(l, model);
        }
        if (key.size() > 1) far = "[" + far + "]";
        pl.forward_name = device_name(common) + "->" + far;
        pl.backward_name = far + "->" + device_name(common);
        plan.links_.push_back(pl);
      }
      pr.hops.emplace_back(it->second, hop.from == common);
    }
    if (schedule.is_switch(src) || schedule.is_switch(dst)) {
      // switch endpoints: neither P2P through a CPU nor host memory
    } else if (route.shm || route.host_leg != SIZE_MAX) {
      // Through host memory (SHM, or a network receive without GPUDirect RDMA) the receiver's SM
      // loads set the pace: a fraction of the link into the GPU (shm_bandwidth_factor), shared by
      // everything the GPU loads from host memory, whichever peer it comes from.
      pr.via_host = true;
      const double into_gpu = plan.links_[pr.hops.back().first].bandwidth_bytes_per_s;
      auto [it, fresh] = host_loads.try_emplace(dst, plan.links_.size());
      if (fresh) {
        PlatformLink pl;
        pl.bandwidth_bytes_per_s = into_gpu * model.get("shm_bandwidth_factor");
        pl.forward_name = device_name(topology.gpu(static_cast<std::size_t>(dst))) + " loads from host memory";
        pl.backward_name = pl.forward_name + " (unused)";
        plan.links_.push_back(pl);
      }
      pr.hops.emplace_back(it->second, true);
    } else if (route.via_cpu) {
      // NCCL rates P2P through an Intel CPU at a fraction of the narrowest link (§3.1): what the CPU
      // forwards between two GPUs, each direction shared by every transfer between them. A socket
      // link may forward peer writes slower than its width (Link::p2p_fraction).
      double narrowest = 0;
      for (const auto& [link, forward] : pr.hops) {
        const double bw = plan.links_[link].bandwidth_bytes_per_s;
        narrowest = narrowest == 0 ? bw : std::min(narrowest, bw);
      }
      const int lo = std::min(src, dst), hi = std::max(src, dst);
      auto [it, fresh] = cpu_pairs.try_emplace({lo, hi}, plan.links_.size());
      if (fresh) {
        const std::string a = device_name(topology.gpu(static_cast<std::size_t>(lo)));
        const std::string b = device_name(topology.gpu(static_cast<std::size_t>(hi)));
        double across_sockets = 1.0;
        for (const auto& hop : route.hops)
          for (auto l : hop.links) across_sockets = std::min(across_sockets, topology.link(l).p2p_fraction);
        PlatformLink pl;
        pl.bandwidth_bytes_per_s = narrowest * model.cpu_p2p_bandwidth_factor(amd) * across_sockets;
        pl.forward_name = a + "->" + b + " (P2P through the CPU)";
        pl.backward_name = b + "->" + a + " (P2P through the CPU)";
        plan.links_.push_back(pl);
      }
      pr.hops.emplace_back(it->second, src == lo);
    }
    plan.routes_[{src, dst}] = std::move(pr);
  }
  return plan;
}

std::uint64_t PlatformPlan::send_wire_bytes(const Schedule& schedule, int rank, const Step& step) const {
  const std::size_t elem = element_bytes(schedule.spec.type);
  auto nvls = [&](int endpoint) {
    return schedule.is_switch(endpoint) &&
           schedule.switches[static_cast<std::size_t>(endpoint - schedule.spec.nranks)].kind == SwitchEndpoint::Kind::nvls;
  };
  if (nvls_wire_factor_ == 1 || !(nvls(rank) || nvls(step.peer))) return wire_bytes(step, elem);
  const double data = static_cast<double>(step.count() * elem);
  return static_cast<std::uint64_t>(std::ceil(data * wire_bytes_per_data_byte(step.protocol) * nvls_wire_factor_));
}

const PlatformRoute& PlatformPlan::route(int src_rank, int dst_rank) const {
  auto it = routes_.find({src_rank, dst_rank});
  if (it == routes_.end())
    throw Error("no route planned from rank " + std::to_string(src_rank) + " to rank " + std::to_string(dst_rank));
  return it->second;
}

std::vector<LinkRecord> PlatformPlan::traffic(const Schedule& schedule) const {
  std::vector<std::uint64_t> forward(links_.size(), 0), backward(links_.size(), 0);
  for (const auto& stream : schedule.streams)
    for (const auto& step : stream.steps) {
      if (step.kind != StepKind::send) continue;
      const std::uint64_t bytes = send_wire_bytes(schedule, stream.rank, step);
      for (const auto& [link, fwd] : route(stream.rank, step.peer).hops) (fwd ? forward : backward)[link] += bytes;
    }
  std::vector<LinkRecord> records;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    records.push_back({links_[i].forward_name, links_[i].bandwidth_bytes_per_s, forward[i]});
    records.push_back({links_[i].backward_name, links_[i].bandwidth_bytes_per_s, backward[i]});
  }
  return records;
}

}  // namespace ccsim
