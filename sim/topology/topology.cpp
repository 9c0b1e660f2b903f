#include "sim/topology/topology.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <iterator>
#include <map>

#include <nlohmann/json.hpp>

#include "sim/embedded_configs.hpp"
#include "sim/error.hpp"
#include "sim/topology/paths.hpp"

namespace ccsim::topo {

std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::gpu: return "gpu";
    case DeviceKind::nvswitch: return "nvswitch";
    case DeviceKind::pcie_switch: return "pcie_switch";
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::nic: return "nic";
    case DeviceKind::net_switch: return "net_switch";
  }
  return "?";
}

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::c2c: return "c2c";
    case LinkKind::cpu: return "cpu";
    case LinkKind::net: return "net";
  }
  return "?";
}

namespace {

const nlohmann::json& links_table() {
  static const nlohmann::json table = [] {
    for (const auto& f : embedded_configs())
      if (f.path == "links.json") return nlohmann::json::parse(f.content);
    throw Error("configs/links.json is missing from the build");
  }();
  return table;
}

const nlohmann::json& generation_entry(LinkKind kind, const std::string& generation) {
  const nlohmann::json& table = links_table();
  const std::string section(to_string(kind));
  if (!table.contains(section) || !table[section].contains(generation)) {
    std::string known;
    if (table.contains(section))
      for (const auto& [name, entry] : table[section].items())
        if (entry.is_object()) known += (known.empty() ? "" : ", ") + name;
    throw Error("configs/links.json: no " + section + " generation \"" + generation + "\"" +
                (known.empty() ? std::string() : " (known: " + known + ")"));
  }
  return table[section][generation];
}

}  // namespace

double lane_bandwidth_bytes_per_s(LinkKind kind, const std::string& generation) {
  return generation_entry(kind, generation).at("lane_gbps").get<double>() * 1e9;
}

bool is_infiniband(const std::string& generation) {
  return generation_entry(LinkKind::net, generation).value("fabric", "") == "infiniband";
}

NetTransport net_transport(const std::string& generation) {
  const nlohmann::json& gen = generation_entry(LinkKind::net, generation);
  const nlohmann::json& table = links_table();
  NetTransport t;
  if (!gen.contains("transport")) return t;
  t.name = gen["transport"].get<std::string>();
  if (!table.contains("transports") || !table["transports"].contains(t.name))
    throw Error("configs/links.json: net generation \"" + generation + "\" names transport \"" + t.name +
                "\", which \"transports\" does not describe");
  const auto& tr = table["transports"][t.name];
  const auto& protocols = tr.at("protocols");
  auto allows = [&](const char* p) { return std::find(protocols.begin(), protocols.end(), p) != protocols.end(); };
  t.ll = allows("ll");
  t.ll128 = allows("ll128");
  t.plugin_latency_us = tr.at("plugin_latency_us").get<double>();
  t.message_latency_s = tr.at("message_latency_us").get<double>() * 1e-6;
  t.flush_latency_s = tr.at("flush_latency_us").get<double>() * 1e-6;
  return t;
}

DeviceId Topology::add_device(Device device) {
  forget_gdr();
  const DeviceId id = boost::add_vertex(graph_);
  if (device.kind == DeviceKind::gpu) gpus_.push_back(id);
  devices_.push_back(std::move(device));
  return id;
}

LinkId Topology::add_link(DeviceId a, DeviceId b, LinkKind kind, const std::string& generation, int lanes) {
  forget_gdr();
  if (a >= devices_.size() || b >= devices_.size() || a == b)
    throw Error("topology " + name_ + ": invalid link endpoints");
  if (lanes < 1) throw Error("topology " + name_ + ": a link needs at least one lane");
  Link link{kind, generation, lanes, lanes * lane_bandwidth_bytes_per_s(kind, generation), a, b, 1.0};
  const LinkId id = links_.size();
  links_.push_back(link);
  boost::add_edge(a, b, id, graph_);
  return id;
}

