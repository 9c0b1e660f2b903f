#include "sim/algorithms/nvls.hpp"

#include <algorithm>

#include "sim/algorithms/collnet.hpp"
#include "sim/algorithms/pipeline.hpp"
#include "sim/algorithms/tree.hpp"
#include "sim/error.hpp"

namespace ccsim::algo {

namespace {

// NCCL_NVLS_CHUNKSIZE default (reference/nccl-model.md §1.5).
constexpr Bytes kNvlsChunkBytes = 128 << 10;

void require_nvls(const CollectiveSpec& spec, const AlgorithmOptions& options, const std::string& name) {
  if (!options.nvls)
    throw Error(name + " needs NVSwitches that reduce and multicast (NVLS: third-generation NVSwitch, Hopper or "
                       "later); this topology has none");
  if (!is_reduction(spec.kind)) return;
  if (spec.op == ReduceOp::prod || spec.op == ReduceOp::lor)
    throw Error(name + ": NVSwitch reduces with sum, min and max (avg as a sum); not " + std::string(to_string(spec.op)));
  if (spec.type == DataType::int8 || spec.type == DataType::uint8)
    throw Error(name + ": NVSwitch has no 8-bit reductions (multimem.ld_reduce)");
  // multimem.ld_reduce takes .min and .max for integers, f16 and bf16 only (PTX ISA).
  if ((spec.type == DataType::fp32 || spec.type == DataType::fp64) && spec.op != ReduceOp::sum && spec.op != ReduceOp::avg)
    throw Error(name + ": NVSwitch reduces " + std::string(to_string(spec.type)) + " with sum only (multimem.ld_reduce); not " +
                std::string(to_string(spec.op)));
}

// How the nodes' NVLS reductions meet: one node, a double binary tree among the GPUs that head the
// same part (nvls_tree), or the network switches of their rails (NVLS with CollNet/SHARP).
enum class Across { none, tree, sharp };

// NVLS inside every node (its own switch endpoint), and across nodes, between the node-local
// reduction and the multicast, the exchange `across` names.
Schedule build(const CollectiveSpec& spec, const AlgorithmOptions& options, Across across) {
  const int n = spec.nranks;
  const int ppn = across == Across::none ? n : ranks_per_node(spec, options, across == Across::tree ? "nvls_tree" : "nvls");
  const int nodes = n / ppn;
  Schedule schedule{spec, across == Across::tree ? "nvls_tree" : "nvls", {}, spec.count, {}};
  for (int m = 0; m < nodes; ++m) schedule.switches.push_back({SwitchEndpoint::Kind::nvls, m});
  // NCCL's NVLS across nodes hands each head's node sum to the SHARP switch of the head's rail
  // (its NIC) and multicasts what comes back (nvls.cc with CollNet; reference/nccl-model.md §1.5).
  const bool sharp = across == Across::sharp;
  if (sharp)
    for (int h = 0; h < ppn; ++h) schedule.switches.push_back({SwitchEndpoint::Kind::sharp, h});
  auto rail_switch = [&](int h) { return n + nodes + h; };
  const std::uint64_t align = align_elements(spec);
  AlgorithmOptions chunked = options;
  chunked.chunk_bytes = std::min<Bytes>(options.chunk_bytes, kNvlsChunkBytes * static_cast<Bytes>(options.blocks));
  const std::uint64_t chunk = chunk_elements(spec, chunked);
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(ppn);
  const bool all_reduce = spec.kind == CollectiveKind::all_reduce;
  const std::vector<int> trees[2] = {double_binary_tree(nodes, 0), double_binary_tree(nodes, 1)};

  for (int c = 0; c < options.channels; ++c) {
    // all_reduce: loops of ppn pieces, piece h headed by local GPU h; reduce_scatter / all_gather:
    // loops over one block, at the same offset in every block.
    const auto loops = all_reduce ? chunk_loops(spec.count, ppn, options.channels, c, chunk, align)
                                  : chunk_loops(block, 1, options.channels, c, chunk, align);
    auto region = [&](BufferId b, const ChunkLoop& loop, int h) {
      if (all_reduce) return piece(b, loop, h, spec.count);
      const Region r = piece(b, loop, 0, block);
      return Region{b, static_cast<std::uint64_t>(h) * block + r.offset, r.count};
    };
    auto tag = [&](int h) { return c * ppn + h; };
    const int multicast_tag = ppn * options.channels;  // added to tag(h) for the multicast leg
    const int up_tag = 2 * ppn * options.channels + 2 * c, down_tag = up_tag + 1;
    const int net_tag = 2 * ppn * options.channels + 2 * options.channels + c;
    const std::vector<int>& parent_node = trees[c % 2];

    for (int r = 0; r < n; ++r) {
      const int node = r / ppn, g = r % ppn, sw = n + node;
      std::vector<int> child_heads;  // the same local GPU in the tree's child nodes
      for (int m = 0; m < nodes; ++m)
        if (parent_node[static_cast<std::size_t>(m)] == node) child_heads.push_back(m * ppn + g);
      const int parent_head = parent_node[static_cast<std::size_t>(node)] >= 0 ? parent_node[static_cast<std::size_t>(node)] * ppn + g : -1;
      // Each GPU runs three streams per channel, as NCCL splits its warps by role: one feeds the
      // switch its contributions, one carries its own part (the switch's sum of it, the tree
      // exchange across nodes, the final value back to the switch), one takes the multicast results
      // in. Apart, no role waits for another's round trip: a network exchange of one chunk overlaps
      // the switch reading the next. Causality alone orders them: a part's multicast reaches a GPU
      // only after the switch has read that GPU's contribution to it.
      Stream feed{r, c, {}}, own_part{r, c, {}}, take{r, c, {}};
      StepWriter w(feed, options.protocol, 0), mine_w(own_part, options.protocol, 0), in(take, options.protocol, 0);
      // Non-roots send their part up the tree in one stream and take the result down in another,
      // so that the next chunk goes up while this one's result is still on its way back.
      Stream down{r, c, {}};
      StepWriter down_w(down, options.protocol, 0);
      for (const auto& loop : loops) {
        const Region own = piece(BufferId::output, loop, 0, block);
        // Rotated orders keep every link busy: at round k GPU g feeds head g-k, whose switch
        // stream reads from g at that same round (and multicasts back in the same pattern).
        // One chunk's contributions are one batch: the first pays the hop latency and takes a FIFO
        // slot (so a GPU runs at most NCCL_STEPS chunks ahead of the switch), the rest ride along.
        if (spec.kind != CollectiveKind::all_gather)
          for (int k = 1; k <= ppn; ++k) {
            const int h = ((g - k) % ppn + ppn) % ppn;
            w.set_tag(tag(h));
            if (k == 1) w.send(sw, region(BufferId::input, loop, h));  // read by the switch's ld_reduce
            else w.fused_send(sw, region(BufferId::input, loop, h));
          }
        mine_w.set_tag(tag(g));
        if (spec.kind == CollectiveKind::reduce_scatter) {
          mine_w.recv(sw, own, true);
          continue;
        }
        if (all_reduce && sharp) {
          const Region mine = region(BufferId::output, loop, g);
          // Up in one stream, down in another, as the tree's: the next chunk leaves for the
          // network while this one's result is on its way back.
          mine_w.recv(sw, mine);  // the node's sum of this part
          mine_w.set_tag(net_tag);
          mine_w.send(rail_switch(g), mine);
          down_w.set_tag(net_tag);
          down_w.recv(rail_switch(g), mine, true);  // every node's
          down_w.set_tag(tag(g) + multicast_tag);
          down_w.send(sw, mine);  // multimem.st of the result
        } else if (all_reduce) {
          const Region mine = region(BufferId::output, loop, g);
          const bool tree_root = parent_head < 0;
          mine_w.recv(sw, mine, tree_root && child_heads.empty());  // the node's sum of this part
          StepWriter& result = tree_root ? mine_w : down_w;
          if (!child_heads.empty() || !tree_root) {
            mine_w.set_tag(up_tag);
            mine_w.begin_overlap();
            for (std::size_t i = 0; i < child_heads.size(); ++i)
              mine_w.recv_reduce(child_heads[i], mine, mine, tree_root && i + 1 == child_heads.size());
            mine_w.end_overlap();
            if (!tree_root) {
              mine_w.send(parent_head, mine);
              down_w.set_tag(down_tag);
              down_w.recv(parent_head, mine);
            }
            result.set_tag(down_tag);
            for (int child : child_heads) result.send(child, mine);
          }
          result.set_tag(tag(g) + multicast_tag);
          result.send(sw, mine);  // multimem.st of the result
        } else {
          mine_w.set_tag(tag(g) + multicast_tag);
          mine_w.send(sw, Region{BufferId::input, own.offset, own.count});
        }
        in.begin_overlap();
        for (int k = 1; k <= ppn; ++k) {
          const int h = ((g - k) % ppn + ppn) % ppn;
          // The multicast store reaches its own head too: real traffic, same values.
          in.set_tag(tag(h) + multicast_tag);
          in.recv(sw, region(BufferId::output, loop, h));
        }
        in.end_overlap();
      }
      for (Stream* st : {&feed, &own_part, &down, &take})
        if (!st->steps.empty()) schedule.streams.push_back(std::move(*st));
    }
    // Two switch streams per node and head part, the switch serving all heads at once: one
    // reduces (ld_reduce) and hands the sum to the head, one takes the head's final value and
    // multicasts it, so a reduction never waits for an earlier chunk's network round trip.
    for (int node = 0; node < nodes; ++node)
      for (int h = 0; h < ppn; ++h) {
        Stream reducer{n + node, c, {}}, caster{n + node, c, {}};
        StepWriter w(reducer, options.protocol, tag(h)), m(caster, options.protocol, tag(h) + multicast_tag);
        auto gpu = [&](int local) { return node * ppn + local; };
        for (const auto& loop : loops) {
          const Region acc = region(BufferId::scratch, loop, h);
          if (spec.kind != CollectiveKind::all_gather) {
            w.begin_overlap();  // the switch reads every GPU at once
            for (int k = 1; k <= ppn; ++k) {
              const int g = (h + k) % ppn;
              if (k == 1) w.recv(gpu(g), acc);
              else w.recv_reduce(gpu(g), acc, acc);
            }
            w.end_overlap();
            w.send(gpu(h), acc);
            if (spec.kind == CollectiveKind::reduce_scatter) continue;
          }
          m.recv(gpu(h), acc);
          for (int k = 1; k <= ppn; ++k) m.fused_send(gpu((h + k) % ppn), acc);  // replicas of one store
        }
        for (Stream* st : {&reducer, &caster})
          if (!st->steps.empty()) schedule.streams.push_back(std::move(*st));
      }
    if (sharp)
      for (int h = 0; h < ppn; ++h) {
        std::vector<Region> pieces;
        for (const auto& loop : loops) pieces.push_back(region(BufferId::scratch, loop, h));
        sharp_switch_stream(schedule, rail_switch(h), h, c, nodes, ppn, pieces, options.protocol, net_tag);
      }
  }
  return schedule;
}

}  // namespace

Schedule nvls(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  require_nvls(spec, options, "nvls");
  if (options.ranks_per_node > 0 && options.ranks_per_node < spec.nranks) {
    // Across nodes NCCL runs NVLS only with CollNet, and only all_reduce's.
    if (!options.sharp)
      throw Error("nvls across nodes needs network switches that reduce (InfiniBand SHARP, NCCL's CollNet); without "
                  "them use nvls_tree");
    if (spec.kind != CollectiveKind::all_reduce)
      throw Error("nvls across nodes serves all_reduce only; " + std::string(to_string(spec.kind)) +
                  " runs inside one node");
    if (ranks_per_node(spec, options, "nvls") > 8) throw Error("nvls: NCCL's CollNet serves at most 8 GPUs per node");
    return build(spec, options, Across::sharp);
  }
  return build(spec, options, Across::none);
}

Schedule nvls_tree(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  require_nvls(spec, options, "nvls_tree");
  return build(spec, options, Across::tree);
}

}  // namespace ccsim::algo
