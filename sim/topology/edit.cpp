// What-if edits of a machine: faster or slower links, links at reduced width, failed links and
// devices. Removals rebuild the graph (Boost's vecS vertices renumber on removal anyway), so every
// other part of the simulator sees an ordinary, smaller topology.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "sim/error.hpp"
#include "sim/units.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim::topo {

namespace {

void check_factor(double factor, const std::string& what) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw Error(what + ": the factor must be a positive number, got " + format_number(factor));
}

// Union-find over device ids.
struct Components {
  std::vector<std::size_t> parent;
  explicit Components(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  std::size_t find(std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

}  // namespace

std::optional<DeviceId> Topology::find_device(const std::string& name) const {
  for (DeviceId d = 0; d < devices_.size(); ++d)
    if (devices_[d].name == name) return d;
  return std::nullopt;
}

DeviceId Topology::device_named(const std::string& name) const {
  if (auto d = find_device(name)) return *d;
  // Multi-node presets prefix every node's devices ("n1.gpu0"): show names that look alike, else
  // the first few.
  const std::string tail = name.substr(name.find('.') == std::string::npos ? 0 : name.find('.') + 1);
  std::vector<std::string> alike, first;
  for (const auto& d : devices_) {
    if (alike.size() < 4 && (d.name == tail || d.name.ends_with("." + tail))) alike.push_back(d.name);
    if (first.size() < 4) first.push_back(d.name);
  }
  std::string examples;
  for (const auto& n : alike.empty() ? first : alike) examples += (examples.empty() ? "" : ", ") + n;
  throw Error("topology " + name_ + " has no device \"" + name + "\" (devices are named like " + examples + ")");
}

std::vector<LinkId> Topology::links_between(DeviceId a, DeviceId b) const {
  std::vector<LinkId> out;
  for (auto e : boost::make_iterator_range(boost::out_edges(a, graph_))) {
    const LinkId l = graph_[e];
    if ((links_[l].a == a && links_[l].b == b) || (links_[l].a == b && links_[l].b == a)) out.push_back(l);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t Topology::scale_links(LinkKind kind, double factor) {
  check_factor(factor, "scaling " + std::string(to_string(kind)) + " bandwidth");
  std::size_t n = 0;
  for (auto& l : links_)
    if (l.kind == kind) {
      l.bandwidth_bytes_per_s *= factor;
      ++n;
    }
  return n;
}

void Topology::scale_link(DeviceId a, DeviceId b, double factor) {
  const std::string what = "link " + device(a).name + " - " + device(b).name;
  check_factor(factor, what);
  const auto ids = links_between(a, b);
  if (ids.empty()) throw Error(what + ": no link joins these devices in topology " + name_);
  for (auto id : ids) {
    Link& l = links_[id];
    l.bandwidth_bytes_per_s *= factor;
    // A x16 PCIe link at half width is x8: path classes (NV#) and NCCL's view follow the lanes.
    const double lanes = l.lanes * factor;
    if (lanes >= 1 && std::abs(lanes - std::round(lanes)) < 1e-9) l.lanes = static_cast<int>(std::lround(lanes));
  }
}

void Topology::remove_link(DeviceId a, DeviceId b) {
  const auto ids = links_between(a, b);
  if (ids.empty()) throw Error("link " + device(a).name + " - " + device(b).name + ": no link joins these devices in topology " + name_);
  const std::set<LinkId> drop(ids.begin(), ids.end());
  Topology t = without([](DeviceId) { return false; }, [&](LinkId l) { return drop.count(l) > 0; });
  try {
    t.check_gpus_connected();
  } catch (const Error& e) {
    throw Error("removing the link " + device(a).name + " - " + device(b).name + " disconnects the GPUs: " + e.what());
  }
  *this = std::move(t);
}

void Topology::remove_device(DeviceId id) {
  const Device& d = device(id);
  if (d.kind == DeviceKind::gpu)
    throw Error("cannot remove " + d.name + ": GPUs are the ranks (use fewer nodes or gpus_per_node instead)");
  Topology t = without([id](DeviceId x) { return x == id; }, [](LinkId) { return false; });
  try {
    t.check_gpus_connected();
  } catch (const Error& e) {
    throw Error("removing " + d.name + " disconnects the GPUs: " + e.what());
  }
  *this = std::move(t);
}

Topology& Topology::operator=(Topology&& other) noexcept {
  if (this == &other) return *this;
  name_ = std::move(other.name_);
  devices_ = std::move(other.devices_);
  links_ = std::move(other.links_);
  gpus_ = std::move(other.gpus_);
  pcie_p2p_ = other.pcie_p2p_;
  net_gdr_level_ = other.net_gdr_level_;
  p2p_level_ = other.p2p_level_;
  p2p_pxn_level_ = other.p2p_pxn_level_;
  gdr_cache_ = other.gdr_cache_;
  rebuild_graph();
  other.devices_.clear();
  other.links_.clear();
  other.gpus_.clear();
  other.graph_.clear();
  return *this;
}

void Topology::rebuild_graph() {
  graph_.clear();
  for (std::size_t d = 0; d < devices_.size(); ++d) boost::add_vertex(graph_);
  for (LinkId l = 0; l < links_.size(); ++l) boost::add_edge(links_[l].a, links_[l].b, l, graph_);
}

Topology Topology::without(const std::function<bool(DeviceId)>& drop_device,
                           const std::function<bool(LinkId)>& drop_link) const {
  Topology t(name_);
  std::vector<DeviceId> renumbered(devices_.size(), SIZE_MAX);
  for (DeviceId d = 0; d < devices_.size(); ++d)
    if (!drop_device(d)) renumbered[d] = t.add_device(devices_[d]);
  for (LinkId l = 0; l < links_.size(); ++l) {
    Link link = links_[l];
    if (drop_link(l) || renumbered[link.a] == SIZE_MAX || renumbered[link.b] == SIZE_MAX) continue;
    link.a = renumbered[link.a];
    link.b = renumbered[link.b];
    t.links_.push_back(link);  // bandwidth and lanes as they are: earlier edits may have changed them
  }
  t.rebuild_graph();
  t.gpus_.clear();
  for (auto g : gpus_) t.gpus_.push_back(renumbered[g]);  // GPUs are never dropped
  t.pcie_p2p_ = pcie_p2p_;
  t.net_gdr_level_ = net_gdr_level_;
  t.p2p_level_ = p2p_level_;
  t.p2p_pxn_level_ = p2p_pxn_level_;
  return t;
}

void Topology::check_gpus_connected() const {
  // route() joins two GPUs by a link between them, by NVLink through one other GPU (NVB), or by a
  // path through switches, CPUs and NICs only. The last is a question of components of the graph
  // without GPUs: a GPU reaches every component one of its neighbours is in.
  Components comp(devices_.size());
  for (const auto& l : links_)
    if (devices_[l.a].kind != DeviceKind::gpu && devices_[l.b].kind != DeviceKind::gpu) comp.join(l.a, l.b);
  std::vector<std::vector<std::size_t>> reach(gpus_.size());
  std::map<std::size_t, std::size_t> gpus_reaching;
  for (std::size_t r = 0; r < gpus_.size(); ++r) {
    std::set<std::size_t> s;
    for (auto e : boost::make_iterator_range(boost::out_edges(gpus_[r], graph_))) {
      const Link& l = links_[graph_[e]];
      const DeviceId other = l.a == gpus_[r] ? l.b : l.a;
      if (devices_[other].kind != DeviceKind::gpu) s.insert(comp.find(other));
    }
    reach[r].assign(s.begin(), s.end());
    for (auto c : s) ++gpus_reaching[c];
  }
  // The usual case, a fabric every GPU hangs off: one component all GPUs reach.
  for (const auto& [c, n] : gpus_reaching)
    if (n == gpus_.size()) return;
  auto nvlink_peers = [&](DeviceId g) {
    std::set<DeviceId> peers;
    for (auto e : boost::make_iterator_range(boost::out_edges(g, graph_))) {
      const Link& l = links_[graph_[e]];
      const DeviceId other = l.a == g ? l.b : l.a;
      if (l.kind == LinkKind::nvlink && devices_[other].kind == DeviceKind::gpu) peers.insert(other);
    }
    return peers;
  };
  std::vector<std::set<DeviceId>> peers(gpus_.size());
  for (std::size_t r = 0; r < gpus_.size(); ++r) peers[r] = nvlink_peers(gpus_[r]);
  for (std::size_t a = 0; a < gpus_.size(); ++a)
    for (std::size_t b = a + 1; b < gpus_.size(); ++b) {
      std::vector<std::size_t> shared;
      std::set_intersection(reach[a].begin(), reach[a].end(), reach[b].begin(), reach[b].end(), std::back_inserter(shared));
      if (!shared.empty() || !links_between(gpus_[a], gpus_[b]).empty()) continue;
      bool nvb = false;
      for (auto via : peers[a]) nvb = nvb || nvlink_peers(via).count(gpus_[b]) > 0;
      if (!nvb)
        throw Error("topology " + name_ + ": no route from " + devices_[gpus_[a]].name + " to " + devices_[gpus_[b]].name);
    }
}

void Topology::keep_nics_per_node(int per_node) {
  if (per_node < 1) throw Error("NICs per node must be at least 1");
  std::map<int, std::vector<DeviceId>> ranks_by_node;
  for (auto g : gpus_) ranks_by_node[devices_[g].node].push_back(g);
  std::set<DeviceId> removed;
  for (const auto& [node, ranks] : ranks_by_node) {
    std::vector<DeviceId> nics = nics_of_node(node);
    if (static_cast<int>(nics.size()) < per_node)
      throw Error("topology " + name_ + ": node " + std::to_string(node) + " has " + std::to_string(nics.size()) +
                  " NICs, fewer than " + std::to_string(per_node));
    std::vector<bool> kept(nics.size(), false);
    for (int k = 0; k < per_node; ++k) {
      const DeviceId anchor = ranks[static_cast<std::size_t>(k) * ranks.size() / static_cast<std::size_t>(per_node)];
      std::size_t best = nics.size();
      std::size_t best_hops = 0;
      for (std::size_t i = 0; i < nics.size(); ++i) {
        if (kept[i]) continue;
        const std::size_t hops = path(anchor, nics[i]).hops.size();
        if (best == nics.size() || hops < best_hops) {
          best = i;
          best_hops = hops;
        }
      }
      kept[best] = true;
    }
    for (std::size_t i = 0; i < nics.size(); ++i)
      if (!kept[i]) removed.insert(nics[i]);
  }
  Topology edited = without([&](DeviceId d) { return removed.count(d) > 0; }, [](LinkId) { return false; });
  edited.check_gpus_connected();
  *this = std::move(edited);
}

}  // namespace ccsim::topo
