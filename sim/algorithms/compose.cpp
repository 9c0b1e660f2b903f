#include "sim/algorithms/compose.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "sim/algorithms/pipeline.hpp"
#include "sim/error.hpp"

namespace ccsim::algo {

namespace {
// Tags of phases that share a rank never meet: each phase's tags (small: one channel) are offset by
// its number times this. Phases of disjoint ranks (the nodes of one level) may share a number.
constexpr int kPhaseTagStride = 1 << 16;
}

Composer::Composer(const CollectiveSpec& spec, const AlgorithmOptions& options, std::string name)
    : options_(options) {
  schedule_.spec = spec;
  schedule_.algorithm = std::move(name);
  for (int c = 0; c < options.channels; ++c)
    for (int r = 0; r < spec.nranks; ++r) schedule_.streams.push_back({r, c, {}});
}

Stream& Composer::stream(int rank, int channel) {
  return schedule_.streams[static_cast<std::size_t>(channel * schedule_.spec.nranks + rank)];
}

StepWriter Composer::writer(int rank, int channel) { return StepWriter(stream(rank, channel), options_.protocol, 0); }

void Composer::add(const Phase& phase) {
  AlgorithmOptions sub_options = options_;
  sub_options.ranks_per_node = phase.ranks_per_node;
  sub_options.channels = 1;
  sub_options.rings.clear();
  const Schedule sub = compile(phase.algorithm, phase.spec, sub_options);
  if (!sub.switches.empty())
    throw Error(schedule_.algorithm + ": " + phase.algorithm + " uses in-network switches and cannot be nested");
  std::set<std::pair<int, int>> seen;
  for (const auto& s : sub.streams)
    if (!seen.insert({s.rank, s.channel}).second)
      throw Error(schedule_.algorithm + ": " + phase.algorithm +
                  " runs several streams per channel and cannot be nested (program order would not sequence it)");
  for (int sub_rank = 0; sub_rank < static_cast<int>(phase.ranks.size()); ++sub_rank) {
    const Region base = phase.base(sub_rank, BufferId::scratch);  // its scratch must fit a channel's area
    if (base.buffer == BufferId::scratch) channel_scratch_ = std::max(channel_scratch_, base.offset + sub.scratch_count);
  }
  if (rank_phases_.empty()) rank_phases_.assign(static_cast<std::size_t>(schedule_.spec.nranks), 0);
  int number = 0;
  for (int r : phase.ranks) number = std::max(number, rank_phases_[static_cast<std::size_t>(r)]);
  if (++number >= std::numeric_limits<int>::max() / kPhaseTagStride)
    throw Error(schedule_.algorithm + ": a rank takes part in more than " + std::to_string(number - 1) + " phases");
  for (int r : phase.ranks) rank_phases_[static_cast<std::size_t>(r)] = number;
  const int tag_offset = number * kPhaseTagStride;
  for (const auto& s : sub.streams) {
    const int global = phase.ranks[static_cast<std::size_t>(s.rank)];
    Stream& target = stream(global, phase.channel);
    for (Step step : s.steps) {
      auto map = [&](Region& r) {
        const Region base = phase.base(s.rank, r.buffer);
        r = {base.buffer, base.offset + r.offset, r.count};
      };
      if (step.uses_src()) map(step.src);
      if (step.uses_dst()) map(step.dst);
      if (step.kind == StepKind::send || step.kind == StepKind::recv) {
        if (step.tag < 0 || step.tag >= kPhaseTagStride)
          throw Error(schedule_.algorithm + ": " + phase.algorithm + " uses tag " + std::to_string(step.tag) +
                      ", beyond the " + std::to_string(kPhaseTagStride) + " a nested phase may use");
        step.peer = phase.ranks[static_cast<std::size_t>(step.peer)];
        step.tag += tag_offset;
      }
      if (!phase.keep_finalize) step.finalize = false;
      target.steps.push_back(step);
    }
  }
}

Schedule Composer::take() {
  // Channels run at once: were their phases' scratch at the same offsets, a device running the
  // streams concurrently would interleave them (the CPU executors, running one order, would not).
  for (auto& stream : schedule_.streams)
    for (auto& step : stream.steps)
      for (Region* r : {&step.src, &step.dst})
        if (r->buffer == BufferId::scratch) r->offset += static_cast<std::uint64_t>(stream.channel) * channel_scratch_;
  schedule_.scratch_count = channel_scratch_ * static_cast<std::uint64_t>(options_.channels);
  return std::move(schedule_);
}

}  // namespace ccsim::algo
