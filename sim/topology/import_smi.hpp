#pragma once
// Importer for `nvidia-smi topo -m` text (reference/nccl-model.md §6.3). The matrix gives path
// classes, not devices, so the importer builds the simplest machine that reproduces them:
//  - NV# between every GPU pair with # x (N-1) above a GPU's 18 lanes means an NVSwitch fabric
//    with # lanes per GPU; otherwise NV# is a direct bond of # lanes;
//  - GPUs and NICs join a CPU per NUMA node (the GPUs' "NUMA Affinity", NICs follow a GPU they are
//    not SYS to); CPUs are joined pairwise;
//  - PIX groups share a PCIe switch, PXB-related groups share a parent switch, the rest sit on a
//    CPU root port (NODE between them). PHB is read as NODE (we model no shared host bridge).
// GPU model, PCIe generation, CPU link and NIC speed are not in the text: they are parameters.
#include <map>
#include <string>
#include <vector>

#include "sim/topology/topology.hpp"

namespace ccsim::topo {

struct SmiImportOptions {
  std::string arch = "hopper";      // timing model of the GPUs
  std::string pcie_generation = "4";
  std::string nvlink_generation = "4";
  std::string cpu_link = "upi-spr";
};

// The matrix as printed: labels (GPUs first, then NICs, in header order) and each row's cells.
struct SmiMatrix {
  std::vector<std::string> gpus, nics;
  std::map<std::string, std::vector<std::string>> rows;  // label -> cells in header order
  std::vector<std::string> header;
  std::map<std::string, int> numa;  // GPU label -> NUMA affinity, where printed
  std::map<std::string, std::string> cpu_affinity;  // GPU label -> CPU affinity ("0-47,96-143"), where printed
  // The class between two labels (from whichever of the two rows is present).
  std::string cls(const std::string& a, const std::string& b) const;
};
SmiMatrix parse_nvidia_smi(const std::string& text, const std::string& origin);

// The NVLink and PCIe generations a GPU family's machines have (Volta: NVLink 2, PCIe Gen3;
// Ampere: 3, Gen4; Hopper: 4, Gen5; Blackwell: 5, Gen5), which `nvidia-smi topo -m` does not print.
struct LinkGenerations {
  std::string nvlink, pcie;
};
LinkGenerations link_generations_of(const std::string& arch);

// `origin` names the text in errors ("file.txt:12: ...").
Topology import_nvidia_smi(const std::string& text, const std::string& origin, const SmiImportOptions& options = {});

}  // namespace ccsim::topo
