#include "sim/algorithms/nvls.hpp"

#include <algorithm>

#include "sim/algorithms/pipeline.hpp"
#include "sim/error.hpp"

namespace ccsim::algo {

namespace {

// NCCL_NVLS_CHUNKSIZE default (reference/nccl-model.md §1.5).
constexpr Bytes kNvlsChunkBytes = 128 << 10;

void require_nvls(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  if (!options.nvls)
    throw Error("nvls needs NVSwitches that reduce and multicast (NVLS: third-generation NVSwitch, Hopper or "
                "later); this topology has none");
  if (options.ranks_per_node > 0 && options.ranks_per_node < spec.nranks)
    throw Error("nvls runs inside one node; across nodes NCCL combines it with a tree (nvls_tree, not built yet)");
  if (!is_reduction(spec.kind)) return;
  if (spec.op == ReduceOp::prod || spec.op == ReduceOp::lor)
    throw Error("nvls: NVSwitch reduces with sum, min and max (avg as a sum); not " + std::string(to_string(spec.op)));
  if (spec.type == DataType::int8 || spec.type == DataType::uint8)
    throw Error("nvls: NVSwitch has no 8-bit reductions (multimem.ld_reduce)");
}

}  // namespace

Schedule nvls(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  require_nvls(spec, options);
  const int n = spec.nranks;
  const int sw = n;  // the NVLS switch endpoint
  Schedule schedule{spec, "nvls", {}, spec.count, {}};
  schedule.switches.push_back({SwitchEndpoint::Kind::nvls, 0});
  const std::uint64_t align = align_elements(spec);
  AlgorithmOptions chunked = options;
  chunked.chunk_bytes = std::min<Bytes>(options.chunk_bytes, kNvlsChunkBytes);
  const std::uint64_t chunk = chunk_elements(spec, chunked);
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  const bool all_reduce = spec.kind == CollectiveKind::all_reduce;

  for (int c = 0; c < options.channels; ++c) {
    // all_reduce: loops of N pieces, piece h headed by rank h; reduce_scatter / all_gather: loops
    // over one block, at the same offset in every block.
    const auto loops = all_reduce ? chunk_loops(spec.count, n, options.channels, c, chunk, align)
                                  : chunk_loops(block, 1, options.channels, c, chunk, align);
    auto region = [&](BufferId b, const ChunkLoop& loop, int h) {
      if (all_reduce) return piece(b, loop, h, spec.count);
      const Region r = piece(b, loop, 0, block);
      return Region{b, static_cast<std::uint64_t>(h) * block + r.offset, r.count};
    };
    auto tag = [&](int h) { return c * n + h; };
    // Each GPU runs two streams per channel, as NCCL splits its warps: one feeds the switch
    // (contributions, and for all_reduce the final value of its own part), the other takes the
    // multicast results in. Causality keeps them apart: a part's multicast reaches a GPU only after
    // the switch has read that GPU's contribution to it.
    for (int r = 0; r < n; ++r) {
      Stream feed{r, c, {}}, take{r, c, {}};
      StepWriter w(feed, options.protocol, 0), in(take, options.protocol, 0);
      for (const auto& loop : loops) {
        const Region own = piece(BufferId::output, loop, 0, block);
        // Rotated orders keep every link busy: at round k GPU g feeds head g-k, whose switch
        // stream reads from g at that same round (and multicasts back in the same pattern).
        if (spec.kind != CollectiveKind::all_gather)
          for (int k = 1; k <= n; ++k) {
            const int h = ((r - k) % n + n) % n;
            w.set_tag(tag(h));
            w.fused_send(sw, region(BufferId::input, loop, h));  // read by the switch's ld_reduce
          }
        w.set_tag(tag(r));
        if (spec.kind == CollectiveKind::reduce_scatter) {
          w.recv(sw, own, true);
          continue;
        }
        if (all_reduce) {
          w.recv(sw, region(BufferId::output, loop, r), true);
          w.send(sw, region(BufferId::output, loop, r));  // multimem.st of the result
        } else {
          w.send(sw, Region{BufferId::input, own.offset, own.count});
        }
        in.begin_overlap();
        for (int k = 1; k <= n; ++k) {
          const int h = ((r - k) % n + n) % n;
          // The multicast store reaches its own head too: real traffic, same values.
          in.set_tag(tag(h) + n * options.channels);
          in.recv(sw, region(BufferId::output, loop, h));
        }
        in.end_overlap();
      }
      schedule.streams.push_back(std::move(feed));
      if (!take.steps.empty()) schedule.streams.push_back(std::move(take));
    }
    // One switch stream per head part: the switch serves all heads at once.
    for (int h = 0; h < n; ++h) {
      Stream stream{sw, c, {}};
      StepWriter w(stream, options.protocol, tag(h));
      for (const auto& loop : loops) {
        const Region acc = region(BufferId::scratch, loop, h);
        if (spec.kind != CollectiveKind::all_gather) {
          w.begin_overlap();  // the switch reads every GPU at once
          for (int k = 1; k <= n; ++k) {
            const int g = (h + k) % n;
            if (k == 1) w.recv(g, acc);
            else w.recv_reduce(g, acc, acc);
          }
          w.end_overlap();
          w.send(h, acc);
          if (spec.kind == CollectiveKind::reduce_scatter) continue;
        }
        w.recv(h, acc);
        w.set_tag(tag(h) + n * options.channels);  // the multicast reaches the GPUs' second streams
        for (int k = 1; k <= n; ++k) {
          const int g = (h + k) % n;
          w.fused_send(g, acc);  // replicas of one multicast store, the head's own included
        }
        w.set_tag(tag(h));
      }
      schedule.streams.push_back(std::move(stream));
    }
  }
  return schedule;
}

}  // namespace ccsim::algo
