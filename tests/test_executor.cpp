#include <doctest/doctest.h>

#include <string>

#include "kernels/cpu_executor.hpp"
#include "kernels/device_plan.hpp"
#include "sim/algorithms/registry.hpp"
#include "sim/error.hpp"

using namespace ccsim;

namespace {

Schedule ring(int n, std::uint64_t count, DataType type, ReduceOp op, int channels, Bytes chunk_bytes) {
  CollectiveSpec spec;
  spec.nranks = n;
  spec.count = count;
  spec.type = type;
  spec.op = op;
  algo::AlgorithmOptions o;
  o.channels = channels;
  o.chunk_bytes = chunk_bytes;
  return algo::compile("ring", spec, o);
}

// Every type and op, in and out of place, with counts that divide by neither N nor the channel
// count, including chunks smaller than a loop (several loops) and buffers smaller than N (empty
// pieces).
void check_ring_all_reduce(int n) {
  for (auto type : all_data_types())
    for (auto op : all_reduce_ops())
      for (auto [count, channels] : {std::pair<std::uint64_t, int>{3, 3}, {1000 + 7ULL * n, 2}}) {
        const Schedule s = ring(n, count, type, op, channels, 256);
        for (bool in_place : {false, true}) {
          const auto r = kernels::check(s, in_place);
          INFO("N=", n, " type=", std::string(to_string(type)), " op=", std::string(to_string(op)), " count=", count,
               " in_place=", in_place);
          REQUIRE(r.checked == count * static_cast<std::uint64_t>(n));
          REQUIRE(r.wrong == 0);
        }
      }
}

}  // namespace

TEST_CASE("ring all_reduce is correct for 1 to 8 ranks") {
  for (int n = 1; n <= 8; ++n) check_ring_all_reduce(n);
}
TEST_CASE("ring all_reduce is correct for 9 to 17 ranks") {
  for (int n = 9; n <= 17; ++n) check_ring_all_reduce(n);
}
TEST_CASE("ring all_reduce is correct for 32 ranks") { check_ring_all_reduce(32); }
TEST_CASE("ring all_reduce is correct for 64 ranks") { check_ring_all_reduce(64); }

TEST_CASE("the data check catches a corrupted schedule") {
  const Schedule good = ring(5, 4099, DataType::fp32, ReduceOp::sum, 2, 1024);
  REQUIRE(kernels::check(good, false).wrong == 0);

  SUBCASE("a reduce turned into a plain copy") {
    Schedule bad = good;
    for (auto& step : bad.streams[3].steps)
      if (step.kind == StepKind::recv && step.reduce) {
        step.reduce = false;
        break;
      }
    CHECK(kernels::check(bad, false).wrong > 0);
  }
  SUBCASE("a send of the wrong region") {
    Schedule bad = good;
    auto& step = bad.streams[0].steps[0];
    REQUIRE(step.kind == StepKind::send);
    step.src.offset = (step.src.offset + 1) % 8;
    CHECK(kernels::check(bad, false).wrong > 0);
  }
  SUBCASE("a lost finalize on avg") {
    Schedule avg = ring(5, 4099, DataType::int32, ReduceOp::avg, 1, 1024);
    REQUIRE(kernels::check(avg, true).wrong == 0);
    for (auto& step : avg.streams[2].steps) step.finalize = false;
    CHECK(kernels::check(avg, true).wrong > 0);
  }
  SUBCASE("a deadlock: every rank receives before it sends") {
    Schedule bad = good;
    for (auto& stream : bad.streams) std::swap(stream.steps[0], stream.steps[1]);
    CHECK_THROWS_WITH_AS(kernels::check(bad, false), doctest::Contains("deadlocks"), Error);
  }
}

TEST_CASE("check memory is accounted per layout") {
  const Schedule s = ring(4, 1000, DataType::fp64, ReduceOp::sum, 1, 1 << 20);
  CHECK(kernels::execution_memory_bytes(s, false) == 4 * 2 * 1000 * 8);
  CHECK(kernels::execution_memory_bytes(s, true) == 4 * 1000 * 8);
}

TEST_CASE("the race check finds two streams of a rank that touch the same bytes with nothing ordering them") {
  const Schedule good = ring(5, 4099, DataType::fp32, ReduceOp::sum, 2, 1024);
  for (bool in_place : {false, true}) CHECK(kernels::find_data_race(good, kernels::plan_for_device(good), in_place).empty());

  // Rank 0 copies its input into its output on two streams (channels 0 and 1).
  Schedule s;
  s.spec.nranks = 2;
  s.spec.count = 4;
  s.algorithm = "test";
  const Region in{BufferId::input, 0, 4}, out{BufferId::output, 0, 4};
  Step copy;
  copy.kind = StepKind::copy;
  copy.src = in;
  copy.dst = out;
  s.streams = {{0, 0, {copy}}, {0, 1, {copy}}, {1, 0, {}}};
  const std::string race = kernels::find_data_race(s, kernels::plan_for_device(s), false);
  CHECK(race.find("endpoint 0") != std::string::npos);
  CHECK(race.find("copy, writes") != std::string::npos);

  // Ordered through rank 1: channel 0 copies, then sends; rank 1 passes it back; channel 1
  // receives it before its copy.
  Step send, recv;
  send.kind = StepKind::send;
  send.src = Region{BufferId::input, 0, 1};
  recv.kind = StepKind::recv;
  recv.dst = Region{BufferId::scratch, 0, 1};
  s.scratch_count = 1;
  auto to = [](Step st, int peer, int tag) {
    st.peer = peer;
    st.tag = tag;
    return st;
  };
  s.streams = {{0, 0, {copy, to(send, 1, 0)}},
               {0, 1, {to(recv, 1, 1), copy}},
               {1, 0, {to(recv, 0, 0), to(send, 0, 1)}}};
  CHECK(kernels::find_data_race(s, kernels::plan_for_device(s), false).empty());
  // In place, the input and the output are one region: the send's read on channel 0 still
  // precedes channel 1's copy.
  CHECK(kernels::find_data_race(s, kernels::plan_for_device(s), true).empty());
}

TEST_CASE("hierarchical gives each channel its own scratch") {
  CollectiveSpec spec;
  spec.nranks = 8;
  spec.count = 37 * 8;
  algo::AlgorithmOptions o;
  o.channels = 2;
  o.chunk_bytes = 256;
  o.ranks_per_node = 4;
  const Schedule s = algo::compile("hierarchical", spec, o);
  for (bool in_place : {false, true}) {
    CHECK(kernels::find_data_race(s, kernels::plan_for_device(s), in_place).empty());
    CHECK(kernels::check(s, in_place).wrong == 0);
  }
}
