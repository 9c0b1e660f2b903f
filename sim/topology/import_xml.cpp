#include "sim/topology/import_xml.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <pugixml.hpp>

#include "sim/error.hpp"
#include "sim/topology/gpu_models.hpp"

namespace ccsim::topo {

namespace {

int line_of(const std::string& text, std::ptrdiff_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + std::min<std::ptrdiff_t>(offset, static_cast<std::ptrdiff_t>(text.size())), '\n'));
}

std::string nvlink_generation_of_sm(int sm) {
  if (sm >= 100) return "5";
  if (sm >= 90) return "4";
  if (sm >= 80) return "3";
  if (sm >= 70) return "2";
  return "1";
}

// "32.0 GT/s PCIe" -> "5"; 0 when absent or unknown.
int pcie_generation_of(const std::string& speed) {
  const double gts = std::atof(speed.c_str());
  if (gts >= 60) return 6;
  if (gts >= 30) return 5;
  if (gts >= 15) return 4;
  if (gts >= 7) return 3;
  return 0;  // absent, or an idle link trained down (the dump reads the current speed)
}

struct Builder {
  const std::string& text;
  const std::string& origin;
  const XmlImportOptions& options;
  Topology& t;
  int switches = 0, nics = 0;
  std::vector<std::pair<int, DeviceId>> gpu_order;  // (rank or dev, device)
  // A dump of several hosts (an NVLink domain across trays: every host's own PCIe tree, whose bus
  // ids repeat from host to host) names each host's devices "n<k>.", as the presets name nodes'.
  std::string prefix;
  std::map<std::string, DeviceId> gpu_by_bus;  // prefix + bus id
  std::vector<std::tuple<DeviceId, std::string, std::string, int, std::string, int, int>> nvlinks;  // gpu, prefix, target, count, tclass, sm, line
  int max_sm = 0;
  DeviceId cpu = 0;  // the CPU whose pci tree is being walked

  Builder(const std::string& txt, const std::string& org, const XmlImportOptions& o, Topology& topology)
      : text(txt), origin(org), options(o), t(topology) {}

  [[noreturn]] void fail(const pugi::xml_node& node, const std::string& what) {
    throw Error(origin + ":" + std::to_string(line_of(text, node.offset_debug())) + ": " + what);
  }

  // The fastest generation below a node: an idle bridge reports its trained-down speed.
  int fastest_below(const pugi::xml_node& pci, int depth = 0) {
    int best = pcie_generation_of(pci.attribute("link_speed").as_string());
    if (depth < 64)
      for (auto child : pci.children("pci")) best = std::max(best, fastest_below(child, depth + 1));
    return best;
  }

  void link_up(DeviceId child, DeviceId parent, const pugi::xml_node& pci) {
    int gen = pcie_generation_of(pci.attribute("link_speed").as_string());
    if (gen == 0) gen = fastest_below(pci);
    if (gen == 0) gen = 4;  // no speed recorded anywhere (provider-written files): PCIe Gen4
    int width = pci.attribute("link_width").as_int(16);
    if (width <= 0) width = 16;
    t.add_link(child, parent, LinkKind::pcie, std::to_string(gen), width);
  }

