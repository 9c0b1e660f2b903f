#include "sim/algorithms/collnet.hpp"

#include <algorithm>

#include "sim/algorithms/pipeline.hpp"
#include "sim/error.hpp"

namespace ccsim::algo {

namespace {

struct Layout {
  int n = 1, ppn = 1, nodes = 1;
};

Layout require_collnet(const CollectiveSpec& spec, const AlgorithmOptions& options, const char* name) {
  if (!options.sharp)
    throw Error(std::string(name) + " needs network switches that reduce (InfiniBand SHARP); this topology has none");
  Layout l;
  l.n = spec.nranks;
  l.ppn = ranks_per_node(spec, options, name);
  if (l.ppn > 8) throw Error(std::string(name) + ": NCCL's CollNet serves at most 8 GPUs per node");
  if (spec.op == ReduceOp::prod || spec.op == ReduceOp::lor)
    throw Error(std::string(name) + ": SHARP reduces with sum, min and max (avg as a sum); not " +
                std::string(to_string(spec.op)));
  l.nodes = l.n / l.ppn;
  return l;
}

Region as(BufferId b, const Region& r) { return {b, r.offset, r.count}; }

}  // namespace

void sharp_switch_stream(Schedule& schedule, int endpoint, int rail, int channel, int nodes, int ppn,
                         const std::vector<Region>& pieces, Protocol protocol, int tag) {
  Stream stream{endpoint, channel, {}};
  StepWriter w(stream, protocol, tag);
  for (const Region& acc : pieces) {
    w.begin_overlap();  // every node's partial arrives at once
    for (int k = 0; k < nodes; ++k) {
      const int head = k * ppn + rail;
      if (k == 0) w.recv(head, acc);
      else w.recv_reduce(head, acc, acc);
    }
    w.end_overlap();
    for (int k = 0; k < nodes; ++k) {
      if (k == 0) w.send(k * ppn + rail, acc);
      else w.fused_send(k * ppn + rail, acc);  // one multicast result, replicated by the switch
    }
  }
  schedule.streams.push_back(std::move(stream));
}

Schedule collnet_direct(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const Layout l = require_collnet(spec, options, "collnet_direct");
  Schedule schedule{spec, "collnet_direct", {}, spec.count, {}};
  for (int rail = 0; rail < l.ppn; ++rail) schedule.switches.push_back({SwitchEndpoint::Kind::sharp, rail});
  const std::uint64_t chunk = chunk_elements(spec, options), align = align_elements(spec);
  for (int c = 0; c < options.channels; ++c) {
    const auto loops = chunk_loops(spec.count, l.ppn, options.channels, c, chunk, align);
    const int scatter_tag = 3 * c, gather_tag = 3 * c + 1, net_tag = 3 * c + 2;
    for (int r = 0; r < l.n; ++r) {
      const int node = r / l.ppn, g = r % l.ppn;
      auto local = [&](int x) { return node * l.ppn + x; };
      // Four streams, as NCCL splits a block's warps (runCollNetDirect, src/device/all_reduce.h):
      // scatter to the heads; as a head, reduce what the others scattered and send it into the
      // network; as a head, take the result from the network and send it to the others; gather
      // the other heads' results. A head so sends chunk k+1 while chunk k is in the switch.
      // Causality keeps their data apart.
      Stream scatter{r, c, {}}, feed{r, c, {}}, bcast{r, c, {}}, take{r, c, {}};
      StepWriter sc(scatter, options.protocol, scatter_tag), w(feed, options.protocol, scatter_tag),
          b(bcast, options.protocol, net_tag), in(take, options.protocol, gather_tag);
      for (const auto& loop : loops) {
        auto part = [&](BufferId b, int h) { return piece(b, loop, h, spec.count); };
        for (int k = 1; k < l.ppn; ++k) sc.send(local((g + k) % l.ppn), part(BufferId::input, (g + k) % l.ppn));
        if (l.ppn == 1) w.copy(part(BufferId::input, g), part(BufferId::output, g));
        w.begin_overlap();
        for (int k = 1; k < l.ppn; ++k) {
          const int from = (g - k + l.ppn) % l.ppn;
          w.recv_reduce(local(from), k == 1 ? part(BufferId::input, g) : part(BufferId::output, g),
                        part(BufferId::output, g));
        }
        w.end_overlap();
        w.set_tag(net_tag);
        w.send(l.n + g, part(BufferId::output, g));
        w.set_tag(scatter_tag);
        b.recv(l.n + g, part(BufferId::output, g), true);
        b.set_tag(gather_tag);
        for (int k = 1; k < l.ppn; ++k) b.send(local((g + k) % l.ppn), part(BufferId::output, g));
        b.set_tag(net_tag);
        in.begin_overlap();
        for (int k = 1; k < l.ppn; ++k) {
          const int from = (g - k + l.ppn) % l.ppn;
          in.recv(local(from), part(BufferId::output, from));
        }
        in.end_overlap();
      }
      if (!scatter.steps.empty()) schedule.streams.push_back(std::move(scatter));
      schedule.streams.push_back(std::move(feed));
      schedule.streams.push_back(std::move(bcast));
      if (!take.steps.empty()) schedule.streams.push_back(std::move(take));
    }
    for (int rail = 0; rail < l.ppn; ++rail) {
      std::vector<Region> pieces;
      for (const auto& loop : loops) pieces.push_back(as(BufferId::scratch, piece(BufferId::scratch, loop, rail, spec.count)));
      sharp_switch_stream(schedule, l.n + rail, rail, c, l.nodes, l.ppn, pieces, options.protocol, net_tag);
    }
  }
  return schedule;
}

Schedule collnet_chain(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const Layout l = require_collnet(spec, options, "collnet_chain");
  Schedule schedule{spec, "collnet_chain", {}, spec.count, {}};
  for (int rail = 0; rail < l.ppn; ++rail) schedule.switches.push_back({SwitchEndpoint::Kind::sharp, rail});
  // NCCL caps CollNet chain chunks at 256 KiB (reference/nccl-model.md §1.4).
  AlgorithmOptions capped = options;
  capped.chunk_bytes = std::min<Bytes>(options.chunk_bytes, (Bytes{256} << 10) * static_cast<Bytes>(options.blocks));
  const std::uint64_t chunk = chunk_elements(spec, capped), align = align_elements(spec);
  for (int c = 0; c < options.channels; ++c) {
    const int head = c % l.ppn;  // each channel uses another GPU's NIC
    const auto loops = chunk_loops(spec.count, 1, options.channels, c, chunk, align);
    const int up_tag = 2 * c, down_tag = 2 * c + 1;
    for (int r = 0; r < l.n; ++r) {
      const int node = r / l.ppn, pos = (r % l.ppn - head + l.ppn) % l.ppn;  // chain position, head first
      auto at = [&](int p) { return node * l.ppn + (p + head) % l.ppn; };
      // Every rank's block splits its threads (runCollNetChain, src/device/all_reduce.h): some
      // reduce up the chain, the head's into the network, the others take the result from above,
      // the head's from the network, down the chain. The head so sends chunk k+1 up while chunk
      // k's result is still in the switch.
      Stream up{r, c, {}}, down{r, c, {}};
      up.block_share = static_cast<float>(split_reduce_share(options.protocol));
      down.block_share = 1 - up.block_share;
      StepWriter u(up, options.protocol, up_tag);
      StepWriter d(down, options.protocol, down_tag);
      for (const auto& loop : loops) {
        const Region in = piece(BufferId::input, loop, 0, spec.count);
        const Region out = piece(BufferId::output, loop, 0, spec.count);
        const bool tail = pos == l.ppn - 1;
        if (!tail) u.recv_reduce(at(pos + 1), in, out);
        if (pos > 0) {
          u.send(at(pos - 1), tail ? in : out);
          d.recv(at(pos - 1), out);
        } else {
          u.send(l.n + head, tail ? in : out);
          d.set_tag(up_tag);  // the switch answers on the connection the head sent up
          d.recv(l.n + head, out, true);
          d.set_tag(down_tag);
        }
        if (!tail) d.send(at(pos + 1), out);
      }
      schedule.streams.push_back(std::move(up));
      if (!down.steps.empty()) schedule.streams.push_back(std::move(down));
    }
    std::vector<Region> pieces;
    for (const auto& loop : loops) pieces.push_back(as(BufferId::scratch, piece(BufferId::scratch, loop, 0, spec.count)));
    sharp_switch_stream(schedule, l.n + head, head, c, l.nodes, l.ppn, pieces, options.protocol, up_tag);
  }
  return schedule;
}

}  // namespace ccsim::algo
