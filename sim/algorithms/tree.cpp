#include "sim/algorithms/tree.hpp"

#include "sim/algorithms/pipeline.hpp"
#include "sim/error.hpp"

namespace ccsim::algo {

namespace {

// Tree 0: node 0 is the root with one child; nodes 1..n-1 form a balanced in-order tree in which
// node v sits at the level of its lowest set bit, so odd nodes are leaves.
std::vector<int> tree0(int n) {
  std::vector<int> parent(static_cast<std::size_t>(n), -1);
  if (n < 2) return parent;
  int top = 1;
  while (top * 2 < n) top *= 2;
  parent[static_cast<std::size_t>(top)] = 0;
  for (int v = 1; v < n; ++v) {
    const int low = v & -v;
    if (low >= 2) parent[static_cast<std::size_t>(v - low / 2)] = v;
    for (int step = low / 2; step >= 1; step /= 2)
      if (v + step < n) {
        parent[static_cast<std::size_t>(v + step)] = v;
        break;
      }
  }
  return parent;
}

}  // namespace

std::vector<int> double_binary_tree(int n, int which) {
  const std::vector<int> t0 = tree0(n);
  if (which == 0) return t0;
  std::vector<int> t1(static_cast<std::size_t>(n), -1);
  // Tree 1 relabels tree 0: mirrored (x -> n-1-x) for even n, shifted by one for odd n.
  auto map = [n](int x) { return n % 2 == 0 ? n - 1 - x : (x + 1) % n; };
  for (int x = 0; x < n; ++x) {
    const int p = t0[static_cast<std::size_t>(x)];
    t1[static_cast<std::size_t>(map(x))] = p < 0 ? -1 : map(p);
  }
  return t1;
}

Schedule tree(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const int n = spec.nranks;
  const int ppn = options.ranks_per_node > 0 ? options.ranks_per_node : n;
  if (n % ppn != 0)
    throw Error("tree: " + std::to_string(n) + " ranks do not split into nodes of " + std::to_string(ppn));
  const int nodes = n / ppn;
  Schedule schedule{spec, "tree", {}, 0, {}};
  const std::uint64_t chunk = chunk_elements(spec, options);
  const std::uint64_t align = align_elements(spec);
  const std::vector<int> node_parent[2] = {double_binary_tree(nodes, 0), double_binary_tree(nodes, 1)};

  for (int c = 0; c < options.channels; ++c) {
    const std::vector<int>& up = node_parent[c % 2];
    const auto loops = chunk_loops(spec.count, 1, options.channels, c, chunk, align);
    for (int r = 0; r < n; ++r) {
      const int node = r / ppn, local = r % ppn;
      int parent = local > 0 ? r - 1 : (up[static_cast<std::size_t>(node)] >= 0 ? up[static_cast<std::size_t>(node)] * ppn : -1);
      std::vector<int> children;
      if (local + 1 < ppn) children.push_back(r + 1);
      if (local == 0)
        for (int m = 0; m < nodes; ++m)
          if (up[static_cast<std::size_t>(m)] == node) children.push_back(m * ppn);
      const bool root = parent < 0;
      const int up_tag = 2 * c, down_tag = 2 * c + 1;

      Stream reduce_stream{r, c, {}}, broadcast_stream{r, c, {}};
      StepWriter u(reduce_stream, options.protocol, up_tag);
      StepWriter d(root ? reduce_stream : broadcast_stream, options.protocol, down_tag);
      for (const auto& loop : loops) {
        const Region in = piece(BufferId::input, loop, 0, spec.count);
        const Region out = piece(BufferId::output, loop, 0, spec.count);
        if (children.empty() && root) u.copy(in, out, true);
        for (std::size_t i = 0; i < children.size(); ++i)
          u.recv_reduce(children[i], i == 0 ? in : out, out, root && i + 1 == children.size());
        if (!root) {
          u.send(parent, children.empty() ? in : out);
          d.recv(parent, out);
        }
        for (int child : children) d.send(child, out);
      }
      schedule.streams.push_back(std::move(reduce_stream));
      if (!root) schedule.streams.push_back(std::move(broadcast_stream));
    }
  }
  return schedule;
}

}  // namespace ccsim::algo
