#include "sim/topology/import_smi.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "sim/error.hpp"

namespace ccsim::topo {

namespace {

std::vector<std::string> split_ws(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool is_device_label(const std::string& w) {
  return w.rfind("GPU", 0) == 0 || w.rfind("NIC", 0) == 0 || w.rfind("mlx5_", 0) == 0;
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(static_cast<std::size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[static_cast<std::size_t>(x)] == x ? x : parent[static_cast<std::size_t>(x)] = find(parent[static_cast<std::size_t>(x)]); }
  void join(int a, int b) { parent[static_cast<std::size_t>(find(a))] = find(b); }
};

}  // namespace

std::string SmiMatrix::cls(const std::string& a, const std::string& b) const {
  auto column = [&](const std::string& label) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), label) - header.begin());
  };
  auto it = rows.find(a);
  if (it != rows.end()) return it->second.at(column(b));
  return rows.at(b).at(column(a));
}

SmiMatrix parse_nvidia_smi(const std::string& text, const std::string& origin) {
  SmiMatrix m;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto words = split_ws(line);
    if (words.empty()) {
      if (!m.header.empty() && !m.rows.empty()) break;  // the legend follows the matrix
      continue;
    }
    if (m.header.empty()) {
      if (!is_device_label(words[0])) continue;  // text before the header
      for (const auto& w : words)
        if (is_device_label(w)) m.header.push_back(w);
        else break;
      continue;
    }
    if (!is_device_label(words[0])) break;
    const std::string label = words[0];
    if (std::find(m.header.begin(), m.header.end(), label) == m.header.end())
      throw Error(origin + ":" + std::to_string(line_no) + ": row \"" + label + "\" is not in the header");
    if (words.size() < m.header.size() + 1)
      throw Error(origin + ":" + std::to_string(line_no) + ": row " + label + " has " + std::to_string(words.size() - 1) +
                  " cells, expected " + std::to_string(m.header.size()));
    auto& cells = m.rows[label];
    cells.assign(words.begin() + 1, words.begin() + 1 + static_cast<std::ptrdiff_t>(m.header.size()));
    for (const auto& c : cells)
      if (c != "X" && c != "SYS" && c != "NODE" && c != "PHB" && c != "PXB" && c != "PIX" &&
          !(c.size() > 2 && c.rfind("NV", 0) == 0 && std::isdigit(static_cast<unsigned char>(c[2]))))
        throw Error(origin + ":" + std::to_string(line_no) + ": unknown path class \"" + c + "\"");
    // After the matrix: CPU affinity, then NUMA affinity (a number) for GPU rows.
    if (label.rfind("GPU", 0) == 0 && words.size() >= m.header.size() + 3) {
      const std::string& n = words[m.header.size() + 2];
      if (!n.empty() && std::isdigit(static_cast<unsigned char>(n[0]))) m.numa[label] = std::stoi(n);
    }
  }
  if (m.header.empty()) throw Error(origin + ": no nvidia-smi topo -m header (a line starting with GPU0) found");
  for (const auto& l : m.header) (l.rfind("GPU", 0) == 0 ? m.gpus : m.nics).push_back(l);
  if (m.gpus.empty()) throw Error(origin + ": the matrix has no GPU");
  for (const auto& g : m.gpus)
    if (!m.rows.count(g)) throw Error(origin + ": row " + g + " is missing (a partial copy?)");
  return m;
}