void Topology::set_p2p_fraction(LinkId id, double fraction) {
  Link& l = links_.at(id);
  if (l.kind != LinkKind::cpu)
    throw Error("only a cpu link has one (peer-to-peer writes across sockets), not a " + std::string(to_string(l.kind)) + " link");
  if (!(fraction > 0 && fraction <= 1)) throw Error("expected a number in (0, 1]");
  l.p2p_fraction = fraction;
}

void Topology::set_gpu_order(const std::vector<DeviceId>& order) {
  std::vector<DeviceId> a = order, b = gpus_;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b) throw Error("topology " + name_ + ": a GPU order must list every GPU once");
  gpus_ = order;
}

std::string Topology::gpu_arch() const {
  if (gpus_.empty()) throw Error("topology " + name_ + " has no GPU");
  const std::string& arch = devices_[gpus_.front()].arch;
  for (auto g : gpus_)
    if (devices_[g].arch != arch)
      throw Error("topology " + name_ + " mixes GPU families (" + arch + ", " + devices_[g].arch + ")");
  return arch;
}

NetTransport Topology::net_transport() const {
  std::optional<NetTransport> found;
  std::string first;
  for (const auto& l : links_) {
    if (l.kind != LinkKind::net || (found && l.generation == first)) continue;
    NetTransport t = topo::net_transport(l.generation);
    if (!found) {
      found = t;
      first = l.generation;
    } else if (t.name != found->name) {
      throw Error("topology " + name_ + " mixes network transports (" + first + ": " +
                  (found->name.empty() ? "verbs" : found->name) + ", " + l.generation + ": " +
                  (t.name.empty() ? "verbs" : t.name) + ")");
    }
  }
  return found.value_or(NetTransport{});
}

void Topology::keep_gpus_per_node(int per_node) {
  forget_gdr();  // PXN looks for relays among the ranks
  if (per_node < 1) throw Error("GPUs per node must be at least 1");
  std::vector<DeviceId> kept;
  std::map<int, int> taken;
  for (auto g : gpus_)
    if (taken[devices_[g].node]++ < per_node) kept.push_back(g);
  for (const auto& [node, count] : taken)
    if (count < per_node)
      throw Error("topology " + name_ + ": node " + std::to_string(node) + " has " + std::to_string(count) +
                  " GPUs, fewer than " + std::to_string(per_node));
  gpus_ = kept;
}

int Topology::gpus_per_node() const {
  std::vector<int> per_node;
  int previous = -1;
  for (auto g : gpus_) {
    const int node = devices_[g].node;
    if (node != previous) {
      if (node < previous) throw Error("topology " + name_ + ": GPUs are not ordered by node");
      per_node.push_back(0);
      previous = node;
    }
    ++per_node.back();
  }
  if (per_node.empty()) throw Error("topology " + name_ + " has no GPU");
  for (int c : per_node)
    if (c != per_node.front()) throw Error("topology " + name_ + ": nodes hold different numbers of GPUs");
  return per_node.front();
}

RouteHop Topology::nvls_port(std::size_t gpu_index) const {
  const DeviceId g = gpu(gpu_index);
  RouteHop hop{{}, g};
  for (auto e : boost::make_iterator_range(boost::out_edges(g, graph_))) {
    const LinkId l = graph_[e];
    const Device& other = devices_[links_[l].a == g ? links_[l].b : links_[l].a];
    if (links_[l].kind == LinkKind::nvlink && other.kind == DeviceKind::nvswitch && other.in_switch_reduction)
      hop.links.push_back(l);
  }
  if (hop.links.empty())
    throw Error("topology " + name_ + ": " + devices_[g].name + " reaches no NVSwitch with in-switch reduction (NVLS)");
  return hop;
}

bool Topology::has_nvls() const {
  for (const auto& d : devices_)
    if (d.kind == DeviceKind::nvswitch && d.in_switch_reduction) return true;
  return false;
}

