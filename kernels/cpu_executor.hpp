#pragma once
// Runs a schedule on host memory with real element arithmetic, then compares every rank's output
// with the collective's definition. This is the proof that an algorithm computes the right data.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/schedule.hpp"

namespace ccsim::kernels {

struct CheckResult {
  std::uint64_t wrong = 0;    // output elements that differ from the definition
  std::uint64_t checked = 0;  // output elements compared
};

// Host bytes the executor allocates for a schedule (all ranks' buffers, one layout).
std::uint64_t execution_memory_bytes(const Schedule& schedule, bool in_place);

// Where an endpoint's buffers live: three allocations (main holds the input, and the output too
// when in place; output; scratch) and the byte offset of each buffer in its allocation. Device
// backends mirror it, aliasing included.
struct MemoryLayout {
  std::size_t main_bytes = 0, output_bytes = 0, scratch_bytes = 0;
  std::size_t input_offset = 0, output_offset = 0;
  bool in_place = false;
  static MemoryLayout of(const Schedule& schedule, int endpoint, bool in_place);
  int allocation_of(BufferId buffer) const;  // 0 main, 1 output, 2 scratch
  std::size_t offset_of(BufferId buffer) const;
  std::size_t bytes(int allocation) const;
};

// Per-rank buffers after a run. In place, `input` and `output` point into one allocation.
class RankMemory {
 public:
  RankMemory(const Schedule& schedule, int rank, bool in_place);
  std::byte* base(BufferId buffer);
  const std::byte* base(BufferId buffer) const;
  const MemoryLayout& layout() const { return layout_; }
  std::byte* allocation(int index);

 private:
  MemoryLayout layout_;
  std::vector<std::byte> main_, output_, scratch_;
};

// Fills each rank's input with deterministic, non-zero test data chosen so that the op cannot
// overflow the type (products of odd integers, sums of values in [-1, 1], ...).
void fill_inputs(const Schedule& schedule, std::vector<RankMemory>& memory, std::uint64_t seed);

// A recv, copy or reduce step on one rank's memory, element by element: dst = incoming, or
// op(src, incoming) for a reducing recv (`incoming`: the message's bytes), dst = src for a copy,
// op(dst, src) for a reduce; finalized when the step says so.
void apply_step(const Schedule& schedule, const Step& step, RankMemory& memory, const std::byte* incoming);

// The Error for a schedule whose streams are all stuck: the first waiting stream, its step and peer.
// pc[s] is the next step of stream s.
[[noreturn]] void throw_deadlock(const Schedule& schedule, const std::vector<std::size_t>& pc);

// Executes the schedule's steps. Sends are buffered; a recv waits for its matching send. Throws
// Error on a deadlock or a tag/size mismatch.
void execute(const Schedule& schedule, std::vector<RankMemory>& memory);

// fill_inputs + execute + compare with the definition of schedule.spec.
CheckResult check(const Schedule& schedule, bool in_place, std::uint64_t seed = 1);
// The same with another executor: `run` takes the filled memory and leaves every rank's output in it.
CheckResult check_with(const Schedule& schedule, bool in_place, std::uint64_t seed,
                       const std::function<void(std::vector<RankMemory>&)>& run);

}  // namespace ccsim::kernels
