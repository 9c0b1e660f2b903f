#include "sim/topology/rings.hpp"

#include <algorithm>

namespace ccsim::topo {

std::vector<std::vector<int>> rings(const Topology& topology, int nranks, int channels) {
  const int ppn = std::min(topology.gpus_per_node(), nranks);
  const int nodes = nranks / ppn;
  std::vector<std::vector<int>> out;
  for (int c = 0; c < channels; ++c) {
    std::vector<int> ring;
    for (int node = 0; node < nodes; ++node)
      for (int k = 0; k < ppn; ++k) {
        const int step = node % 2 == 0 ? k : ppn - 1 - k;  // snake: exit and entry GPU share a rail
        ring.push_back(node * ppn + (c + step) % ppn);
      }
    for (int r = nodes * ppn; r < nranks; ++r) ring.push_back(r);  // ranks of a partial last node
    out.push_back(std::move(ring));
  }
  return out;
}

}  // namespace ccsim::topo