double Topology::effective_bandwidth(LinkId id, const Model& model) const {
  const Link& l = links_.at(id);
  switch (l.kind) {
    case LinkKind::nvlink: {
      const bool switched = devices_[l.a].kind == DeviceKind::nvswitch || devices_[l.b].kind == DeviceKind::nvswitch;
      return l.bandwidth_bytes_per_s * model.nvlink_efficiency() * (switched ? model.nvswitch_efficiency() : 1.0);
    }
    case LinkKind::c2c: return l.bandwidth_bytes_per_s * model.nvlink_efficiency();
    case LinkKind::pcie:
    case LinkKind::cpu: return l.bandwidth_bytes_per_s * model.pcie_efficiency();
    case LinkKind::net: return l.bandwidth_bytes_per_s * model.net_efficiency(is_infiniband(l.generation));
  }
  return l.bandwidth_bytes_per_s;
}

namespace {
// NCCL's level of a PCIe path class inside a node (pcie_class): nvidia-smi's NODE is NCCL's PHB.
PathLevel level_of(const std::string& pcie_path) {
  return pcie_path == "PIX" ? PathLevel::pix
         : pcie_path == "PXB" ? PathLevel::pxb
         : pcie_path == "SYS" ? PathLevel::sys
                              : PathLevel::phb;
}

// ECMP-like hash of a GPU pair (splitmix64 finaliser): well mixed even for pairs a rail apart.
std::size_t pair_spread(std::size_t src_gpu, std::size_t dst_gpu) {
  std::uint64_t h = (static_cast<std::uint64_t>(src_gpu) << 32) ^ dst_gpu;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return static_cast<std::size_t>(h);
}
}  // namespace

Route Topology::route(std::size_t src_gpu, std::size_t dst_gpu) const {
  const DeviceId src = gpu(src_gpu), dst = gpu(dst_gpu);
  Route p2p = p2p_route(src_gpu, dst_gpu);
  if (p2p_level_ == PathLevel::sys || devices_[src].node != devices_[dst].node ||
      p2p_class_of(p2p, src_gpu, dst_gpu) <= p2p_level_)
    return p2p;
  // Beyond NCCL_P2P_LEVEL: SHM, as without PCIe P2P (the receiver's CPU's memory).
  const std::size_t spread = src * 31 + dst;
  Route out = through_memory(src, nearest_cpu(dst, spread), dst, spread);
  out.latency_class = LatencyClass::pcie;
  out.via_cpu = out.shm = true;
  return out;
}

void Topology::set_p2p_pxn_level(int level) {
  if (level < 0 || level > 2) throw Error("NCCL_P2P_PXN_LEVEL is 0, 1 or 2, not " + std::to_string(level));
  p2p_pxn_level_ = level;
}

Route Topology::p2p_operation_route(std::size_t src_gpu, std::size_t dst_gpu, std::size_t ranks) const {
  const DeviceId src = gpu(src_gpu), dst = gpu(dst_gpu);
  const auto plain = [&] { return route(src_gpu, dst_gpu); };
  // The sender writes into the relay's memory by P2P: none where NCCL_P2P_LEVEL forbids it over NVLink.
  if (p2p_pxn_level_ == 0 || p2p_level_ < PathLevel::nvl || devices_[src].node == devices_[dst].node ||
      nics_of_node(devices_[src].node).empty() || nics_of_node(devices_[dst].node).empty())
    return plain();
  // The GPU of the sender's node with the peer's device index (NCCL matches the peer's nvmlDev),
  // and the NIC local to it: the peer's rail. GPUs are ordered by node, as many on each.
  const auto per_node = static_cast<std::size_t>(gpus_per_node());
  const std::size_t relay_index = src_gpu / per_node * per_node + dst_gpu % per_node;
  if (relay_index >= ranks) return plain();
  const DeviceId relay = gpu(relay_index), nic = gpu_nic(relay);
  if (nic == gpu_nic(src)) return plain();
  const std::size_t spread = pair_spread(src_gpu, dst_gpu);
  if (p2p_pxn_level_ == 1 && level_of(pcie_class(*this, src, nic)) <= PathLevel::pxb)
    return across_nodes(src, nic, dst, spread);
  // The relay must be NVLink-near (a lane or a shared NVSwitch, not through a third GPU) and within
  // PXB of the NIC; the sender's kernel writes into its memory, the relay's proxy posts the sends.
  const Route to_relay = p2p_route(src_gpu, relay_index);
  if (to_relay.through_gpu || links_[to_relay.hops.front().links.front()].kind != LinkKind::nvlink ||
      level_of(pcie_class(*this, relay, nic)) > PathLevel::pxb)
    return plain();
  Route out = to_relay;
  const Route rest = across_nodes(relay, nic, dst, spread);
  if (rest.host_leg != SIZE_MAX) out.host_leg = out.hops.size() + rest.host_leg;
  out.hops.insert(out.hops.end(), rest.hops.begin(), rest.hops.end());
  out.device_latency_s += rest.device_latency_s + devices_[relay].latency_s;
  out.via_cpu = rest.via_cpu;
  out.latency_class = LatencyClass::net;
  return out;
}

