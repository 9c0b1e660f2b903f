#include "sim/topology/rings.hpp"

#include "sim/topology/paths.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <tuple>

namespace ccsim::topo {

namespace {

struct Score {
  double bottleneck = 0;  // the ring's narrowest hop
  int at_bottleneck = 0;  // how many hops are that narrow (fewer is better: fewer socket crossings)
  double total = 0;
  bool better_than(const Score& o) const {
    if (bottleneck != o.bottleneck) return bottleneck > o.bottleneck;
    if (at_bottleneck != o.at_bottleneck) return at_bottleneck < o.at_bottleneck;
    return total > o.total;
  }
  bool same_as(const Score& o) const {
    return bottleneck == o.bottleneck && at_bottleneck == o.at_bottleneck && total == o.total;
  }
};

// Candidate ring orders over the GPUs of node 0, by exhaustive search from GPU 0 (small nodes
// only): the best Hamiltonian cycles first. Empty when every pair is equally connected through a
// switch (any order is then as good: each GPU's one port carries the ring whatever its
// neighbours). A uniform mesh of direct links keeps all its cycles, so that channels can spread
// over different links. When the best cycles run over direct NVLinks only but the mesh has more
// (a DGX-1's single links next to its double ones), every all-NVLink cycle follows them, and
// `by_capacity` says to share channels out by link width: NCCL's search keeps adding rings at a
// lower speed until every lane carries one (a DGX-1 V100 gets 6 rings over all 6 lanes).
struct NodeCycles {
  std::vector<std::vector<int>> cycles;
  std::vector<std::vector<double>> bandwidth;  // [a][b]: the route's, for sharing by capacity
  bool by_capacity = false;
};

NodeCycles best_node_cycles(const Topology& t, int ppn) {
  std::vector<std::vector<double>> bw(static_cast<std::size_t>(ppn), std::vector<double>(static_cast<std::size_t>(ppn), 0));
  std::vector<std::vector<bool>> nvlink(static_cast<std::size_t>(ppn), std::vector<bool>(static_cast<std::size_t>(ppn), false));
  bool uniform = true, direct = true;
  for (int a = 0; a < ppn; ++a)
    for (int b = 0; b < ppn; ++b)
      if (a != b) {
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        bw[ua][ub] = route_bandwidth(t, ua, ub, false);
        uniform &= bw[ua][ub] == bw[0][1];
        const Route r = t.route(ua, ub);
        direct &= r.hops.size() == 1;
        nvlink[ua][ub] = r.hops.size() == 1 && r.latency_class == LatencyClass::nvlink && !r.through_gpu;
      }
  if ((uniform && !direct) || ppn < 3 || ppn > 10) return {};
  auto all_nvlink = [&](const std::vector<int>& cycle) {
    for (std::size_t i = 0; i < cycle.size(); ++i)
      if (!nvlink[static_cast<std::size_t>(cycle[i])][static_cast<std::size_t>(cycle[(i + 1) % cycle.size()])]) return false;
    return true;
  };
  std::vector<std::vector<int>> best, mesh;
  Score best_score;
  std::vector<int> path{0};
  std::vector<bool> used(static_cast<std::size_t>(ppn), false);
  used[0] = true;
  std::function<void()> search = [&] {
    if (static_cast<int>(path.size()) == ppn) {
      if (all_nvlink(path)) mesh.push_back(path);
      Score s{1e300, 0, 0};
      std::vector<double> hops;
      for (int i = 0; i < ppn; ++i)
        hops.push_back(bw[static_cast<std::size_t>(path[static_cast<std::size_t>(i)])]
                         [static_cast<std::size_t>(path[static_cast<std::size_t>((i + 1) % ppn)])]);
      for (double h : hops) s.bottleneck = std::min(s.bottleneck, h), s.total += h;
      for (double h : hops) s.at_bottleneck += h == s.bottleneck;
      if (best.empty() || s.better_than(best_score)) {
        best = {path};
        best_score = s;
      } else if (s.same_as(best_score)) {
        best.push_back(path);
      }
      return;
    }
    for (int g = 1; g < ppn; ++g)
      if (!used[static_cast<std::size_t>(g)]) {
        used[static_cast<std::size_t>(g)] = true;
        path.push_back(g);
        search();
        path.pop_back();
        used[static_cast<std::size_t>(g)] = false;
      }
  };
  search();
  NodeCycles out{best, bw, false};
  if (!best.empty() && all_nvlink(best.front()) && mesh.size() > best.size()) {
    for (auto& cycle : mesh)
      if (std::find(best.begin(), best.end(), cycle) == best.end()) out.cycles.push_back(std::move(cycle));
    out.by_capacity = true;
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> rings(const Topology& topology, int nranks, int channels) {
  const int ppn = std::min(topology.gpus_per_node(), nranks);
  const int nodes = nranks / ppn;
  const NodeCycles node = best_node_cycles(topology, ppn);
  const auto& cycles = node.cycles;
  std::vector<std::vector<int>> out;
  // NCCL's search takes each channel's bandwidth off the links it uses before looking for the next:
  // each channel takes a candidate cycle whose links the earlier channels used least (per unit of
  // width when sharing by capacity). least_used() returns every such cycle, best first.
  std::vector<std::vector<int>> used(static_cast<std::size_t>(ppn), std::vector<int>(static_cast<std::size_t>(ppn), 0));
  auto least_used = [&] {
    std::vector<std::size_t> best;
    std::pair<double, double> best_load{1e300, 1e300};
    for (std::size_t i = 0; i < cycles.size(); ++i) {
      std::pair<double, double> load{0, 0};  // (most-used link, total use) of the cycle's directed links
      for (std::size_t k = 0; k < cycles[i].size(); ++k) {
        const auto a = static_cast<std::size_t>(cycles[i][k]), b = static_cast<std::size_t>(cycles[i][(k + 1) % cycles[i].size()]);
        const double u = node.by_capacity ? (used[a][b] + 1) / node.bandwidth[a][b] : used[a][b];
        load.first = std::max(load.first, u);
        load.second += u;
      }
      if (load < best_load) best.clear(), best_load = load;
      if (load == best_load) best.push_back(i);
    }
    return best;
  };
  auto take = [&](const std::vector<int>& cycle) {
    for (std::size_t k = 0; k < cycle.size(); ++k)
      ++used[static_cast<std::size_t>(cycle[k])][static_cast<std::size_t>(cycle[(k + 1) % cycle.size()])];
  };
  // Across nodes a channel leaves node 0 through the NIC of its last GPU and comes back through the
  // NIC of its first. When several GPUs share a NIC (4 NICs for 8 GPUs), rotating the start GPU by
  // the channel index would pile channels onto a few NICs; instead each channel takes the rotation
  // whose NICs the earlier channels left least loaded, per direction, as NCCL's search spreads
  // channels over the NICs. Among cycles the NVLinks rate alike (a uniform mesh has several), it
  // takes the one whose rotation does that best: with one NIC per GPU, a cycle fixes which pairs of
  // NICs can be a channel's exit and entry.
  std::vector<DeviceId> nic;
  if (nodes > 1)
    for (int i = 0; i < ppn; ++i) nic.push_back(topology.nic_of(static_cast<std::size_t>(i)));
  std::map<DeviceId, int> out_load, back_load;  // channels leaving node 0 / coming back, per NIC
  // Starting at order[s], node 0 is left by the NIC of order[s - 1] and re-entered by order[s]'s.
  auto exit_nic = [&](const std::vector<int>& order, int s) {
    return nic[static_cast<std::size_t>(order[static_cast<std::size_t>((s + ppn - 1) % ppn)])];
  };
  auto entry_nic = [&](const std::vector<int>& order, int s) { return nic[static_cast<std::size_t>(order[static_cast<std::size_t>(s)])]; };
  // The least loaded rotation of `order` for channel c (with one node: c's), and its load.
  auto rotation = [&](int c, const std::vector<int>& order) {
    std::pair<int, std::pair<int, int>> pick{c % ppn, {INT_MAX, INT_MAX}};
    for (int k = 0; k < ppn && !nic.empty(); ++k) {
      const int s = (c + k) % ppn;
      const int out = out_load[exit_nic(order, s)], back = back_load[entry_nic(order, s)];
      const std::pair<int, int> load{std::max(out, back), out + back};
      if (load < pick.second) pick = {s, load};
    }
    return pick;
  };
  std::vector<int> identity(static_cast<std::size_t>(ppn));
  for (int i = 0; i < ppn; ++i) identity[static_cast<std::size_t>(i)] = i;
  for (int c = 0; c < channels; ++c) {
    std::vector<const std::vector<int>*> candidates{&identity};
    if (!cycles.empty()) {
      candidates.clear();
      for (const std::size_t i : least_used()) candidates.push_back(&cycles[i]);
    }
    // One node: the first candidate. Across nodes: the first whose rotation loads the NICs least.
    const std::vector<int>* best = candidates.front();
    auto [start, load] = rotation(c, *best);
    for (std::size_t k = 1; k < candidates.size() && !nic.empty(); ++k) {
      const auto r = rotation(c, *candidates[k]);
      if (r.second < load) best = candidates[k], std::tie(start, load) = r;
    }
    const std::vector<int>& order = *best;
    if (!cycles.empty()) take(order);
    if (!nic.empty()) {
      ++out_load[exit_nic(order, start)];
      ++back_load[entry_nic(order, start)];
    }
    std::vector<int> ring;
    for (int node = 0; node < nodes; ++node)
      for (int k = 0; k < ppn; ++k) {
        const int step = node % 2 == 0 ? k : ppn - 1 - k;  // snake: exit and entry GPU share a rail
        ring.push_back(node * ppn + order[static_cast<std::size_t>((start + step) % ppn)]);
      }
    for (int r = nodes * ppn; r < nranks; ++r) ring.push_back(r);  // ranks of a partial last node
    out.push_back(std::move(ring));
  }
  return out;
}

}  // namespace ccsim::topo
