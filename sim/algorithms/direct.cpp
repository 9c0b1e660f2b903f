#include "sim/algorithms/direct.hpp"

#include <algorithm>
#include <functional>

#include "sim/algorithms/pipeline.hpp"

namespace ccsim::algo {

namespace {

// What one rank sends to and receives from each peer, for one channel's part of the data.
struct Exchange {
  std::function<Region(int peer)> outgoing;           // what this rank sends to `peer`
  std::function<Region(int peer)> incoming;           // where data from `peer` lands
  std::function<Region()> own_source, own_dest;       // this rank's own contribution (local copy)
  bool reduce = false;                                 // combine incoming data into own_dest
  bool sends = true, receives = true;                  // rooted collectives: one side only
  std::function<bool(int peer)> talks_to = [](int) { return true; };
};

Exchange exchange_for(const CollectiveSpec& spec, int rank, const Part& part) {
  const int n = spec.nranks;
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  const Region whole_in{BufferId::input, part.offset, part.count};
  const Region whole_out{BufferId::output, part.offset, part.count};
  auto in_block = [part, block](int b) { return block_region(BufferId::input, b, block, part); };
  auto out_block = [part, block](int b) { return block_region(BufferId::output, b, block, part); };
  auto mine_in = [part] { return Region{BufferId::input, part.offset, part.count}; };
  Exchange x;
  const int root = spec.root;
  switch (spec.kind) {
    case CollectiveKind::all_reduce:
      x.outgoing = [whole_in](int) { return whole_in; };
      x.incoming = [whole_out](int) { return whole_out; };
      x.own_source = [whole_in] { return whole_in; };
      x.own_dest = [whole_out] { return whole_out; };
      x.reduce = true;
      break;
    case CollectiveKind::reduce_scatter:
      x.outgoing = in_block;
      x.incoming = [part](int) { return Region{BufferId::output, part.offset, part.count}; };
      x.own_source = [in_block, rank] { return in_block(rank); };
      x.own_dest = [part] { return Region{BufferId::output, part.offset, part.count}; };
      x.reduce = true;
      break;
    case CollectiveKind::all_gather:
      x.outgoing = [mine_in](int) { return mine_in(); };
      x.incoming = out_block;
      x.own_source = mine_in;
      x.own_dest = [out_block, rank] { return out_block(rank); };
      break;
    case CollectiveKind::alltoall:
      x.outgoing = in_block;
      x.incoming = out_block;
      x.own_source = [in_block, rank] { return in_block(rank); };
      x.own_dest = [out_block, rank] { return out_block(rank); };
      break;
    case CollectiveKind::broadcast:
      x.outgoing = [whole_in](int) { return whole_in; };
      x.incoming = [whole_out](int) { return whole_out; };
      x.own_source = [whole_in] { return whole_in; };
      x.own_dest = [whole_out] { return whole_out; };
      x.sends = rank == root;
      x.receives = rank != root;
      x.talks_to = [rank, root](int peer) { return rank == root || peer == root; };
      break;
    case CollectiveKind::reduce:
      x.outgoing = [whole_in](int) { return whole_in; };
      x.incoming = [whole_out](int) { return whole_out; };
      x.own_source = [whole_in] { return whole_in; };
      x.own_dest = [whole_out] { return whole_out; };
      x.reduce = true;
      x.sends = rank != root;
      x.receives = rank == root;
      x.talks_to = [rank, root](int peer) { return rank == root || peer == root; };
      break;
    case CollectiveKind::gather:
      x.outgoing = [mine_in](int) { return mine_in(); };
      x.incoming = out_block;
      x.own_source = mine_in;
      x.own_dest = [out_block, rank] { return out_block(rank); };
      x.sends = rank != root;
      x.receives = rank == root;
      x.talks_to = [rank, root](int peer) { return rank == root || peer == root; };
      break;
    case CollectiveKind::scatter:
      x.outgoing = in_block;
      x.incoming = [part](int) { return Region{BufferId::output, part.offset, part.count}; };
      x.own_source = [in_block, rank] { return in_block(rank); };
      x.own_dest = [part] { return Region{BufferId::output, part.offset, part.count}; };
      x.sends = rank == root;
      x.receives = rank != root;
      x.talks_to = [rank, root](int peer) { return rank == root || peer == root; };
      break;
    case CollectiveKind::sendrecv:
      x.outgoing = [whole_in](int) { return whole_in; };
      x.incoming = [whole_out](int) { return whole_out; };
      if (n == 1) {  // a rank is its own neighbour
        x.own_source = [whole_in] { return whole_in; };
        x.own_dest = [whole_out] { return whole_out; };
      }
      x.talks_to = [rank, n](int peer) { return peer == (rank + 1) % n || peer == (rank + n - 1) % n; };
      break;
  }
  return x;
}

// The part of the buffer each channel moves: per-rank blocks are split, so is a whole buffer.
Part part_for(const CollectiveSpec& spec, int channels, int c) {
  return channel_part(spec.block_count(), channels, c);
}

// Point-to-point operations one thread block runs at once (NCCL_MAX_DEV_WORK_P2P_PER_BATCH,
// src/include/device.h).
constexpr std::size_t kP2pPerBlock = 8;

// Writes one rank's steps. rounds[k] = (send peer, recv peer); `interleave` puts each round's send
// before its receive, otherwise all sends come first.
void write_exchange(const CollectiveSpec& spec, int rank, const Exchange& x,
                    const std::vector<std::pair<int, int>>& rounds, bool interleave, int blocks, StepWriter& w) {
  int receives_left = 0;  // to mark the last reduce as the final one
  for (const auto& round : rounds)
    if (x.receives && x.talks_to(round.second)) ++receives_left;
  const bool owns_result = !is_rooted(spec.kind) || rank == spec.root;
  if (x.own_source && owns_result) w.copy(x.own_source(), x.own_dest(), x.reduce && receives_left == 0);
  auto do_send = [&](int to) {
    if (x.sends && x.talks_to(to)) w.send(to, x.outgoing(to));
  };
  auto do_recv = [&](int from) {
    if (!x.receives || !x.talks_to(from)) return;
    const bool last = --receives_left == 0;
    if (x.reduce) w.recv_reduce(from, x.own_dest(), x.own_dest(), last);
    else w.recv(from, x.incoming(from));
  };
  if (interleave) {
    for (const auto& [to, from] : rounds) {
      do_send(to);
      do_recv(from);
    }
  } else {
    // One kernel runs every peer's send and receive side by side: NCCL packs up to
    // kP2pPerBlock rounds' point-to-point operations into one block's work, each on warps of its
    // own, and gives other rounds other blocks (enqueue.cc, ncclP2pChannelBaseForRound), so the
    // sends' latencies overlap and every receive is posted at once. A stream stands for all of
    // the kernel's blocks: it issues kP2pPerBlock sends per block together.
    const std::size_t together = kP2pPerBlock * static_cast<std::size_t>(std::max(1, blocks));
    for (std::size_t k = 0; k < rounds.size(); k += together) {
      w.begin_overlap();
      for (std::size_t j = k; j < std::min(rounds.size(), k + together); ++j) do_send(rounds[j].first);
      w.end_overlap(true);
    }
    w.begin_overlap();
    for (const auto& round : rounds) do_recv(round.second);
    w.end_overlap();
  }
}

Schedule exchange_schedule(const CollectiveSpec& spec, const AlgorithmOptions& options, const std::string& name,
                           bool pairwise_rounds) {
  const int n = spec.nranks;
  Schedule schedule{spec, name, {}, 0, {}};
  const bool power_of_two = (n & (n - 1)) == 0;
  for (int c = 0; c < options.channels; ++c) {
    const Part part = part_for(spec, options.channels, c);
    for (int r = 0; r < n; ++r) {
      Stream stream{r, c, {}};
      StepWriter w(stream, options.protocol, c);
      std::vector<std::pair<int, int>> rounds;
      for (int k = 1; k < n; ++k) {
        if (pairwise_rounds && power_of_two) rounds.emplace_back(r ^ k, r ^ k);
        else rounds.emplace_back((r + k) % n, (r + n - k) % n);
      }
      if (spec.kind == CollectiveKind::sendrecv) rounds = n > 1 ? std::vector<std::pair<int, int>>{{(r + 1) % n, (r + n - 1) % n}}
                                                                : std::vector<std::pair<int, int>>{};
      Exchange x = exchange_for(spec, r, part);
      if (spec.kind == CollectiveKind::alltoall && pairwise_rounds && !power_of_two && n > 1) {
        // In place, round k's receive (block r-k) would overwrite a block still to be sent in
        // round N-k: send from a copy of the input taken first.
        const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
        schedule.scratch_count = spec.count;
        for (int b = 0; b < n; ++b)  // only this channel's part: other channels write theirs
          w.copy(block_region(BufferId::input, b, block, part), block_region(BufferId::scratch, b, block, part));
        x.outgoing = [part, block](int b) { return block_region(BufferId::scratch, b, block, part); };
      }
      write_exchange(spec, r, x, rounds, pairwise_rounds, options.channels * options.blocks, w);
      schedule.streams.push_back(std::move(stream));
    }
  }
  return schedule;
}

}  // namespace

Schedule direct(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  return exchange_schedule(spec, options, "direct", false);
}

Schedule pairwise(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  return exchange_schedule(spec, options, "pairwise", true);
}

}  // namespace ccsim::algo
