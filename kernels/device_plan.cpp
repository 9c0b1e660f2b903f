#include "kernels/device_plan.hpp"

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