Topology import_nvidia_smi(const std::string& text, const std::string& origin, const SmiImportOptions& o) {
  const SmiMatrix m = parse_nvidia_smi(text, origin);
  const std::vector<std::string>& gpus = m.gpus;
  const std::vector<std::string>& nics = m.nics;
  std::map<std::string, int> numa = m.numa;
  auto cls = [&](const std::string& a, const std::string& b) { return m.cls(a, b); };
  Topology t(origin);
  std::map<std::string, DeviceId> dev;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    dev[gpus[i]] = t.add_device({"gpu" + std::to_string(i), DeviceKind::gpu, 0, o.arch, false});
  for (std::size_t i = 0; i < nics.size(); ++i) dev[nics[i]] = t.add_device({"nic" + std::to_string(i), DeviceKind::nic, 0, "", false});

  // NVLink.
  int lanes = -1;
  bool uniform = gpus.size() > 2;
  for (const auto& a : gpus)
    for (const auto& b : gpus)
      if (a != b) {
        const std::string c = cls(a, b);
        const int l = c.rfind("NV", 0) == 0 ? std::stoi(c.substr(2)) : 0;
        if (lanes < 0) lanes = l;
        uniform &= l == lanes && l > 0;
      }
  if (uniform && lanes * static_cast<int>(gpus.size() - 1) > 18) {
    const DeviceId sw = t.add_device({"nvswitch", DeviceKind::nvswitch, 0, "", false});
    for (const auto& g : gpus) t.add_link(dev[g], sw, LinkKind::nvlink, o.nvlink_generation, lanes);
  } else {
    for (std::size_t i = 0; i < gpus.size(); ++i)
      for (std::size_t j = i + 1; j < gpus.size(); ++j) {
        const std::string c = cls(gpus[i], gpus[j]);
        if (c.rfind("NV", 0) == 0) t.add_link(dev[gpus[i]], dev[gpus[j]], LinkKind::nvlink, o.nvlink_generation, std::stoi(c.substr(2)));
      }
  }

  std::vector<std::string> all = gpus;
  all.insert(all.end(), nics.begin(), nics.end());
  const int n = static_cast<int>(all.size());
  auto pair_class = [&](int i, int j) { return cls(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(j)]); };

  // Sockets: the GPUs' NUMA nodes where the text has them (NICs follow the first GPU they are not
  // SYS to). Otherwise devices joined by a PCIe class share a socket, and groups with no SYS pair
  // between them are merged.
  std::map<std::string, int> socket;
  bool numa_usable = numa.size() == gpus.size();
  if (numa_usable) {
    for (const auto& g : gpus) socket[g] = numa[g];
    for (const auto& nic : nics) {
      socket[nic] = socket[gpus.front()];
      for (const auto& g : gpus)
        if (cls(nic, g) != "SYS") {
          socket[nic] = socket[g];
          break;
        }
    }
    // NUMA affinity must agree with the matrix: SYS exactly between different sockets (NVLink
    // pairs tell nothing). Where it does not (SYS inside one NUMA node), the matrix wins.
    for (int i = 0; i < n && numa_usable; ++i)
      for (int j = i + 1; j < n && numa_usable; ++j) {
        const std::string c = pair_class(i, j);
        if (c.rfind("NV", 0) == 0) continue;
        numa_usable = (c == "SYS") == (socket[all[static_cast<std::size_t>(i)]] != socket[all[static_cast<std::size_t>(j)]]);
      }
  }
  if (!numa_usable) {
    UnionFind same(n);
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        const std::string c = pair_class(i, j);
        if (c == "PIX" || c == "PXB" || c == "NODE" || c == "PHB") same.join(i, j);
      }
    auto sys_between = [&](int a, int b) {
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (same.find(i) == a && same.find(j) == b && pair_class(i, j) == "SYS") return true;
      return false;
    };
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const int a = same.find(i), b = same.find(j);
        if (a != b && !sys_between(a, b)) same.join(a, b);
      }
    std::map<int, int> ids;
    for (int i = 0; i < n; ++i) {
      const int root = same.find(i);
      if (!ids.count(root)) ids[root] = static_cast<int>(ids.size());
      socket[all[static_cast<std::size_t>(i)]] = ids[root];
    }
  }
  std::map<int, DeviceId> cpus;
  for (const auto& [label, s] : socket)
    if (!cpus.count(s)) cpus[s] = t.add_device({"cpu" + std::to_string(s), DeviceKind::cpu, 0, "", false});
  for (auto a = cpus.begin(); a != cpus.end(); ++a)
    for (auto b = std::next(a); b != cpus.end(); ++b) t.add_link(a->second, b->second, LinkKind::cpu, o.cpu_link, 1);

  // PCIe: PIX groups share a switch; groups related by PXB share a parent switch.
  UnionFind pix(n), pxb(n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const std::string c = cls(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(j)]);
      if (c == "PIX") pix.join(i, j), pxb.join(i, j);
      if (c == "PXB") pxb.join(i, j);
    }
  std::map<int, DeviceId> parent_switch, group_switch;
  int switches = 0;
  for (int i = 0; i < n; ++i) {
    const std::string& label = all[static_cast<std::size_t>(i)];
    const int g = pix.find(i), p = pxb.find(i);
    int group_size = 0, family_size = 0;
    for (int j = 0; j < n; ++j) group_size += pix.find(j) == g, family_size += pxb.find(j) == p;
    DeviceId up = cpus[socket[label]];
    if (family_size > group_size) {  // PXB relatives: a parent switch under the CPU
      if (!parent_switch.count(p)) {
        parent_switch[p] = t.add_device({"pcie" + std::to_string(switches++), DeviceKind::pcie_switch, 0, "", false});
        t.add_link(parent_switch[p], up, LinkKind::pcie, o.pcie_generation, 16);
      }
      up = parent_switch[p];
    }
    // A device alone on the CPU shares its host bridge with the devices it is PHB to; otherwise it
    // gets a root port of its own (NODE to everything else on that CPU).
    bool phb = false;
    for (int j = 0; j < n; ++j) phb |= j != i && pair_class(i, j) == "PHB";
    if (group_size > 1 || family_size > group_size || !phb) {
      if (!group_switch.count(g)) {
        group_switch[g] = t.add_device({"pcie" + std::to_string(switches++), DeviceKind::pcie_switch, 0, "", false});
        t.add_link(group_switch[g], up, LinkKind::pcie, o.pcie_generation, 16);
      }
      up = group_switch[g];
    }
    t.add_link(dev[label], up, LinkKind::pcie, o.pcie_generation, 16);
  }
  return t;
}

}  // namespace ccsim::topo
