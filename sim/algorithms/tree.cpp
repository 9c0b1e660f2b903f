#include "sim/algorithms/tree.hpp"

#include "sim/algorithms/pipeline.hpp"
#include "sim/error.hpp"

#include <algorithm>

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

namespace {

// A rank's neighbours in the chain-plus-tree: its parent (-1 at the root) and its children (the next
// GPU of its node's chain first, then, for a node's head, the heads of its child nodes).
struct Links {
  int parent = -1;
  std::vector<int> children;
};

// `chain` lists a node's GPUs (local indices) in chain order, its head first; every node uses the
// same order. Nodes are relabelled so that `root_node` is node 0 of the tree.
Links links_of(int r, int ppn, int nodes, const std::vector<int>& node_parent, const std::vector<int>& chain, int root_node) {
  std::vector<int> position(static_cast<std::size_t>(ppn));
  for (int k = 0; k < ppn; ++k) position[static_cast<std::size_t>(chain[static_cast<std::size_t>(k)])] = k;
  auto rank_of = [&](int node_rel, int pos) {
    return ((node_rel + root_node) % nodes) * ppn + chain[static_cast<std::size_t>(pos)];
  };
  const int node = (r / ppn - root_node + nodes) % nodes, pos = position[static_cast<std::size_t>(r % ppn)];
  Links links;
  if (pos > 0) links.parent = rank_of(node, pos - 1);
  else if (node_parent[static_cast<std::size_t>(node)] >= 0) links.parent = rank_of(node_parent[static_cast<std::size_t>(node)], 0);
  if (pos + 1 < ppn) links.children.push_back(rank_of(node, pos + 1));
  if (pos == 0)
    for (int m = 0; m < nodes; ++m)
      if (node_parent[static_cast<std::size_t>(m)] == node) links.children.push_back(rank_of(m, 0));
  return links;
}

// The chain of channel c inside every node: the node-0 stretch of the channel's ring when the
// planner laid rings out on the topology (so the chain follows NVLink on a mesh, and heads rotate
// over the NICs as the rings' entry GPUs do), else GPU `head`, head + 1, ...; rotated so that
// `head` leads when a root must head it.
std::vector<int> chain_of(const AlgorithmOptions& options, int c, int ppn, int head, bool rotate_to_head) {
  std::vector<int> chain(static_cast<std::size_t>(ppn));
  const auto& rings = options.rings;
  if (rings.empty() || static_cast<int>(rings[static_cast<std::size_t>(c) % rings.size()].size()) < ppn) {
    for (int k = 0; k < ppn; ++k) chain[static_cast<std::size_t>(k)] = (head + k) % ppn;
    return chain;
  }
  const auto& ring = rings[static_cast<std::size_t>(c) % rings.size()];
  for (int k = 0; k < ppn; ++k) chain[static_cast<std::size_t>(k)] = ring[static_cast<std::size_t>(k)] % ppn;
  if (rotate_to_head) std::rotate(chain.begin(), std::find(chain.begin(), chain.end(), head), chain.end());
  return chain;
}

}  // namespace

