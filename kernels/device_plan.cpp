#include "kernels/device_plan.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <tuple>

#include "sim/error.hpp"

namespace ccsim::kernels {

DevicePlan plan_for_device(const Schedule& schedule) {
  DevicePlan plan;
  plan.staging_count.assign(static_cast<std::size_t>(schedule.endpoint_count()), 0);
  // Sends issued and not yet received, per (from, to, tag), oldest first.
  std::map<std::tuple<int, int, int>, std::deque<std::size_t>> pending;
  std::vector<std::size_t> pc(schedule.streams.size(), 0);
  std::size_t remaining = 0;
  for (const auto& s : schedule.streams) remaining += s.steps.size();
  while (remaining > 0) {
    bool progress = false;
    for (std::size_t si = 0; si < schedule.streams.size(); ++si) {
      const Stream& stream = schedule.streams[si];
      while (pc[si] < stream.steps.size()) {
        const Step& step = stream.steps[pc[si]];
        PlannedStep planned{static_cast<std::uint32_t>(si), static_cast<std::uint32_t>(pc[si]), -1};
        if (step.kind == StepKind::send) {
          Message m;
          m.from = stream.rank;
          m.to = step.peer;
          m.count = step.src.count;
          m.offset = plan.staging_count[static_cast<std::size_t>(step.peer)];
          plan.staging_count[static_cast<std::size_t>(step.peer)] += m.count;
          m.send_stream = planned.stream;
          m.send_step = planned.step;
          planned.message = static_cast<std::int64_t>(plan.messages.size());
          pending[{stream.rank, step.peer, step.tag}].push_back(plan.messages.size());
          plan.messages.push_back(m);
        } else if (step.kind == StepKind::recv) {
          auto it = pending.find({step.peer, stream.rank, step.tag});
          if (it == pending.end() || it->second.empty()) break;  // its send is not issued yet
          Message& m = plan.messages[it->second.front()];
          it->second.pop_front();
          if (m.count != step.dst.count)
            throw Error("schedule " + schedule.algorithm + ": rank " + std::to_string(stream.rank) + " step " +
                        std::to_string(pc[si]) + " expects " + std::to_string(step.dst.count) +
                        " elements but the matching message has " + std::to_string(m.count));
          m.recv_stream = planned.stream;
          m.recv_step = planned.step;
          planned.message = static_cast<std::int64_t>(&m - plan.messages.data());
        }
        plan.order.push_back(planned);
        ++pc[si];
        --remaining;
        progress = true;
      }
    }
    if (!progress) throw_deadlock(schedule, pc);
  }
  for (const auto& [key, queue] : pending)
    if (!queue.empty())
      throw Error("schedule " + schedule.algorithm + ": rank " + std::to_string(std::get<0>(key)) + " sends to rank " +
                  std::to_string(std::get<1>(key)) + " with tag " + std::to_string(std::get<2>(key)) +
                  " but no recv takes it");
  return plan;
}

std::string find_data_race(const Schedule& schedule, const DevicePlan& plan, bool in_place) {
  const std::size_t e = element_bytes(schedule.spec.type);
  std::vector<std::size_t> first(schedule.streams.size() + 1, 0);  // a step's index over all streams
  for (std::size_t s = 0; s < schedule.streams.size(); ++s) first[s + 1] = first[s] + schedule.streams[s].steps.size();
  for (int ep = 0; ep < schedule.endpoint_count(); ++ep) {
    // Vector clocks over this endpoint's k streams only (races are between one endpoint's
    // streams; chains through other endpoints still carry them): clock[step * k + j] = how many
    // steps of local stream j happen before the step ends.
    std::vector<int> local(schedule.streams.size(), -1);
    std::vector<std::uint32_t> mine;
    for (std::uint32_t s = 0; s < schedule.streams.size(); ++s)
      if (schedule.streams[s].rank == ep) {
        local[s] = static_cast<int>(mine.size());
        mine.push_back(s);
      }
    const std::size_t k = mine.size();
    if (k < 2) continue;
    std::vector<std::uint32_t> clock(first.back() * k, 0);
    auto at = [&](std::uint32_t stream, std::uint32_t step) { return clock.data() + (first[stream] + step) * k; };
    for (const PlannedStep& p : plan.order) {  // every recv comes after its send in this order
      std::uint32_t* c = at(p.stream, p.step);
      if (p.step > 0) std::copy_n(at(p.stream, p.step - 1), k, c);
      if (schedule.streams[p.stream].steps[p.step].kind == StepKind::recv) {
        const Message& m = plan.messages[static_cast<std::size_t>(p.message)];
        const std::uint32_t* sent = at(m.send_stream, m.send_step);
        for (std::size_t j = 0; j < k; ++j) c[j] = std::max(c[j], sent[j]);
      }
      if (local[p.stream] >= 0) c[local[p.stream]] = p.step + 1;
    }
    struct Access {
      int allocation = 0;
      std::uint64_t begin = 0, end = 0;  // bytes
      bool write = false;
      std::uint32_t stream = 0, step = 0;
    };
    std::vector<Access> list;
    const MemoryLayout l = MemoryLayout::of(schedule, ep, in_place);
    for (std::uint32_t s : mine) {
      const auto& steps = schedule.streams[s].steps;
      for (std::uint32_t i = 0; i < steps.size(); ++i) {
        auto touch = [&](const Region& r, bool write) {
          if (r.count == 0) return;
          const std::uint64_t begin = l.offset_of(r.buffer) + r.offset * e;
          list.push_back({l.allocation_of(r.buffer), begin, begin + r.count * e, write, s, i});
        };
        const Step& step = steps[i];
        if (step.uses_src()) touch(step.src, false);
        if (step.uses_dst()) touch(step.dst, true);
      }
    }
    auto before = [&](const Access& a, const Access& b) { return at(b.stream, b.step)[local[a.stream]] >= a.step + 1; };
    std::sort(list.begin(), list.end(), [](const Access& a, const Access& b) {
      return std::tie(a.allocation, a.begin) < std::tie(b.allocation, b.begin);
    });
    for (std::size_t i = 0; i < list.size(); ++i)
      for (std::size_t j = i + 1; j < list.size() && list[j].allocation == list[i].allocation && list[j].begin < list[i].end;
           ++j) {
        const Access &a = list[i], &b = list[j];
        if (a.stream == b.stream || !(a.write || b.write) || before(a, b) || before(b, a)) continue;
        auto name = [&](const Access& x) {
          const Step& st = schedule.streams[x.stream].steps[x.step];
          return "stream " + std::to_string(x.stream) + " (channel " + std::to_string(schedule.streams[x.stream].channel) +
                 ") step " + std::to_string(x.step) + " (" + std::string(to_string(st.kind)) +
                 (x.write ? ", writes" : ", reads") + " bytes " + std::to_string(x.begin) + "-" + std::to_string(x.end) + ")";
        };
        return "endpoint " + std::to_string(ep) + ": " + name(a) + " and " + name(b) + " touch the same bytes of allocation " +
               std::to_string(a.allocation) + " with nothing ordering them";
      }
  }
  return {};
}

void execute_plan(const Schedule& schedule, const DevicePlan& plan, std::vector<RankMemory>& memory) {
  const std::size_t e = element_bytes(schedule.spec.type);
  std::vector<std::vector<std::byte>> staging(plan.staging_count.size());
  for (std::size_t i = 0; i < staging.size(); ++i) staging[i].resize(plan.staging_count[i] * e);
  for (const PlannedStep& p : plan.order) {
    const Stream& stream = schedule.streams[p.stream];
    const Step& step = stream.steps[p.step];
    RankMemory& mem = memory[static_cast<std::size_t>(stream.rank)];
    if (step.kind == StepKind::send) {
      const Message& m = plan.messages[static_cast<std::size_t>(p.message)];
      std::memcpy(staging[static_cast<std::size_t>(m.to)].data() + m.offset * e,
                  mem.base(step.src.buffer) + step.src.offset * e, m.count * e);
      continue;
    }
    const std::byte* staged = nullptr;
    if (step.kind == StepKind::recv)
      staged = staging[static_cast<std::size_t>(stream.rank)].data() +
               plan.messages[static_cast<std::size_t>(p.message)].offset * e;
    apply_step(schedule, step, mem, staged);
  }
}

}  // namespace ccsim::kernels