PathLevel Topology::p2p_class(std::size_t src_gpu, std::size_t dst_gpu) const {
  return p2p_class_of(p2p_route(src_gpu, dst_gpu), src_gpu, dst_gpu);
}

PathLevel Topology::p2p_class_of(const Route& r, std::size_t src_gpu, std::size_t dst_gpu) const {
  if (r.through_gpu) return PathLevel::nvb;
  if (r.shm) return PathLevel::sys;  // no PCIe P2P: beyond any level but SYS's
  if (links_[r.hops.front().links.front()].kind == LinkKind::nvlink) return PathLevel::nvl;
  return level_of(pcie_class(*this, gpu(src_gpu), gpu(dst_gpu)));
}

Route Topology::p2p_route(std::size_t src_gpu, std::size_t dst_gpu) const {
  const DeviceId src = gpu(src_gpu), dst = gpu(dst_gpu);
  auto other_end = [&](LinkId l, DeviceId from) { return links_[l].a == from ? links_[l].b : links_[l].a; };
  Route route;

  // 1. Direct NVLink between the two GPUs (all lanes together).
  RouteHop direct{{}, src};
  for (auto e : boost::make_iterator_range(boost::out_edges(src, graph_))) {
    const LinkId l = graph_[e];
    if (links_[l].kind == LinkKind::nvlink && other_end(l, src) == dst) direct.links.push_back(l);
  }
  if (!direct.links.empty()) {
    route.hops.push_back(direct);
    return route;
  }

  // 2. An NVSwitch fabric both GPUs reach: traffic stripes over every switch plane they share.
  std::map<DeviceId, std::vector<LinkId>> src_planes, dst_planes;
  for (auto [g, planes] : {std::pair{src, &src_planes}, std::pair{dst, &dst_planes}})
    for (auto e : boost::make_iterator_range(boost::out_edges(g, graph_))) {
      const LinkId l = graph_[e];
      const DeviceId s = other_end(l, g);
      if (links_[l].kind == LinkKind::nvlink && devices_[s].kind == DeviceKind::nvswitch) (*planes)[s].push_back(l);
    }
  RouteHop up{{}, src}, down{{}, 0};
  for (const auto& [sw, links] : src_planes) {
    auto it = dst_planes.find(sw);
    if (it == dst_planes.end()) continue;
    up.links.insert(up.links.end(), links.begin(), links.end());
    down.links.insert(down.links.end(), it->second.begin(), it->second.end());
    down.from = sw;
  }
  if (!up.links.empty()) {
    route.hops = {up, down};
    return route;
  }

  // 3. NVB (NCCL's path type): NVLink through one intermediate GPU that has NVLink to both, the
  // widest such detour (NCCL prefers it to PCIe for P2P between GPUs of an NVLink mesh).
  auto nvlink_to = [&](DeviceId from, DeviceId to) {
    std::vector<LinkId> ls;
    for (auto e : boost::make_iterator_range(boost::out_edges(from, graph_))) {
      const LinkId l = graph_[e];
      if (links_[l].kind == LinkKind::nvlink && other_end(l, from) == to) ls.push_back(l);
    }
    return ls;
  };
  int best_lanes = 0;
  for (auto e : boost::make_iterator_range(boost::out_edges(src, graph_))) {
    const LinkId l = graph_[e];
    const DeviceId via = other_end(l, src);
    if (links_[l].kind != LinkKind::nvlink || devices_[via].kind != DeviceKind::gpu) continue;
    const auto first = nvlink_to(src, via), second = nvlink_to(via, dst);
    if (second.empty()) continue;
    int a = 0, b = 0;
    for (auto x : first) a += links_[x].lanes;
    for (auto x : second) b += links_[x].lanes;
    if (std::min(a, b) > best_lanes) {
      best_lanes = std::min(a, b);
      route.hops = {RouteHop{first, src}, RouteHop{second, via}};
      route.through_gpu = true;
    }
  }
  if (route.through_gpu) return route;

  // 4. Shortest path whose intermediate devices are not GPUs.
  const std::size_t spread = pair_spread(src_gpu, dst_gpu);
  if (devices_[src].node == devices_[dst].node && !pcie_p2p_) {
    // SHM: the sender's stores cross to the receiver's nearest CPU (its memory), the receiver's
    // loads bring them back down from there.
    Route out = through_memory(src, nearest_cpu(dst, spread), dst, spread);
    out.latency_class = LatencyClass::pcie;
    out.via_cpu = out.shm = true;
    return out;
  }
  if (devices_[src].node == devices_[dst].node || nics_of_node(devices_[src].node).empty() ||
      nics_of_node(devices_[dst].node).empty())
    return shortest_path(src, [dst](DeviceId d) { return d == dst; }, spread);
  // Across nodes each end uses its own NIC (NCCL's GPU-NIC affinity); only the fabric between the
  // two NICs is left to equal-cost spreading.
  return across_nodes(src, gpu_nic(src), dst, spread);
}

