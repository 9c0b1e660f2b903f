#pragma once
// Importer for NCCL's topology dump (NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE XML, reference/
// nccl-model.md §6.1): cpu elements become sockets, nested pci bridges PCIe switches, pci GPUs and
// NICs their devices, nvlink elements NVLink bonds (to an NVSwitch fabric for tclass 0x068000 or
// the hidden target fffffff:ff:ff.0 of VMs, else to the peer GPU). GPU families and NVLink
// generations come from `sm`; PCIe generations from link_speed; a GPU's <c2c> is NVLink-C2C to its
// CPU (Grace), in place of a PCIe link straight to it.
#include <string>
#include <string_view>
#include <vector>

#include "sim/topology/topology.hpp"

namespace ccsim::topo {

struct XmlImportOptions {
  std::string arch;  // GPU timing model when the dump has no `sm` (flattened dumps); else from sm
  // Where given, what the dump holds and the import leaves out (an NVLink to a device the dump does
  // not list, to a CPU), one line each with its line number.
  std::vector<std::string>* notes = nullptr;
};

// Whether a text is an NCCL topology dump rather than `nvidia-smi topo -m` text or JSON: XML, whose
// first character past blanks (and a UTF-8 byte-order mark) is '<', whatever the file is called.
bool looks_like_xml(std::string_view text);

Topology import_nccl_xml(const std::string& text, const std::string& origin, const XmlImportOptions& options = {});

}  // namespace ccsim::topo