Schedule tree(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const int n = spec.nranks;
  const int ppn = ranks_per_node(spec, options, "tree");
  const int nodes = n / ppn;
  Schedule schedule{spec, "tree", {}, 0, {}};
  const std::uint64_t chunk = chunk_elements(spec, options);
  const std::uint64_t align = align_elements(spec);
  const std::vector<int> node_parent[2] = {double_binary_tree(nodes, 0), double_binary_tree(nodes, 1)};
  const bool all_reduce = spec.kind == CollectiveKind::all_reduce;
  const Hops hops(spec, options);

  for (int c = 0; c < options.channels; ++c) {
    // all_reduce alternates the two trees over channels; broadcast and reduce use tree 0 from the root.
    const std::vector<int>& up = node_parent[all_reduce ? c % 2 : 0];
    const auto loops = chunk_loops(spec.count, 1, options.channels, c, chunk, align);
    // all_reduce heads each node's chain with a GPU that rotates over the channels, so channels
    // spread over the NICs (NCCL gives every tree channel its own NIC); broadcast and reduce head
    // it with the root.
    const std::vector<int> chain = chain_of(options, c, ppn, all_reduce ? c % ppn : spec.root % ppn, !all_reduce);
    const int root_node = all_reduce ? 0 : spec.root / ppn;
    for (int r = 0; r < n; ++r) {
      const Links links = links_of(r, ppn, nodes, up, chain, root_node);
      const bool root = links.parent < 0;
      const int up_tag = 2 * c, down_tag = 2 * c + 1;
      Stream reduce_stream{r, c, {}}, broadcast_stream{r, c, {}};
      if (!root && all_reduce) {
        reduce_stream.block_share = static_cast<float>(split_reduce_share(options.protocol));
        broadcast_stream.block_share = 1 - reduce_stream.block_share;
      }
      StepWriter u(reduce_stream, options.protocol, up_tag);
      StepWriter d(root || !all_reduce ? reduce_stream : broadcast_stream, options.protocol, down_tag);
      // With LL and LL128 a chunk streams through the GPUs of a node's chain piece by piece (Hops);
      // a node's head also takes whole chunks from other nodes' heads, so it posts all its receives
      // together (transfers at once, combined in order) before it sends.
      std::vector<int> whole, streamed;
      for (int child : links.children) (hops.cut_through(child, r) ? streamed : whole).push_back(child);
      const bool stream_up = !root && hops.cut_through(r, links.parent);
      for (const auto& loop : loops) {
        const Region in = piece(BufferId::input, loop, 0, spec.count);
        const Region out = piece(BufferId::output, loop, 0, spec.count);
        const std::vector<Region> parts = streamed.empty() ? std::vector<Region>{} : hops.pieces(out, streamed.front(), r);
        const bool per_piece = whole.empty() && parts.size() > 1;
        // The root of an all_reduce sends each piece down as soon as it is reduced.
        const bool turn = root && all_reduce && per_piece;
        if (spec.kind != CollectiveKind::broadcast) {  // reduce up the tree
          if (links.children.empty() && root) u.copy(in, out, true);
          if (!per_piece) u.begin_overlap();  // children's partials arrive together
          for (std::size_t i = 0; i < whole.size(); ++i)
            u.recv_reduce(whole[i], i == 0 ? in : out, out, root && streamed.empty() && i + 1 == whole.size());
          for (std::size_t k = 0; k < parts.size(); ++k) {
            if (per_piece) u.begin_overlap();
            for (std::size_t i = 0; i < streamed.size(); ++i)
              u.recv_reduce(streamed[i], whole.empty() && i == 0 ? same_part(parts[k], out, in) : parts[k], parts[k],
                            root && i + 1 == streamed.size());
            if (!per_piece) continue;
            u.end_overlap();
            if (stream_up) u.send_piece(links.parent, parts[k], k);
            if (turn)
              for (int child : streamed) d.send_piece(child, parts[k], k);
          }
          if (!per_piece) u.end_overlap();
          if (!root && !(stream_up && per_piece))
            u.send_pieces(links.parent, hops.pieces(links.children.empty() ? in : out, r, links.parent));
        }
        if (spec.kind != CollectiveKind::reduce) {  // broadcast down it
          bool sent = turn;  // the pieces went down as they were reduced
          if (!root) {
            const std::vector<Region> from_parent = hops.pieces(out, links.parent, r);
            sent = from_parent.size() > 1 && !streamed.empty();
            for (std::size_t k = 0; k < from_parent.size(); ++k) {
              d.recv(links.parent, from_parent[k]);
              if (sent)
                for (int child : streamed) d.send_piece(child, from_parent[k], k);
            }
          } else if (spec.kind == CollectiveKind::broadcast) {
            d.copy(in, out);
          }
          for (int child : whole) d.send(child, out);
          if (!sent)
            for (int child : streamed) d.send_pieces(child, hops.pieces(out, r, child));
        }
      }
      schedule.streams.push_back(std::move(reduce_stream));
      if (!broadcast_stream.steps.empty()) schedule.streams.push_back(std::move(broadcast_stream));
    }
  }
  return schedule;
}

}  // namespace ccsim::algo
