#include <doctest/doctest.h>

#include "sim/algorithms/pipeline.hpp"
#include "sim/algorithms/registry.hpp"
#include "sim/error.hpp"

using namespace ccsim;

namespace {
CollectiveSpec all_reduce(int n, std::uint64_t count, DataType t = DataType::fp32) {
  CollectiveSpec s;
  s.nranks = n;
  s.count = count;
  s.type = t;
  return s;
}
algo::AlgorithmOptions options(int channels, Bytes chunk = 1 << 20) {
  algo::AlgorithmOptions o;
  o.channels = channels;
  o.chunk_bytes = chunk;
  return o;
}
}  // namespace

TEST_CASE("ring all_reduce moves 2(N-1)/N of the message per rank in 2(N-1) steps per chunk") {
  for (int n : {2, 3, 7, 8, 64}) {
    const std::uint64_t count = 1024ULL * n;  // one chunk per channel, divisible by N
    const Schedule s = algo::compile("ring", all_reduce(n, count), options(1, count * 4));
    const auto volumes = rank_volumes(s);
    for (const auto& v : volumes) {
      CHECK(v.sent_bytes == 2ULL * (n - 1) * count * 4 / n);
      CHECK(v.received_bytes == v.sent_bytes);
      CHECK(v.sends == 2ULL * (n - 1));
      CHECK(v.recvs == 2ULL * (n - 1));
    }
  }
}

TEST_CASE("ring all_reduce pipelines: one 2(N-1)-step pass per chunk loop, channels split the data") {
  const int n = 4;
  const std::uint64_t count = 1 << 20;  // 4 MiB of float
  const Schedule s = algo::compile("ring", all_reduce(n, count), options(2, 256 << 10));
  // loop = 2 channels x 4 ranks x 64 Ki elements = 512 Ki elements: 2 loops.
  for (const auto& stream : s.streams) CHECK(stream.steps.size() == 2 * (2 * 2 * (n - 1)));
  for (const auto& v : rank_volumes(s)) CHECK(v.sent_bytes == 2ULL * (n - 1) * count * 4 / n);
}

TEST_CASE("chunk loops cover the buffer exactly once per piece") {
  for (std::uint64_t count : {1ULL, 5ULL, 17ULL, 1000ULL, 123457ULL}) {
    for (int channels : {1, 3}) {
      std::vector<int> covered(count, 0);
      for (int c = 0; c < channels; ++c)
        for (const auto& loop : algo::chunk_loops(count, 5, channels, c, 64, 4))
          for (int j = 0; j < 5; ++j) {
            const Region r = algo::piece(BufferId::input, loop, j, count);
            for (std::uint64_t i = r.offset; i < r.offset + r.count; ++i) ++covered[i];
          }
      for (auto c : covered) REQUIRE(c == 1);
    }
  }
}

TEST_CASE("schedule validation names the broken step") {
  Schedule s = algo::compile("ring", all_reduce(4, 4096), options(1));
  SUBCASE("region outside the buffer") {
    s.streams[1].steps[0].src.offset = 1 << 30;
    CHECK_THROWS_WITH_AS(s.validate(), doctest::Contains("rank 1 channel 0 step 0 source region"), Error);
  }
  SUBCASE("unmatched send") {
    s.streams[0].steps[0].tag = 7;
    CHECK_THROWS_WITH_AS(s.validate(), doctest::Contains("sends but"), Error);
  }
  SUBCASE("peer is self") {
    s.streams[2].steps[0].peer = s.streams[2].rank;
    CHECK_THROWS_WITH_AS(s.validate(), doctest::Contains("invalid peer"), Error);
  }
}

TEST_CASE("the registry refuses what it cannot serve, with the reason") {
  CollectiveSpec spec = all_reduce(4, 4096);
  spec.kind = CollectiveKind::alltoall;
  CHECK_THROWS_WITH_AS(algo::compile("ring", spec, options(1)), doctest::Contains("does not implement alltoall"), Error);
  CHECK_THROWS_WITH_AS(algo::compile("nope", all_reduce(4, 16), options(1)), doctest::Contains("unknown algorithm"), Error);
  CHECK_THROWS_AS(algo::compile("ring", all_reduce(4, 16), options(0)), Error);
  auto bad_rings = options(1);
  bad_rings.rings = {{0, 1, 1, 3}};
  CHECK_THROWS_WITH_AS(algo::compile("ring", all_reduce(4, 16), bad_rings), doctest::Contains("every rank"), Error);
}

TEST_CASE("an in-place call drops the copies that would read and write the same memory, and only those") {
  auto spec = [](CollectiveKind kind, int n) {
    CollectiveSpec s = all_reduce(n, 4096ULL * n);
    s.kind = kind;
    return s;
  };
  auto copies = [](const Schedule& s) {
    std::size_t n = 0;
    for (const auto& stream : s.streams)
      for (const auto& step : stream.steps) n += step.kind == StepKind::copy;
    return n;
  };
  SUBCASE("ring all_gather: each rank's own block is already in place") {
    const Schedule s = algo::compile("ring", spec(CollectiveKind::all_gather, 4), options(2));
    const auto v = in_place_variant(s);
    REQUIRE(v.has_value());
    CHECK(copies(s) == 4 * 2);  // one per rank and channel
    CHECK(copies(*v) == 0);
    CHECK(v->step_count() == s.step_count() - 4 * 2);
    v->validate();
    for (const auto& stream : v->streams)  // the sends are all still there
      for (const auto& step : stream.steps) CHECK(step.kind != StepKind::copy);
  }
  SUBCASE("direct alltoall: the block a rank keeps is in place") {
    const Schedule s = algo::compile("direct", spec(CollectiveKind::alltoall, 4), options(1));
    const auto v = in_place_variant(s);
    REQUIRE(v.has_value());
    CHECK(copies(*v) + 4 == copies(s));
  }
  SUBCASE("ring all_reduce and reduce_scatter copy nothing into place") {
    CHECK_FALSE(in_place_variant(algo::compile("ring", all_reduce(4, 4096), options(2))).has_value());
    CHECK_FALSE(in_place_variant(algo::compile("ring", spec(CollectiveKind::reduce_scatter, 4), options(2))).has_value());
  }
  SUBCASE("a copy to another place stays") {
    Schedule s = algo::compile("ring", spec(CollectiveKind::all_gather, 4), options(1));
    for (auto& stream : s.streams)
      for (auto& step : stream.steps)
        if (step.kind == StepKind::copy) step.dst.offset = (step.dst.offset + 4096) % (4096ULL * 4);
    CHECK_FALSE(in_place_variant(s).has_value());
  }
}