Route Topology::across_nodes(DeviceId sender, DeviceId nic, DeviceId dst, std::size_t spread) const {
  // An end without GPUDirect RDMA goes through host memory at its GPU's CPU (where NCCL's proxy
  // allocates the buffer): the sender stores into it and the NIC reads it, or the NIC writes it and
  // the receiver loads from it.
  const DeviceId dst_nic = gpu_nic(dst);
  const bool gdr_send = gdr(sender, nic, true), gdr_recv = gdr(dst, dst_nic, false);
  Route out = gdr_send ? shortest_path(sender, [nic](DeviceId d) { return d == nic; }, spread)
                       : through_memory(sender, nearest_cpu(sender, spread), nic, spread);
  const Route across = shortest_path(nic, [dst_nic](DeviceId d) { return d == dst_nic; }, spread);
  Route in;
  std::size_t host_leg = SIZE_MAX;
  if (gdr_recv) {
    in = shortest_path(dst_nic, [dst](DeviceId d) { return d == dst; }, spread);
  } else {
    const DeviceId cpu = nearest_cpu(dst, spread);
    in = through_memory(dst_nic, cpu, dst, spread);
    host_leg = in.hops.size() - path(cpu, dst).hops.size();
  }
  // A staged end's stores and loads are the GPU's own accesses to host memory, not P2P through
  // the CPU (the receiver's loads are paced by Route::host_leg instead).
  if (!gdr_send) out.via_cpu = false;
  if (!gdr_recv) in.via_cpu = false;
  for (const Route* part : {&across, static_cast<const Route*>(&in)}) {
    if (part == &in && host_leg != SIZE_MAX) out.host_leg = out.hops.size() + host_leg;
    out.hops.insert(out.hops.end(), part->hops.begin(), part->hops.end());
    out.device_latency_s += part->device_latency_s + devices_[part->hops.front().from].latency_s;
    out.via_cpu |= part->via_cpu;
  }
  out.latency_class = LatencyClass::net;
  return out;
}

DeviceId Topology::nearest_cpu(DeviceId device, std::size_t spread) const {
  bool has_cpu = false;
  for (const auto& d : devices_) has_cpu |= d.kind == DeviceKind::cpu && d.node == devices_[device].node;
  if (!has_cpu)
    throw Error("topology " + name_ + ": " + devices_[device].name +
                " reaches other GPUs or its NIC through host memory, but its node has no CPU");
  const Route up = shortest_path(device, [this](DeviceId d) { return devices_[d].kind == DeviceKind::cpu; }, spread);
  const RouteHop& last = up.hops.back();
  const Link& l = links_[last.links.front()];
  return l.a == last.from ? l.b : l.a;
}

