#include "kernels/cpu_executor.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "kernels/numeric.hpp"
#include "kernels/reference.hpp"
#include "sim/error.hpp"

namespace ccsim::kernels {

namespace {
std::size_t elem(const Schedule& s) { return element_bytes(s.spec.type); }
}  // namespace

MemoryLayout MemoryLayout::of(const Schedule& schedule, int endpoint, bool in_place) {
  const auto& spec = schedule.spec;
  const std::size_t e = elem(schedule);
  MemoryLayout l;
  l.in_place = in_place;
  l.scratch_bytes = schedule.scratch_count * e;
  if (schedule.is_switch(endpoint)) return l;  // a switch holds scratch only
  const std::uint64_t in = spec.input_count(endpoint), out = spec.output_count(endpoint);
  if (in_place) {
    l.input_offset = spec.in_place_input_offset(endpoint) * e;
    l.output_offset = spec.in_place_output_offset(endpoint) * e;
    l.main_bytes = std::max(l.input_offset + in * e, l.output_offset + out * e);
  } else {
    l.main_bytes = in * e;
    l.output_bytes = out * e;
  }
  return l;
}

int MemoryLayout::allocation_of(BufferId buffer) const {
  switch (buffer) {
    case BufferId::input: return 0;
    case BufferId::output: return in_place ? 0 : 1;
    case BufferId::scratch: return 2;
  }
  return 0;
}

std::size_t MemoryLayout::offset_of(BufferId buffer) const {
  switch (buffer) {
    case BufferId::input: return input_offset;
    case BufferId::output: return in_place ? output_offset : 0;
    case BufferId::scratch: return 0;
  }
  return 0;
}

std::size_t MemoryLayout::bytes(int allocation) const {
  return allocation == 0 ? main_bytes : allocation == 1 ? output_bytes : scratch_bytes;
}

RankMemory::RankMemory(const Schedule& schedule, int rank, bool in_place)
    : layout_(MemoryLayout::of(schedule, rank, in_place)) {
  main_.resize(layout_.main_bytes);
  output_.resize(layout_.output_bytes);
  scratch_.resize(layout_.scratch_bytes);
}

std::byte* RankMemory::allocation(int index) {
  return index == 0 ? main_.data() : index == 1 ? output_.data() : scratch_.data();
}

std::byte* RankMemory::base(BufferId buffer) {
  return const_cast<std::byte*>(static_cast<const RankMemory*>(this)->base(buffer));
}

const std::byte* RankMemory::base(BufferId buffer) const {
  const int a = layout_.allocation_of(buffer);
  const std::byte* p = a == 0 ? main_.data() : a == 1 ? output_.data() : scratch_.data();
  return p + layout_.offset_of(buffer);
}

std::uint64_t execution_memory_bytes(const Schedule& schedule, bool in_place) {
  std::uint64_t total = 0;
  for (int ep = 0; ep < schedule.endpoint_count(); ++ep) {
    const MemoryLayout l = MemoryLayout::of(schedule, ep, in_place);
    total += l.main_bytes + l.output_bytes + l.scratch_bytes;
  }
  return total;
}

void fill_inputs(const Schedule& schedule, std::vector<RankMemory>& memory, std::uint64_t seed) {
  const auto& spec = schedule.spec;
  dispatch(spec.type, [&](auto tag) {
    using T = decltype(tag);
    for (int r = 0; r < spec.nranks; ++r) {
      T* data = reinterpret_cast<T*>(memory[static_cast<std::size_t>(r)].base(BufferId::input));
      const std::uint64_t n = spec.input_count(r);
      for (std::uint64_t i = 0; i < n; ++i) data[i] = test_value<T>(spec.op, seed, r, i);
    }
  });
}

namespace {

using MessageKey = std::tuple<int, int, int>;  // src, dst, tag

template <typename T> void apply_typed(const Schedule& schedule, const Step& step, RankMemory& mem,
                                       const std::byte* incoming) {
  using E = Element<T>;
  const ReduceOp op = schedule.spec.op;
  const int n = schedule.spec.nranks;
  const std::uint64_t count = step.dst.count;
  T* dst = reinterpret_cast<T*>(mem.base(step.dst.buffer)) + step.dst.offset;
  const T* src = (step.kind == StepKind::recv && !step.reduce)
                     ? reinterpret_cast<const T*>(incoming)
                     : reinterpret_cast<const T*>(mem.base(step.src.buffer)) + step.src.offset;
  const T* in = reinterpret_cast<const T*>(incoming);
  for (std::uint64_t i = 0; i < count; ++i) {
    auto v = E::load(src[i]);
    if (step.kind == StepKind::recv && step.reduce) v = combine(op, v, E::load(in[i]));
    else if (step.kind == StepKind::reduce) v = combine(op, E::load(dst[i]), v);
    if (step.finalize) v = finalize(op, v, n);
    dst[i] = E::store(v);
  }
}

}  // namespace

void apply_step(const Schedule& schedule, const Step& step, RankMemory& memory, const std::byte* incoming) {
  dispatch(schedule.spec.type, [&](auto tag) { apply_typed<decltype(tag)>(schedule, step, memory, incoming); });
}

void throw_deadlock(const Schedule& schedule, const std::vector<std::size_t>& pc) {
  for (std::size_t si = 0; si < schedule.streams.size(); ++si)
    if (pc[si] < schedule.streams[si].steps.size()) {
      const Stream& s = schedule.streams[si];
      throw Error("schedule " + schedule.algorithm + " deadlocks: rank " + std::to_string(s.rank) + " channel " +
                  std::to_string(s.channel) + " waits at step " + std::to_string(pc[si]) + " for rank " +
                  std::to_string(s.steps[pc[si]].peer));
    }
  throw Error("schedule " + schedule.algorithm + " deadlocks");
}

void execute(const Schedule& schedule, std::vector<RankMemory>& memory) {
  const std::size_t e = elem(schedule);
  std::map<MessageKey, std::deque<std::vector<std::byte>>> in_flight;
  std::vector<std::size_t> pc(schedule.streams.size(), 0);
  std::size_t done = 0;
  for (const auto& s : schedule.streams) done += s.steps.empty() ? 1 : 0;
  while (done < schedule.streams.size()) {
    bool progress = false;
    for (std::size_t si = 0; si < schedule.streams.size(); ++si) {
      const Stream& stream = schedule.streams[si];
      RankMemory& mem = memory[static_cast<std::size_t>(stream.rank)];
      while (pc[si] < stream.steps.size()) {
        const Step& step = stream.steps[pc[si]];
        if (step.kind == StepKind::send) {
          const std::byte* p = mem.base(step.src.buffer) + step.src.offset * e;
          in_flight[{stream.rank, step.peer, step.tag}].emplace_back(p, p + step.src.count * e);
        } else if (step.kind == StepKind::recv) {
          auto it = in_flight.find({step.peer, stream.rank, step.tag});
          if (it == in_flight.end() || it->second.empty()) break;  // wait for the matching send
          const std::vector<std::byte> message = std::move(it->second.front());
          it->second.pop_front();
          if (message.size() != step.dst.count * e)
            throw Error("schedule " + schedule.algorithm + ": rank " + std::to_string(stream.rank) + " step " +
                        std::to_string(pc[si]) + " expects " + std::to_string(step.dst.count) +
                        " elements but the matching message has " + std::to_string(message.size() / e));
          apply_step(schedule, step, mem, message.data());
        } else {
          apply_step(schedule, step, mem, nullptr);
        }
        ++pc[si];
        progress = true;
        if (pc[si] == stream.steps.size()) ++done;
      }
    }
    if (!progress) throw_deadlock(schedule, pc);
  }
}

CheckResult check_with(const Schedule& schedule, bool in_place, std::uint64_t seed,
                       const std::function<void(std::vector<RankMemory>&)>& run) {
  std::vector<RankMemory> memory;
  memory.reserve(static_cast<std::size_t>(schedule.endpoint_count()));
  for (int r = 0; r < schedule.endpoint_count(); ++r) memory.emplace_back(schedule, r, in_place);
  fill_inputs(schedule, memory, seed);
  run(memory);
  return compare_with_definition(schedule.spec, memory, seed);
}

CheckResult check(const Schedule& schedule, bool in_place, std::uint64_t seed) {
  return check_with(schedule, in_place, seed, [&](std::vector<RankMemory>& memory) { execute(schedule, memory); });
}

}  // namespace ccsim::kernels
