#include "sim/schedule.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "sim/error.hpp"

namespace ccsim {

std::string_view to_string(BufferId buffer) {
  switch (buffer) {
    case BufferId::input: return "input";
    case BufferId::output: return "output";
    case BufferId::scratch: return "scratch";
  }
  return "?";
}

std::string_view to_string(StepKind kind) {
  switch (kind) {
    case StepKind::send: return "send";
    case StepKind::recv: return "recv";
    case StepKind::copy: return "copy";
    case StepKind::reduce: return "reduce";
  }
  return "?";
}

int Schedule::blocks_per_rank() const {
  std::map<int, std::set<int>> channels;  // of each rank
  for (const auto& stream : streams)
    if (!is_switch(stream.rank)) channels[stream.rank].insert(stream.channel);
  std::size_t blocks = 0;
  for (const auto& [rank, c] : channels) blocks = std::max(blocks, c.size());
  return static_cast<int>(blocks) * std::max(1, blocks_per_stream);
}

std::size_t Schedule::step_count() const {
  std::size_t n = 0;
  for (const auto& s : streams) n += s.steps.size();
  return n;
}

namespace {
std::uint64_t buffer_count(const Schedule& s, int rank, BufferId b) {
  if (s.is_switch(rank)) return b == BufferId::scratch ? s.scratch_count : 0;
  switch (b) {
    case BufferId::input: return s.spec.input_count(rank);
    case BufferId::output: return s.spec.output_count(rank);
    case BufferId::scratch: return s.scratch_count;
  }
  return 0;
}

std::string where(const Stream& stream, std::size_t index) {
  return "rank " + std::to_string(stream.rank) + " channel " + std::to_string(stream.channel) + " step " +
         std::to_string(index);
}

// A copy that an in-place call makes from a place of its one allocation to the same place.
bool copies_in_place(const Schedule& schedule, int rank, const Step& step) {
  if (step.kind != StepKind::copy || schedule.is_switch(rank) || step.src.count != step.dst.count) return false;
  const CollectiveSpec& spec = schedule.spec;
  auto place = [&](const Region& r) -> std::optional<std::uint64_t> {
    if (r.buffer == BufferId::input) return spec.in_place_input_offset(rank) + r.offset;
    if (r.buffer == BufferId::output) return spec.in_place_output_offset(rank) + r.offset;
    return std::nullopt;
  };
  const auto from = place(step.src), to = place(step.dst);
  return from && to && *from == *to;
}
}  // namespace

bool has_in_place_copies(const Schedule& schedule) {
  for (const auto& stream : schedule.streams)
    for (const auto& step : stream.steps)
      if (copies_in_place(schedule, stream.rank, step)) return true;
  return false;
}

std::optional<Schedule> in_place_variant(const Schedule& schedule) {
  if (!has_in_place_copies(schedule)) return std::nullopt;
  Schedule s = schedule;
  for (auto& stream : s.streams)
    std::erase_if(stream.steps, [&](const Step& step) { return copies_in_place(schedule, stream.rank, step); });
  std::erase_if(s.streams, [](const Stream& stream) { return stream.steps.empty(); });
  return s;
}

void Schedule::validate() const {
  const int n = endpoint_count();
  // (src, dst, tag) -> sizes in program order, for sends and for recvs.
  std::map<std::tuple<int, int, int>, std::vector<std::uint64_t>> sends, recvs;
  for (const auto& stream : streams) {
    if (stream.rank < 0 || stream.rank >= n)
      throw Error("schedule " + algorithm + ": stream of rank " + std::to_string(stream.rank) + " outside 0.." +
                  std::to_string(n - 1));
    for (std::size_t i = 0; i < stream.steps.size(); ++i) {
      const Step& step = stream.steps[i];
      auto check_region = [&](const Region& r, const char* what) {
        const std::uint64_t size = buffer_count(*this, stream.rank, r.buffer);
        if (r.offset + r.count > size)
          throw Error("schedule " + algorithm + ": " + where(stream, i) + " " + what + " region [" +
                      std::to_string(r.offset) + ", " + std::to_string(r.offset + r.count) + ") exceeds " +
                      std::string(to_string(r.buffer)) + " buffer of " + std::to_string(size) + " elements");
      };
      const bool uses_src = step.uses_src(), uses_dst = step.uses_dst();
      if (uses_src) check_region(step.src, "source");
      if (uses_dst) check_region(step.dst, "destination");
      if (uses_src && uses_dst && step.src.count != step.dst.count)
        throw Error("schedule " + algorithm + ": " + where(stream, i) + " source and destination sizes differ");
      if (step.kind == StepKind::send || step.kind == StepKind::recv) {
        if (step.peer < 0 || step.peer >= n || step.peer == stream.rank)
          throw Error("schedule " + algorithm + ": " + where(stream, i) + " has invalid peer " +
                      std::to_string(step.peer));
        if (step.kind == StepKind::send)
          sends[{stream.rank, step.peer, step.tag}].push_back(step.src.count);
        else
          recvs[{step.peer, stream.rank, step.tag}].push_back(step.dst.count);
      }
    }
  }
  auto describe = [](const std::tuple<int, int, int>& key) {
    return "rank " + std::to_string(std::get<0>(key)) + " -> rank " + std::to_string(std::get<1>(key)) +
           " tag " + std::to_string(std::get<2>(key));
  };
  for (const auto& [key, sizes] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end() || it->second.size() != sizes.size())
      throw Error("schedule " + algorithm + ": " + std::to_string(sizes.size()) + " sends but " +
                  std::to_string(it == recvs.end() ? 0 : it->second.size()) + " recvs on " + describe(key));
    for (std::size_t k = 0; k < sizes.size(); ++k)
      if (sizes[k] != it->second[k])
        throw Error("schedule " + algorithm + ": message " + std::to_string(k) + " on " + describe(key) +
                    " sends " + std::to_string(sizes[k]) + " elements but the recv expects " +
                    std::to_string(it->second[k]));
  }
  for (const auto& [key, sizes] : recvs)
    if (!sends.count(key))
      throw Error("schedule " + algorithm + ": " + std::to_string(sizes.size()) + " recvs but no sends on " +
                  describe(key));
}

std::vector<RankVolume> rank_volumes(const Schedule& schedule) {
  std::vector<RankVolume> v(static_cast<std::size_t>(schedule.endpoint_count()));
  const std::uint64_t elem = element_bytes(schedule.spec.type);
  for (const auto& stream : schedule.streams)
    for (const auto& step : stream.steps) {
      auto& r = v[static_cast<std::size_t>(stream.rank)];
      if (step.kind == StepKind::send) {
        r.sent_bytes += step.src.count * elem;
        ++r.sends;
      } else if (step.kind == StepKind::recv) {
        r.received_bytes += step.dst.count * elem;
        ++r.recvs;
      }
    }
  return v;
}

}  // namespace ccsim