Route Topology::through_memory(DeviceId a, DeviceId cpu, DeviceId b, std::size_t spread) const {
  Route out = shortest_path(a, [cpu](DeviceId d) { return d == cpu; }, spread);
  const Route in = shortest_path(cpu, [b](DeviceId d) { return d == b; }, spread);
  out.hops.insert(out.hops.end(), in.hops.begin(), in.hops.end());
  out.device_latency_s += in.device_latency_s + devices_[cpu].latency_s;
  out.via_cpu |= in.via_cpu;
  return out;
}

bool Topology::gdr(DeviceId gpu, DeviceId nic, bool read) const {
  const auto key = std::make_tuple(gpu, nic, read);
  {
    std::lock_guard<std::mutex> lock(gdr_cache_->mutex);
    if (auto it = gdr_cache_->answers.find(key); it != gdr_cache_->answers.end()) return it->second;
  }
  const bool answer = gdr_uncached(gpu, nic, read);
  std::lock_guard<std::mutex> lock(gdr_cache_->mutex);
  gdr_cache_->answers[key] = answer;
  return answer;
}

bool Topology::gdr_uncached(DeviceId gpu, DeviceId nic, bool read) const {
  if (net_gdr_level_ == PathLevel::loc) return false;
  if (read && devices_[gpu].arch == "volta") {
    // NCCL: "Disable GDR Reads pre-Ampere when we have other PCI flows", unless the GPU has
    // NVLink to another GPU or is its node's only GPU.
    int gpus = 0;
    bool nvlink = false;
    for (const auto& d : devices_) gpus += d.kind == DeviceKind::gpu && d.node == devices_[gpu].node;
    for (auto e : boost::make_iterator_range(boost::out_edges(gpu, graph_))) nvlink |= links_[graph_[e]].kind == LinkKind::nvlink;
    if (gpus > 1 && !nvlink) return false;
  }
  auto within = [&](DeviceId g) { return nic_on_c2c_cpu(g, nic) || level_of(pcie_class(*this, g, nic)) <= net_gdr_level_; };
  // PXN (NCCL 2.12+): a GPU far from the NIC hands its traffic over NVLink to a GPU close to it,
  // whose distance counts instead.
  return within(gpu) || nvlink_peer_where(gpu, within);
}

bool Topology::nic_on_c2c_cpu(DeviceId gpu, DeviceId nic) const {
  return links_[path(gpu, nic).hops.front().links.front()].kind == LinkKind::c2c;
}

bool Topology::nvlink_peer_where(DeviceId gpu, const std::function<bool(DeviceId)>& near) const {
  for (DeviceId peer : gpus_)
    if (peer != gpu && devices_[peer].node == devices_[gpu].node && path_class(*this, gpu, peer).rfind("NV", 0) == 0 &&
        near(peer))
      return true;
  return false;
}

Topology::NicPath Topology::nic_path(std::size_t gpu_index) const {
  const DeviceId g = gpus_.at(gpu_index);
  const DeviceId nic = gpu_nic(g);
  if (nic_on_c2c_cpu(g, nic)) return NicPath::p2c;
  const std::string direct = pcie_class(*this, g, nic);
  if (direct == "PIX") return NicPath::pix;
  if (direct == "PXB") return NicPath::pxb;
  if (direct == "PXN") return NicPath::pxn;  // another tray's NIC of a rack-scale NVLink domain
  if (nvlink_peer_where(g, [&](DeviceId peer) { return level_of(pcie_class(*this, peer, nic)) <= PathLevel::pxb; }))
    return NicPath::pxn;
  return level_of(direct) == PathLevel::sys ? NicPath::sys : NicPath::phb;
}