  void walk_pci(const pugi::xml_node& pci, DeviceId parent, int depth = 0) {
    // NCCL's dumps nest a few bridges deep; a file nesting hundreds is not one (and would exhaust the stack).
    if (depth > 64) fail(pci, "pci elements nested more than 64 deep: not an NCCL topology dump");
    const std::string cls = pci.attribute("class").as_string();
    if (cls.empty()) fail(pci, "pci element without a class attribute");
    const std::string bus = pci.attribute("busid").as_string();
    if (cls.rfind("0x0604", 0) == 0) {  // bridge: a PCIe switch
      const DeviceId sw = t.add_device({prefix + "pcie" + std::to_string(switches++), DeviceKind::pcie_switch, 0, "", false});
      link_up(sw, parent, pci);
      for (auto child : pci.children("pci")) walk_pci(child, sw, depth + 1);
    } else if (cls.rfind("0x03", 0) == 0) {  // display controller: a GPU
      const auto gpu = pci.child("gpu");
      const int sm = gpu ? gpu.attribute("sm").as_int(0) : 0;
      max_sm = std::max(max_sm, sm);
      // GB10 (sm 121) has a model of its own; other sm numbers take their family's.
      std::string arch = sm == 121 ? "gb10" : sm > 0 ? family_of_sm(sm) : options.arch;
      if (arch.empty()) fail(pci, "GPU " + bus + " has no sm attribute: give the GPU family (--arch)");
      if (gpu_by_bus.count(prefix + bus)) fail(pci, "a second GPU at bus id " + bus);
      const DeviceId id = t.add_device({prefix + "gpu@" + bus, DeviceKind::gpu, 0, arch, false});
      // NVLink-C2C to its Grace: a GPU the dump lists straight under the CPU reaches it by C2C
      // alone; one behind a switch (GB300's ConnectX-8) keeps that PCIe path to its NICs as well.
      // Every Grace superchip's C2C carries 900 GB/s both ways (configs/links.json grace-hopper),
      // whatever NCCL's bw attribute says of its own view.
      const bool c2c = gpu && gpu.child("c2c");
      if (c2c) t.add_link(id, cpu, LinkKind::c2c, "grace-hopper", 1);
      if (!c2c || parent != cpu) link_up(id, parent, pci);
      gpu_by_bus[prefix + bus] = id;
      const int order = gpu ? gpu.attribute("rank").as_int(gpu.attribute("dev").as_int(static_cast<int>(gpu_order.size())))
                            : static_cast<int>(gpu_order.size());
      gpu_order.emplace_back(order, id);
      if (gpu)
        for (auto nv : gpu.children("nvlink"))
          nvlinks.emplace_back(id, prefix, nv.attribute("target").as_string(), nv.attribute("count").as_int(1),
                               nv.attribute("tclass").as_string(), sm, line_of(text, nv.offset_debug()));
    } else if (cls.rfind("0x02", 0) == 0 || pci.child("nic")) {  // a network controller, or a function NCCL uses as one
                                                                  // (a SuperNIC's DMA function, class 0x0801, holding a <nic>)
      add_nic(parent, pci);
    }
    // Other classes (storage, 0x0680 NVSwitch bridges, ...) carry no collective traffic.
  }

  // `pci` carries the link's speed and width; a NIC listed outside any pci element (a socket NIC)
  // gets the defaults of link_up.
  void add_nic(DeviceId parent, const pugi::xml_node& pci) {
    const DeviceId nic = t.add_device({prefix + "nic" + std::to_string(nics++), DeviceKind::nic, 0, "", false});
    link_up(nic, parent, pci);
  }
};

}  // namespace

bool looks_like_xml(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n\xef\xbb\xbf");
  return first != std::string_view::npos && text[first] == '<';
}

