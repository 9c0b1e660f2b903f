#include "sim/algorithms/hierarchical.hpp"

#include "sim/algorithms/compose.hpp"
#include "sim/algorithms/pipeline.hpp"
#include "sim/error.hpp"

namespace ccsim::algo {

Schedule hierarchical(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const int n = spec.nranks;
  const int ppn = ranks_per_node(spec, options, "hierarchical");
  const int nodes = n / ppn;
  const std::string intra = options.levels.size() > 0 ? options.levels[0] : "ring";
  const std::string inter = options.levels.size() > 1 ? options.levels[1] : "ring";
  if (intra == "hierarchical" || inter == "hierarchical") throw Error("hierarchical: a level cannot be hierarchical itself");
  Composer composer(spec, options, "hierarchical");
  // Intermediate phases reduce with the plain op; the op's last touch (avg's division by N) is
  // applied once, when a shard is final.
  CollectiveSpec part_spec = spec;
  if (spec.op == ReduceOp::avg) part_spec.op = ReduceOp::sum;
  auto node_ranks = [&](int node) {
    std::vector<int> r;
    for (int l = 0; l < ppn; ++l) r.push_back(node * ppn + l);
    return r;
  };
  // Each channel runs a whole hierarchical all_reduce on its own slice of the buffer.
  for (int c = 0; c < options.channels; ++c) {
    const Part slice = channel_part(spec.count, options.channels, c);
    const std::uint64_t shard = slice.count / static_cast<std::uint64_t>(ppn);
    const std::uint64_t main = shard * static_cast<std::uint64_t>(ppn), tail = slice.count - main;
    const std::uint64_t at = slice.offset;
    if (main > 0) {
      for (int node = 0; node < nodes; ++node) {
        Phase rs{intra, part_spec, node_ranks(node), c, nullptr, false};
        rs.spec.kind = CollectiveKind::reduce_scatter;
        rs.spec.nranks = ppn;
        rs.spec.count = main;
        rs.base = [at, shard](int l, BufferId b) {
          if (b == BufferId::scratch) return Region{b, 0, 0};
          return Region{b, at + (b == BufferId::output ? static_cast<std::uint64_t>(l) * shard : 0), 0};
        };
        composer.add(rs);
      }
      for (int l = 0; l < ppn; ++l) {
        std::vector<int> peers;
        for (int node = 0; node < nodes; ++node) peers.push_back(node * ppn + l);
        Phase ar{inter, part_spec, peers, c, nullptr, false, 1};
        ar.spec.kind = CollectiveKind::all_reduce;
        ar.spec.nranks = nodes;
        ar.spec.count = shard;
        ar.base = [at, shard, l](int, BufferId b) {  // in place on the shard
          if (b == BufferId::scratch) return Region{b, 0, 0};
          return Region{BufferId::output, at + static_cast<std::uint64_t>(l) * shard, 0};
        };
        composer.add(ar);
        if (spec.op == ReduceOp::avg || spec.op == ReduceOp::lor)  // the shard is final here
          for (int node = 0; node < nodes; ++node) {
            const Region mine{BufferId::output, at + static_cast<std::uint64_t>(l) * shard, shard};
            composer.writer(node * ppn + l, c).copy(mine, mine, true);
          }
      }
      for (int node = 0; node < nodes; ++node) {
        Phase ag{intra, spec, node_ranks(node), c, nullptr, true};
        ag.spec.kind = CollectiveKind::all_gather;
        ag.spec.nranks = ppn;
        ag.spec.count = main;
        ag.base = [at, shard](int l, BufferId b) {
          if (b == BufferId::scratch) return Region{b, 0, 0};
          return Region{BufferId::output, at + (b == BufferId::input ? static_cast<std::uint64_t>(l) * shard : 0), 0};
        };
        composer.add(ag);
      }
    }
    if (tail > 0) {
      std::vector<int> everyone;
      for (int r = 0; r < n; ++r) everyone.push_back(r);
      Phase rest{inter, spec, everyone, c, nullptr, true, ppn};
      rest.spec.kind = CollectiveKind::all_reduce;
      rest.spec.count = tail;
      rest.base = [at, main](int, BufferId b) { return Region{b, b == BufferId::scratch ? 0 : at + main, 0}; };
      composer.add(rest);
    }
  }
  return composer.take();
}

}  // namespace ccsim::algo
