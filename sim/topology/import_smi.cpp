#include "sim/topology/import_smi.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
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

namespace {

// A terminal's colour and underline codes (ESC [ ... letter), which a captured nvidia-smi keeps.
std::string without_escapes(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
      continue;
    }
    out += line[i];
  }
  return out;
}

// The fields after a row's matrix cells: CPU affinity, NUMA affinity, GPU NUMA ID as the header
// titles them. nvidia-smi separates them by tabs, so an empty one (a GPU outside the job's cpuset)
// stays in place; read by spaces, an empty CPU affinity is told by a field fewer than the titles.
struct Affinity {
  std::string cpus, numa;
};
Affinity affinity_of(const std::string& line, const std::vector<std::string>& words, std::size_t cells,
                     const std::string& header_line) {
  const bool has_cpus = header_line.find("CPU Affinity") != std::string::npos;
  const bool has_numa = header_line.find("NUMA Affinity") != std::string::npos;
  const int titles = has_cpus + has_numa + (header_line.find("GPU NUMA ID") != std::string::npos);
  std::vector<std::string> fields;
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    parts.push_back(line.substr(start, tab - start));
  parts.push_back(line.substr(start));
  const auto filled = std::count_if(parts.begin(), parts.end(), [](const std::string& p) { return !split_ws(p).empty(); });
  // Tab-separated only where tabs part the label and every cell (a stray tab at an end of a
  // space-separated row does not).
  if (static_cast<std::size_t>(filled) >= cells + 1 &&
      std::all_of(parts.begin(), parts.end(), [](const std::string& p) { return split_ws(p).size() <= 1; })) {
    // The label and the cells are the first 1 + cells tab-separated fields (a cell may be padded).
    std::size_t k = 0, seen = 0;
    while (k < parts.size() && seen < cells + 1) seen += !split_ws(parts[k++]).empty();
    for (; k < parts.size(); ++k) {
      const auto w = split_ws(parts[k]);
      fields.push_back(w.empty() ? std::string() : w.front());
    }
    // Tabs may pad between fields as they pad cells: keep the non-empty ones, and an empty first
    // one where the header titles a CPU affinity (a GPU outside the job's cpuset).
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (!fields[i].empty() || (i == 0 && has_cpus)) kept.push_back(fields[i]);
    fields = kept;
  } else {
    fields.assign(words.begin() + 1 + static_cast<std::ptrdiff_t>(cells), words.end());
    if (has_cpus && static_cast<int>(fields.size()) == titles - 1) fields.insert(fields.begin(), std::string());
  }
  Affinity a;
  std::size_t at = 0;
  if (has_cpus && at < fields.size()) a.cpus = fields[at++];
  if (has_numa && at < fields.size()) a.numa = fields[at++];
  return a;
}

}  // namespace

SmiMatrix parse_nvidia_smi(const std::string& text, const std::string& origin) {
  SmiMatrix m;
  std::istringstream in(text);
  std::string line, header_line;
  int line_no = 0;
  std::map<std::string, int> row_line;  // where each row was read
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    line = without_escapes(line);
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
      header_line = line;
      continue;
    }
    if (!is_device_label(words[0])) break;
    const std::string label = words[0];
    const std::string at = origin + ":" + std::to_string(line_no) + ": ";
    if (std::find(m.header.begin(), m.header.end(), label) == m.header.end())
      throw Error(at + "row \"" + label + "\" is not in the header");
    if (row_line.count(label))
      throw Error(at + "row " + label + " again (first at line " + std::to_string(row_line[label]) + ")");
    row_line[label] = line_no;
    if (words.size() < m.header.size() + 1)
      throw Error(at + "row " + label + " has " + std::to_string(words.size() - 1) + " cells, expected " +
                  std::to_string(m.header.size()));
    auto& cells = m.rows[label];
    cells.assign(words.begin() + 1, words.begin() + 1 + static_cast<std::ptrdiff_t>(m.header.size()));
    for (const auto& c : cells)
      if (c != "X" && c != "SYS" && c != "NODE" && c != "PHB" && c != "PXB" && c != "PIX" &&
          !(c.size() > 2 && c.rfind("NV", 0) == 0 && std::isdigit(static_cast<unsigned char>(c[2]))))
        throw Error(at + "unknown path class \"" + c + "\"");
    if (label.rfind("GPU", 0) == 0) {
      const Affinity a = affinity_of(line, words, m.header.size(), header_line);
      int node = 0;
      const auto [end, ec] = std::from_chars(a.numa.data(), a.numa.data() + a.numa.size(), node);
      if (ec == std::errc() && end == a.numa.data() + a.numa.size() && node >= 0) m.numa[label] = node;
      if (!a.cpus.empty() && a.cpus != "N/A") m.cpu_affinity[label] = a.cpus;
    }
  }
  if (m.header.empty()) throw Error(origin + ": no nvidia-smi topo -m header (a line starting with GPU0) found");
  for (const auto& l : m.header) (l.rfind("GPU", 0) == 0 ? m.gpus : m.nics).push_back(l);
  if (m.gpus.empty()) throw Error(origin + ": the matrix has no GPU");
  for (const auto& g : m.gpus)
    if (!m.rows.count(g)) throw Error(origin + ": row " + g + " is missing (a partial copy?)");
  // Two NICs relate only through their own rows.
  if (m.nics.size() > 1)
    for (const auto& nic : m.nics)
      if (!m.rows.count(nic))
        throw Error(origin + ": row " + nic + " is missing (a partial copy?): the NIC rows say how the NICs sit to each "
                             "other; without them, drop the NIC columns to import the GPUs alone");
  // nvidia-smi prints one class per pair, the same in both rows.
  for (const auto& [a, cells] : m.rows)
    for (const auto& [b, other] : m.rows) {
      if (a >= b) continue;
      const std::string& ab = cells[static_cast<std::size_t>(std::find(m.header.begin(), m.header.end(), b) - m.header.begin())];
      const std::string& ba = other[static_cast<std::size_t>(std::find(m.header.begin(), m.header.end(), a) - m.header.begin())];
      if (ab != ba)
        throw Error(origin + ": " + a + "-" + b + " is " + ab + " in " + a + "'s row (line " + std::to_string(row_line[a]) +
                    ") but " + ba + " in " + b + "'s (line " + std::to_string(row_line[b]) + "): an edited matrix?");
    }
  return m;
}