Topology import_nccl_xml(const std::string& text, const std::string& origin, const XmlImportOptions& options) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
  if (!parsed)
    throw Error(origin + ":" + std::to_string(line_of(text, parsed.offset)) + ": XML error: " + parsed.description());
  const pugi::xml_node system = doc.child("system");
  if (!system) {
    if (doc.child("graphs"))
      throw Error(origin + ": no <system> element: <graphs> is NCCL's search result (NCCL_GRAPH_DUMP_FILE), not the "
                           "machine; import its topology dump (NCCL_TOPO_DUMP_FILE)");
    throw Error(origin + ": no <system> element (not an NCCL topology dump)");
  }
  Topology topology(origin);
  Builder b(text, origin, options, topology);
  std::vector<DeviceId> cpus;
  std::set<std::string> cpu_names;
  std::vector<std::string> cpu_hosts;  // each CPU's host_hash
  std::vector<std::string> hosts;      // in order of appearance
  for (auto cpu : system.children("cpu"))
    if (const std::string h = cpu.attribute("host_hash").as_string(); std::find(hosts.begin(), hosts.end(), h) == hosts.end())
      hosts.push_back(h);
  std::string vendor, cpu_arch;
  int model = 0;
  for (auto cpu : system.children("cpu")) {
    const std::string host = cpu.attribute("host_hash").as_string();
    const auto k = std::find(hosts.begin(), hosts.end(), host) - hosts.begin();
    b.prefix = hosts.size() > 1 ? "n" + std::to_string(k) + "." : "";
    // A CPU is named by its NUMA id; VMs write -1 for every socket, so an id that is not a
    // number, is negative or repeats takes the CPU's place in the dump instead.
    std::string name = b.prefix + "cpu" + cpu.attribute("numaid").as_string();
    const int numaid = cpu.attribute("numaid").as_int(-1);
    if (numaid < 0 || std::to_string(numaid) != cpu.attribute("numaid").as_string() || cpu_names.count(name))
      name = b.prefix + "cpu#" + std::to_string(cpus.size());
    cpu_names.insert(name);
    const DeviceId id = b.t.add_device({name, DeviceKind::cpu, 0, "", false});
    b.cpu = id;
    cpus.push_back(id);
    cpu_hosts.push_back(host);
    vendor = cpu.attribute("vendor").as_string();
    cpu_arch = cpu.attribute("arch").as_string();
    model = cpu.attribute("modelid").as_int(0);
    for (auto pci : cpu.children("pci")) b.walk_pci(pci, id);
    for (auto nic [[maybe_unused]] : cpu.children("nic")) b.add_nic(id, pugi::xml_node());  // socket NICs
  }
  b.prefix.clear();
  if (cpus.empty()) throw Error(origin + ": <system> has no <cpu> element");
  // The sockets of one host are joined (NCCL's own figure for Arm's link, ARM_BW, is grace-nvlink's);
  // those of different hosts only through what joins their GPUs.
  const std::string cpu_link = cpu_arch == "arm64"          ? "grace-nvlink"
                               : vendor == "AuthenticAMD"   ? "xgmi"
                               : (vendor == "GenuineIntel" && model < 143) ? "upi-skl"
                                                                          : "upi-spr";
  for (std::size_t i = 0; i < cpus.size(); ++i)
    for (std::size_t j = i + 1; j < cpus.size(); ++j)
      if (cpu_hosts[i] == cpu_hosts[j]) b.t.add_link(cpus[i], cpus[j], LinkKind::cpu, cpu_link, 1);

  // NVLink: bonds to NVSwitches (one device per target; the hidden VM target stands for the whole
  // fabric), or to a peer GPU (each direction is listed on both GPUs: keep one).
  std::map<std::string, DeviceId> switches;
  std::set<std::pair<DeviceId, DeviceId>> peer_links;
  // The hidden fabric target is one NVLink domain, which every host of the dump reaches (trays of a
  // rack); any other target is a device of the GPU's own host.
  auto left_out = [&](int line, const std::string& what) {
    if (options.notes) options.notes->push_back(origin + ":" + std::to_string(line) + ": " + what + ": left out");
  };
  for (const auto& [gpu, host, target, count, tclass, sm, line] : b.nvlinks) {
    if (tclass == "0x068000" || target.rfind("fffffff", 0) == 0) {
      const std::string key = target.rfind("fffffff", 0) == 0 ? target : host + target;
      if (!switches.count(key))
        switches[key] = b.t.add_device({"nvswitch" + std::to_string(switches.size()), DeviceKind::nvswitch, 0, "",
                                        sm >= 90});  // NVSwitch gen 3 (Hopper) reduces: NVLS
      b.t.add_link(gpu, switches[key], LinkKind::nvlink, nvlink_generation_of_sm(sm), count);
    } else if (tclass == "0x030200" || tclass == "0x030000") {
      auto it = b.gpu_by_bus.find(host + target);
      if (it == b.gpu_by_bus.end()) {
        left_out(line, "an NVLink to " + target + ", which the dump lists no GPU at");
        continue;
      }
      if (it->second == gpu) continue;  // providers sometimes point a GPU's links at itself (Azure NC A100 v4)
      const auto key = std::minmax(gpu, it->second);
      if (peer_links.insert(key).second) b.t.add_link(gpu, it->second, LinkKind::nvlink, nvlink_generation_of_sm(sm), count);
    } else {
      left_out(line, "an NVLink to " + target + " of class " + tclass + " (a CPU's, as POWER9's), which ccsim does not model");
    }
  }
  if (b.t.gpu_count() == 0) throw Error(origin + ": the dump lists no GPU");
  // Ranks follow NCCL's rank (or dev) attributes, not document order.
  std::stable_sort(b.gpu_order.begin(), b.gpu_order.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<DeviceId> order;
  for (const auto& [rank, id] : b.gpu_order) order.push_back(id);
  b.t.set_gpu_order(order);
  topology.gpu_arch();  // one GPU family
  return topology;
}

}  // namespace ccsim::topo
