#include "sim/topology/paths.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include <boost/graph/graphviz.hpp>
#include <nlohmann/json.hpp>

namespace ccsim::topo {

std::string route_class(const Topology& t, std::size_t gpu_a, std::size_t gpu_b) {
  if (gpu_a == gpu_b) return "X";
  const Route r = t.route(gpu_a, gpu_b);
  if (r.through_gpu) return "NVB";
  return path_class(t, t.gpu(gpu_a), t.gpu(gpu_b));
}

std::string path_class(const Topology& t, DeviceId a, DeviceId b) {
  if (a == b) return "X";
  const Device& da = t.device(a);
  const Device& db = t.device(b);
  Route r;
  if (da.kind == DeviceKind::gpu && db.kind == DeviceKind::gpu) {
    std::size_t ia = 0, ib = 0;
    for (std::size_t i = 0; i < t.gpu_count(); ++i) {
      if (t.gpu(i) == a) ia = i;
      if (t.gpu(i) == b) ib = i;
    }
    r = t.p2p_route(ia, ib);
    if (!r.hops.empty() && !r.through_gpu && t.link(r.hops.front().links.front()).kind == LinkKind::nvlink) {
      int lanes = 0;
      for (auto l : r.hops.front().links) lanes += t.link(l).lanes;
      return "NV" + std::to_string(lanes);
    }
  }
  // nvidia-smi classifies everything else by the PCIe path (it never shows NCCL's NVB).
  return pcie_class(t, a, b);
}

std::string pcie_class(const Topology& t, DeviceId a, DeviceId b) {
  if (a == b) return "X";
  const std::optional<Route> found = t.try_path(a, b);
  if (!found) {
    // A NIC of another tray of a rack-scale NVLink domain (GB200 NVL72): a GPU reaches it only
    // over NVLink through the GPU beside it, NCCL's PXN path; two such NICs share no path.
    const bool gpu_end = t.device(a).kind == DeviceKind::gpu || t.device(b).kind == DeviceKind::gpu;
    return gpu_end ? "PXN" : "-";
  }
  const Route& r = *found;
  bool cpu_link = false, net = false, via_cpu = false;
  int pcie_switches = 0;
  for (std::size_t i = 0; i < r.hops.size(); ++i) {
    const Link& l = t.link(r.hops[i].links.front());
    cpu_link |= l.kind == LinkKind::cpu;
    net |= l.kind == LinkKind::net;
    if (i > 0) {
      const DeviceKind k = t.device(r.hops[i].from).kind;
      via_cpu |= k == DeviceKind::cpu;
      pcie_switches += k == DeviceKind::pcie_switch;
    }
  }
  if (net) return "NET";
  if (cpu_link) return "SYS";
  // A device attached straight to a CPU sits on its host bridge: crossing the CPU from it is PHB.
  // A PCIe switch on a CPU sits on a root port of its own: crossing the CPU between two switches
  // is NODE.
  if (via_cpu) {
    for (std::size_t i = 1; i < r.hops.size(); ++i)
      if (t.device(r.hops[i].from).kind == DeviceKind::cpu) {
        const DeviceKind before = t.device(r.hops[i - 1].from).kind;
        const Link& next = t.link(r.hops[i].links.front());
        const DeviceKind after = t.device(next.a == r.hops[i].from ? next.b : next.a).kind;
        const bool direct_before = before == DeviceKind::gpu || before == DeviceKind::nic;
        const bool direct_after = after == DeviceKind::gpu || after == DeviceKind::nic;
        return direct_before || direct_after ? "PHB" : "NODE";
      }
  }
  return pcie_switches <= 1 ? "PIX" : "PXB";
}

double route_bandwidth(const Topology& t, std::size_t gpu_a, std::size_t gpu_b, bool allow_nvb) {
  Route r = t.route(gpu_a, gpu_b);
  if (r.through_gpu && !allow_nvb) r = t.path(t.gpu(gpu_a), t.gpu(gpu_b));
  double narrowest = 1e300;
  for (const auto& hop : r.hops) {
    double bw = 0;
    for (auto l : hop.links) bw += t.link(l).bandwidth_bytes_per_s;
    narrowest = std::min(narrowest, bw);
  }
  return narrowest;
}

std::string path_matrix(const Topology& t, int node) {
  std::vector<std::pair<std::string, DeviceId>> cols;
  int g = 0;
  for (std::size_t i = 0; i < t.gpu_count(); ++i)
    if (t.device(t.gpu(i)).node == node) cols.emplace_back("GPU" + std::to_string(g++), t.gpu(i));
  const auto nics = t.nics_of_node(node);
  for (std::size_t i = 0; i < nics.size(); ++i) cols.emplace_back("NIC" + std::to_string(i), nics[i]);
  std::ostringstream out;
  out << std::left << std::setw(8) << "";
  for (const auto& c : cols) out << std::setw(8) << c.first;
  out << "\n";
  for (const auto& row : cols) {
    out << std::setw(8) << row.first;
    for (const auto& c : cols) out << std::setw(8) << path_class(t, row.second, c.second);
    out << "\n";
  }
  return out.str();
}

std::string summary(const Topology& t) {
  std::map<std::string, int> devices, links;
  for (const auto& d : t.devices()) ++devices[std::string(to_string(d.kind))];
  for (const auto& l : t.links()) {
    std::string key = std::string(to_string(l.kind)) + (l.generation.empty() ? "" : " " + l.generation);
    if (l.p2p_fraction != 1.0) {
      std::ostringstream f;
      f << " (P2P writes across it at " << l.p2p_fraction << "x their rate within a socket)";
      key += f.str();
    }
    ++links[key];
  }
  std::ostringstream out;
  out << "topology " << t.name() << ": " << t.gpu_count() << " GPUs (" << t.gpu_arch() << "), " << t.gpus_per_node()
      << " per node\n";
  out << "devices:";
  for (const auto& [k, n] : devices) out << " " << n << " " << k;
  out << "\nlinks:";
  for (const auto& [k, n] : links) out << " " << n << " " << k;
  out << "\nNVLS: " << (t.has_nvls() ? "yes" : "no") << ", SHARP: " << (t.has_sharp() ? "yes" : "no")
      << (t.pcie_p2p() ? "" : ", PCIe P2P: no (GPU pairs without NVLink go through host memory)")
      << (t.p2p_level() == PathLevel::sys ? "" : ", P2P level: " + std::string(to_string(t.p2p_level())) +
                                                    " (farther GPU pairs go through host memory)")
      << (t.p2p_pxn_level() == 2 ? "" : ", PXN level for point-to-point: " + std::to_string(t.p2p_pxn_level()))
      << "\n";
  const NetTransport net = t.net_transport();
  if (!net.name.empty()) {
    out << "network transport: " << net.name << " (protocols without NCCL_PROTO: "
        << (net.ll ? "ll " : "") << (net.ll128 ? "ll128 " : "") << "simple; NCCL's model is told "
        << net.plugin_latency_us << " us; each message +" << net.message_latency_s * 1e6
        << " us, a Simple one on a GPU before Hopper +" << net.flush_latency_s * 1e6 << " us more)\n";
  }
  if (t.gpus_per_node() < static_cast<int>(t.gpu_count())) {
    // What the network sees of node 0: which GPUs' NICs read and write their memory directly.
    std::string staged;
    for (std::size_t i = 0; i < t.gpu_count() && t.device(t.gpu(i)).node == 0; ++i) {
      const DeviceId g = t.gpu(i), nic = t.nic_of(i);
      const bool read = t.gdr(g, nic, true), write = t.gdr(g, nic, false);
      if (read && write) continue;
      staged += (staged.empty() ? "" : ", ") + std::string("GPU") + std::to_string(i) +
                (read ? " receives" : write ? " sends" : "") + " (" + path_class(t, g, nic) + " to its NIC)";
    }
    out << "GPUDirect RDMA (NCCL_NET_GDR_LEVEL " << to_string(t.net_gdr_level()) << "): "
        << (staged.empty() ? "every GPU" : "staged in host memory for " + staged) << "\n";
    // The class NCCL's graphs record for each GPU's path to its NIC (typeInter), by which NCCL
    // decides whether LL128 may cross nodes (nccl_system.cpp).
    std::map<Topology::NicPath, int> nic_paths;
    for (std::size_t i = 0; i < t.gpu_count() && t.device(t.gpu(i)).node == 0; ++i) ++nic_paths[t.nic_path(i)];
    out << "GPU-NIC paths (NCCL's typeInter; LL128 crosses nodes by default within PXB, from Hopper on within PXN):";
    for (const auto& [path, n] : nic_paths) out << " " << n << " " << nic_path_name(path);
    out << "\n";
  }
  out << "\n";
  out << path_matrix(t, 0);
  return out.str();
}

nlohmann::json to_json(const Topology& t) {
  nlohmann::json j{{"name", t.name()}};
  if (!t.pcie_p2p()) j["pcie_p2p"] = false;
  if (t.net_gdr_level() != PathLevel::pxb) j["net_gdr_level"] = std::string(to_string(t.net_gdr_level()));
  if (t.p2p_level() != PathLevel::sys) j["p2p_level"] = std::string(to_string(t.p2p_level()));
  if (t.p2p_pxn_level() != 2) j["p2p_pxn_level"] = t.p2p_pxn_level();
  auto& devices = j["devices"] = nlohmann::json::array();
  for (const auto& d : t.devices()) {
    nlohmann::json dj{{"name", d.name}, {"kind", to_string(d.kind)}, {"node", d.node}};
    if (!d.arch.empty()) dj["arch"] = d.arch;
    if (d.in_switch_reduction) dj["reduces"] = true;  // the key topology files use (configs/topologies/README.md)
    if (d.latency_s > 0) dj["latency_us"] = d.latency_s * 1e6;
    devices.push_back(dj);
  }
  auto& links = j["links"] = nlohmann::json::array();
  for (const auto& l : t.links()) {
    nlohmann::json lj{{"from", t.device(l.a).name}, {"to", t.device(l.b).name}, {"kind", to_string(l.kind)},
                      {"generation", l.generation}, {"lanes", l.lanes},
                      {"bandwidth_gbps", l.bandwidth_bytes_per_s / 1e9}};
    if (l.p2p_fraction != 1.0) lj["p2p_fraction"] = l.p2p_fraction;
    links.push_back(lj);
  }
  return j;
}

std::string to_dot(const Topology& t) {
  std::ostringstream out;
  boost::write_graphviz(
      out, t.graph(),
      [&](std::ostream& o, DeviceId v) {
        const Device& d = t.device(v);
        o << "[label=\"" << d.name << "\", shape=" << (d.kind == DeviceKind::gpu ? "box" : "ellipse") << "]";
      },
      [&](std::ostream& o, const Graph::edge_descriptor& e) {
        const Link& l = t.link(t.graph()[e]);
        o << "[label=\"" << to_string(l.kind) << l.generation << " x" << l.lanes << "\"]";
      });
  return out.str();
}

}  // namespace ccsim::topo
