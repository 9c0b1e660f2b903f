#include "sim/bounds.hpp"

#include <algorithm>
#include <set>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include "sim/error.hpp"

namespace ccsim {

namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, double,
                    boost::property<boost::edge_residual_capacity_t, double,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

// An arc and its zero-capacity reverse, as push_relabel_max_flow requires.
void add_arc(FlowGraph& g, std::size_t from, std::size_t to, double capacity) {
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  const auto e = boost::add_edge(from, to, g).first;
  const auto r = boost::add_edge(to, from, g).first;
  cap[e] = capacity;
  cap[r] = 0;
  rev[e] = r;
  rev[r] = e;
}

// Max flow from the GPUs of one side to those of the other over every link of the machine, each
// direction of a link an arc of its effective bandwidth. GPUs may forward here: a bound may only
// be looser for it, never wrong.
double max_flow(const topo::Topology& t, const Model& model, const std::vector<topo::DeviceId>& from,
                const std::vector<topo::DeviceId>& to) {
  const std::size_t n = t.devices().size();
  FlowGraph g(n + 2);
  const std::size_t source = n, sink = n + 1;
  double total = 0;
  for (topo::LinkId l = 0; l < t.links().size(); ++l) {
    const double bw = t.effective_bandwidth(l, model);
    add_arc(g, t.link(l).a, t.link(l).b, bw);
    add_arc(g, t.link(l).b, t.link(l).a, bw);
    total += bw;
  }
  // Anything above the sum of all links is unlimited for this graph.
  for (auto d : from) add_arc(g, source, d, 2 * total + 1);
  for (auto d : to) add_arc(g, d, sink, 2 * total + 1);
  return boost::push_relabel_max_flow(g, source, sink);
}

struct Volume {
  double send = 0, receive = 0;
};

// The least a rank must send and receive, whatever the algorithm. S is nccl-tests' size.
Volume rank_volume(const CollectiveSpec& spec, int rank, bool in_network) {
  const double s = static_cast<double>(spec.size_bytes());
  const double n = spec.nranks;
  if (spec.nranks < 2) return {};
  const bool root = rank == spec.root;
  switch (spec.kind) {
    case CollectiveKind::all_reduce: {
      // Without a reducing switch, every byte of the result is a sum computed on some GPU: each
      // rank sends (N-1)/N S to have its share reduced and again to spread the results
      // (Patarasuk & Yuan, JPDC 2009). With one, each rank sends its data once and receives the sum.
      const double v = in_network ? s : 2 * (n - 1) / n * s;
      return {v, v};
    }
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::alltoall: {
      // Every rank needs (or supplies) the N-1 blocks that are not its own; what the ranks send in
      // all they receive in all, so the busiest rank moves at least the average both ways.
      const double v = (n - 1) / n * s;
      return {v, v};
    }
    case CollectiveKind::broadcast: return root ? Volume{s, 0} : Volume{0, s};
    case CollectiveKind::reduce: return root ? Volume{0, s} : Volume{s, 0};
    case CollectiveKind::gather: return root ? Volume{0, (n - 1) / n * s} : Volume{s / n, 0};
    case CollectiveKind::scatter: return root ? Volume{(n - 1) / n * s, 0} : Volume{0, s / n};
    case CollectiveKind::sendrecv: return {s, s};
  }
  return {};
}

// Data that must cross the cut in its busier direction, with k of the N ranks on the first side.
double cut_volume(const CollectiveSpec& spec, const std::vector<bool>& first_side) {
  const double s = static_cast<double>(spec.size_bytes());
  const double n = spec.nranks;
  const double k = static_cast<double>(std::count(first_side.begin(), first_side.end(), true));
  if (k == 0 || k == n) return 0;
  const double root_side = first_side[static_cast<std::size_t>(spec.root)] ? k : n - k;
  switch (spec.kind) {
    // Each side's result depends on every byte of the other side's data: S bytes of information,
    // however reduced, cross each way.
    case CollectiveKind::all_reduce: return s;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather: return std::max(k, n - k) / n * s;
    case CollectiveKind::alltoall: return k * (n - k) / n * s;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce: return s;
    case CollectiveKind::gather:
    case CollectiveKind::scatter: return (n - root_side) / n * s;
    case CollectiveKind::sendrecv: return s;  // rank k-1 sends to rank k, rank N-1 to rank 0
  }
  return 0;
}

}  // namespace

bool reduces_in_network(const std::string& algorithm) {
  return algorithm == "nvls" || algorithm == "nvls_tree" || algorithm == "collnet_direct" || algorithm == "collnet_chain";
}

Capacity capacity(const topo::Topology& t, const Model& model, int nranks) {
  if (nranks < 1 || static_cast<std::size_t>(nranks) > t.gpu_count())
    throw Error("a " + std::to_string(nranks) + "-rank communicator does not fit topology " + t.name());
  Capacity c;
  const auto ranks = static_cast<std::size_t>(nranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    double bw = 0;
    for (auto e : boost::make_iterator_range(boost::out_edges(t.gpu(r), t.graph()))) bw += t.effective_bandwidth(t.graph()[e], model);
    c.injection_bytes_per_s.push_back(bw);
  }
  std::vector<int> nodes;
  for (std::size_t r = 0; r < ranks; ++r) nodes.push_back(t.device(t.gpu(r)).node);
  const std::set<int> node_set(nodes.begin(), nodes.end());
  const std::vector<int> distinct(node_set.begin(), node_set.end());
  const auto half = static_cast<std::ptrdiff_t>(distinct.size() / 2);
  c.first_side.assign(ranks, false);
  for (std::size_t r = 0; r < ranks; ++r)
    c.first_side[r] = distinct.size() > 1
                          ? std::lower_bound(distinct.begin(), distinct.end(), nodes[r]) - distinct.begin() < half
                          : r < ranks / 2;
  std::vector<topo::DeviceId> from, to;
  for (std::size_t r = 0; r < ranks; ++r) (c.first_side[r] ? from : to).push_back(t.gpu(r));
  if (!from.empty() && !to.empty()) c.cut_bytes_per_s = max_flow(t, model, from, to);
  return c;
}

Bound lower_bound(const CollectiveSpec& spec, const Capacity& c, bool in_network_reduction) {
  if (c.injection_bytes_per_s.size() != static_cast<std::size_t>(spec.nranks))
    throw Error("the capacity was computed for " + std::to_string(c.injection_bytes_per_s.size()) + " ranks, the call has " +
                std::to_string(spec.nranks));
  Bound b;
  for (int r = 0; r < spec.nranks; ++r) {
    const Volume v = rank_volume(spec, r, in_network_reduction);
    const double bw = c.injection_bytes_per_s[static_cast<std::size_t>(r)];
    if (bw > 0) b.injection_s = std::max(b.injection_s, std::max(v.send, v.receive) / bw);
  }
  if (c.cut_bytes_per_s > 0) b.bisection_s = cut_volume(spec, c.first_side) / c.cut_bytes_per_s;
  return b;
}

}  // namespace ccsim
