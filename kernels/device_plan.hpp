#pragma once
// How an asynchronous device backend runs a schedule: one issue order over all streams in which
// every recv comes after its matching send, and a staging area for each message on its receiver.
// A send copies its source into the message's staging slot and signals; the recv waits for that
// signal and combines the slot into its destination (NCCL's steps do the same through their FIFO
// buffers). Issuing the steps in this order onto per-stream queues keeps program order within a
// stream and makes every cross-stream wait refer to a signal already issued.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu_executor.hpp"
#include "sim/schedule.hpp"

namespace ccsim::kernels {

struct PlannedStep {
  std::uint32_t stream = 0;
  std::uint32_t step = 0;
  std::int64_t message = -1;  // send / recv: index into DevicePlan::messages
};

struct Message {
  int from = 0;                  // sending endpoint
  int to = 0;                    // receiving endpoint: the staging slot lives in its memory
  std::uint64_t offset = 0;      // elements into the receiver's staging area
  std::uint64_t count = 0;       // elements
  std::uint32_t send_stream = 0, send_step = 0;
  std::uint32_t recv_stream = 0, recv_step = 0;
};

struct DevicePlan {
  std::vector<PlannedStep> order;
  std::vector<Message> messages;
  std::vector<std::uint64_t> staging_count;  // elements of staging per endpoint
};

// Matches sends and recvs (per sender, receiver and tag, in program order) and orders the steps.
// Throws Error when the schedule deadlocks or a message's sizes disagree.
DevicePlan plan_for_device(const Schedule& schedule);

// Two steps of one endpoint on different streams that touch the same bytes (at least one writing)
// with no chain of program order and send-to-recv edges between them: on a device, where streams
// run at once, their order is left to chance. The CPU executors run one order and cannot see it.
// Returns a description of the first such pair, or an empty string. `in_place` chooses the memory
// layout (in place, input and output share an allocation).
std::string find_data_race(const Schedule& schedule, const DevicePlan& plan, bool in_place);

// Runs the plan step by step on host memory, the way a device backend issues it. A test of the plan:
// its result must equal execute()'s.
void execute_plan(const Schedule& schedule, const DevicePlan& plan, std::vector<RankMemory>& memory);

}  // namespace ccsim::kernels