std::string_view nic_path_name(Topology::NicPath path) {
  using NicPath = Topology::NicPath;
  switch (path) {
    case NicPath::pix: return "PIX";
    case NicPath::pxb: return "PXB";
    case NicPath::p2c: return "P2C";
    case NicPath::pxn: return "PXN";
    case NicPath::phb: return "PHB";
    case NicPath::sys: return "SYS";
  }
  return "?";
}

std::string_view to_string(PathLevel level) {
  switch (level) {
    case PathLevel::loc: return "LOC";
    case PathLevel::nvl: return "NVL";
    case PathLevel::nvb: return "NVB";
    case PathLevel::pix: return "PIX";
    case PathLevel::pxb: return "PXB";
    case PathLevel::phb: return "PHB";
    case PathLevel::sys: return "SYS";
  }
  return "?";
}

std::optional<PathLevel> parse_path_level(const std::string& name) {
  for (PathLevel l : {PathLevel::loc, PathLevel::nvl, PathLevel::nvb, PathLevel::pix, PathLevel::pxb, PathLevel::phb, PathLevel::sys})
    if (name == to_string(l)) return l;
  constexpr PathLevel kLevels[] = {PathLevel::loc, PathLevel::pix, PathLevel::pxb, PathLevel::phb, PathLevel::sys};
  // NCCL's old numbering (ncclGetLevel): 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, higher is SYS.
  if (!name.empty() && name.size() <= 3 && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return kLevels[std::min(4, std::stoi(name))];
  return std::nullopt;
}

DeviceId Topology::gpu_nic(DeviceId g) const {
  // Hop distance from a GPU to each NIC of its node, through anything but other GPUs.
  auto nearest = [&](DeviceId from) {
    std::vector<int> dist(devices_.size(), -1);
    std::deque<DeviceId> queue{from};
    dist[from] = 0;
    std::vector<DeviceId> best;
    int best_dist = -1;
    while (!queue.empty()) {
      const DeviceId v = queue.front();
      queue.pop_front();
      if (best_dist >= 0 && dist[v] > best_dist) break;
      if (devices_[v].kind == DeviceKind::nic && devices_[v].node == devices_[from].node) {
        best.push_back(v);
        best_dist = dist[v];
        continue;
      }
      if (v != from && devices_[v].kind == DeviceKind::gpu) continue;
      for (auto e : boost::make_iterator_range(boost::out_edges(v, graph_))) {
        const LinkId l = graph_[e];
        const DeviceId w = links_[l].a == v ? links_[l].b : links_[l].a;
        if (dist[w] >= 0) continue;
        dist[w] = dist[v] + 1;
        queue.push_back(w);
      }
    }
    std::sort(best.begin(), best.end());
    return best;
  };
  const std::vector<DeviceId> mine = nearest(g);
  if (mine.empty()) throw Error("topology " + name_ + ": " + devices_[g].name + " reaches no NIC of its node");
  std::size_t turn = 0;
  for (DeviceId other = 0; other < g; ++other)
    if (devices_[other].kind == DeviceKind::gpu && devices_[other].node == devices_[g].node && nearest(other) == mine) ++turn;
  return mine[turn % mine.size()];
}

Route Topology::shortest_path(DeviceId src, const std::function<bool(DeviceId)>& is_target, std::size_t spread) const {
  auto route = find_path(src, is_target, spread);
  if (!route) throw Error("topology " + name_ + ": no route from " + devices_[src].name);
  return std::move(*route);
}

std::optional<Route> Topology::find_path(DeviceId src, const std::function<bool(DeviceId)>& is_target,
                                         std::size_t spread) const {
  auto other_end = [&](LinkId l, DeviceId from) { return links_[l].a == from ? links_[l].b : links_[l].a; };
  std::vector<LinkId> via(devices_.size(), SIZE_MAX);
  std::vector<bool> seen(devices_.size(), false);
  std::deque<DeviceId> queue{src};
  seen[src] = true;
  DeviceId found = SIZE_MAX;
  while (!queue.empty()) {
    const DeviceId v = queue.front();
    queue.pop_front();
    if (v != src && is_target(v)) {
      found = v;
      break;
    }
    if (v != src && devices_[v].kind == DeviceKind::gpu) continue;
    // Equal-cost paths (a leaf's spines) are spread over GPU pairs like ECMP hashing: each pair
    // scans the links towards each kind of device (NICs, switches, ...) from its own offset.
    // Deterministic.
    std::map<DeviceKind, std::vector<LinkId>> by_kind;
    for (auto e : boost::make_iterator_range(boost::out_edges(v, graph_)))
      by_kind[devices_[other_end(graph_[e], v)].kind].push_back(graph_[e]);
    std::vector<LinkId> order;
    for (const auto& [kind, group] : by_kind)
      for (std::size_t k = 0; k < group.size(); ++k) order.push_back(group[(spread + k) % group.size()]);
    for (const LinkId l : order) {
      const DeviceId w = other_end(l, v);
      if (seen[w]) continue;
      seen[w] = true;
      via[w] = l;
      queue.push_back(w);
    }
  }
  if (found == SIZE_MAX) return std::nullopt;
  Route route;
  std::vector<RouteHop> reversed;
  for (DeviceId v = found; v != src;) {
    const LinkId l = via[v];
    const DeviceId prev = other_end(l, v);
    reversed.push_back({{l}, prev});
    v = prev;
  }
  route.hops.assign(reversed.rbegin(), reversed.rend());
  bool net = false, pcie = false;
  for (const auto& hop : route.hops)
    for (auto l : hop.links) {
      net |= links_[l].kind == LinkKind::net;
      pcie |= links_[l].kind == LinkKind::pcie || links_[l].kind == LinkKind::cpu;
    }
  route.latency_class = net ? LatencyClass::net : pcie ? LatencyClass::pcie : LatencyClass::nvlink;
  for (std::size_t i = 1; i < route.hops.size(); ++i) {
    route.device_latency_s += devices_[route.hops[i].from].latency_s;
    // A CPU entered over NVLink-C2C is the GPU's own Grace: coherent memory, not a PCIe root complex
    // forwarding peer traffic, so its NIC reaches the GPU without the P2P-through-CPU penalty.
    const bool c2c = links_[route.hops[i - 1].links.front()].kind == LinkKind::c2c ||
                     links_[route.hops[i].links.front()].kind == LinkKind::c2c;
    route.via_cpu |= devices_[route.hops[i].from].kind == DeviceKind::cpu && !c2c;
  }
  return route;
}

Route Topology::path(DeviceId src, DeviceId dst) const {
  return shortest_path(src, [dst](DeviceId d) { return d == dst; }, src * 31 + dst);
}

std::optional<Route> Topology::try_path(DeviceId src, DeviceId dst) const {
  return find_path(src, [dst](DeviceId d) { return d == dst; }, src * 31 + dst);
}

std::vector<DeviceId> Topology::nics_of_node(int node) const {
  std::vector<DeviceId> nics;
  for (DeviceId d = 0; d < devices_.size(); ++d)
    if (devices_[d].kind == DeviceKind::nic && devices_[d].node == node) nics.push_back(d);
  return nics;
}

Route Topology::route_to_sharp(std::size_t gpu_index) const {
  const DeviceId g = gpu(gpu_index);
  // The NIC the GPU sends across nodes with (gpu_nic): NCCL's CollNet pairs each head with its
  // nearest NIC, so heads that share one (a DGX-1's two GPUs per NIC) share its path.
  const DeviceId nic = nic_of(gpu_index);
  Route to_nic = shortest_path(g, [nic](DeviceId d) { return d == nic; }, gpu_index);
  const Route to_switch = shortest_path(
      nic, [this](DeviceId d) { return devices_[d].kind == DeviceKind::net_switch && devices_[d].in_switch_reduction; },
      gpu_index);
  to_nic.hops.insert(to_nic.hops.end(), to_switch.hops.begin(), to_switch.hops.end());
  to_nic.latency_class = LatencyClass::net;
  return to_nic;
}

bool Topology::has_sharp() const {
  for (const auto& d : devices_)
    if (d.kind == DeviceKind::net_switch && d.in_switch_reduction) return true;
  return false;
}

}  // namespace ccsim::topo