LinkGenerations link_generations_of(const std::string& arch) {
  // A timing model's family: a model name starts with it (ampere-nccl2.8; h200 is a Hopper GPU, gb200
  // a Blackwell one).
  auto is = [&](const char* family) { return arch.rfind(family, 0) == 0; };
  if (is("volta")) return {"2", "3"};
  if (is("ampere")) return {"3", "4"};
  if (is("blackwell") || is("gb200") || is("gb10")) return {"5", "5"};
  return {"4", "5"};  // hopper, h200
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
    // NVSwitches from NVLink 4 (Hopper) on reduce in the switch (NVLS), as the XML import has it.
    const bool nvls = std::atoi(o.nvlink_generation.c_str()) >= 4;
    const DeviceId sw = t.add_device({"nvswitch", DeviceKind::nvswitch, 0, "", nvls});
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

  // Sockets: the GPUs' NUMA nodes where the text has them, else their CPU affinities (GPUs of one
  // affinity share a socket; an older nvidia-smi prints no NUMA column), NICs following the first
  // GPU they are not SYS to. Otherwise devices joined by a PCIe class share a socket, and groups
  // with no SYS pair between them are merged.
  std::map<std::string, int> socket;
  if (numa.size() != gpus.size() && m.cpu_affinity.size() == gpus.size()) {
    std::map<std::string, int> ids;
    numa.clear();
    for (const auto& g : gpus) numa[g] = ids.emplace(m.cpu_affinity.at(g), static_cast<int>(ids.size())).first->second;
  }
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
    // pairs tell nothing). Where it does not, the matrix wins; SYS inside one NUMA node (an AMD
    // socket's root complexes are SYS to each other: the 8-GPU EPYC RTX 4090 box of
    // shared/data/topologies) then joins those groups through their socket, below.
    // A NIC SYS to every GPU says nothing of its own socket (a GB200 tray's NICs on the Graces,
    // whose GPUs come in by C2C): it sits with the first GPU and is left out of the check.
    auto unplaced = [&](const std::string& label) {
      if (label.rfind("NIC", 0) != 0 && label.rfind("mlx5_", 0) != 0) return false;
      return std::all_of(gpus.begin(), gpus.end(), [&](const std::string& g) { return cls(label, g) == "SYS"; });
    };
    for (int i = 0; i < n && numa_usable; ++i)
      for (int j = i + 1; j < n && numa_usable; ++j) {
        const std::string c = pair_class(i, j);
        if (c.rfind("NV", 0) == 0 || unplaced(all[static_cast<std::size_t>(i)]) || unplaced(all[static_cast<std::size_t>(j)]))
          continue;
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
  // How the CPU groups join: where every group's GPUs share one NUMA node (the NUMA column, or
  // the CPU affinity), a NUMA node of several groups joins them through a socket of its own and
  // only the sockets are joined to each other, as a machine's sockets are; otherwise each pair.
  std::map<int, int> group_numa;  // CPU group -> NUMA node
  bool numa_groups = !numa.empty() && numa.size() == gpus.size();
  for (const auto& g : gpus) {
    if (!numa_groups) break;
    const auto [it, fresh] = group_numa.emplace(socket[g], numa[g]);
    numa_groups = fresh || it->second == numa[g];
  }
  std::set<int> numa_nodes;
  for (const auto& [group, node] : group_numa) numa_nodes.insert(node);
  if (numa_groups && group_numa.size() == cpus.size() && numa_nodes.size() < cpus.size()) {
    std::map<int, DeviceId> hubs;
    for (const int node : numa_nodes) {
      std::vector<DeviceId> members;
      for (const auto& [group, in] : group_numa)
        if (in == node) members.push_back(cpus[group]);
      if (members.size() == 1) {
        hubs[node] = members.front();
        continue;
      }
      hubs[node] = t.add_device({"socket" + std::to_string(node), DeviceKind::cpu, 0, "", false});
      for (const DeviceId c : members) t.add_link(c, hubs[node], LinkKind::cpu, o.cpu_link, 1);
    }
    for (auto a = hubs.begin(); a != hubs.end(); ++a)
      for (auto b = std::next(a); b != hubs.end(); ++b) t.add_link(a->second, b->second, LinkKind::cpu, o.cpu_link, 1);
  } else {
    for (auto a = cpus.begin(); a != cpus.end(); ++a)
      for (auto b = std::next(a); b != cpus.end(); ++b) t.add_link(a->second, b->second, LinkKind::cpu, o.cpu_link, 1);
  }

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
