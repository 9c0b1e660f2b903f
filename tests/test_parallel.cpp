// The worker processes of --jobs: results in order, errors carried back, and how many start beside
// each other as the memory allows.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "ccsim/parallel.hpp"
#include "sim/error.hpp"

using ccsim::cli::for_each_ordered;
using ccsim::cli::MemoryOutlook;
using ccsim::cli::room_for_another;

namespace {
constexpr std::uint64_t GB = 1000ull * 1000 * 1000;
}

TEST_CASE("room_for_another: a worker is as large as the largest seen, and the running ones grow to it") {
  // Nothing running: always, however little memory (one at a time at worst).
  CHECK(room_for_another(MemoryOutlook{1, 100 * GB, {}}));
  // Nothing known of the memory or of a worker's size: the requested jobs.
  CHECK(room_for_another(MemoryOutlook{0, 4 * GB, {4 * GB}}));
  CHECK(room_for_another(MemoryOutlook{8 * GB, 0, {0}}));
  // A worker peaked at 4 GB; one runs at 1 GB and may take 3 more: 8 GB leaves 5, which holds
  // 4 and a quarter (5), 7.9 GB does not.
  CHECK(room_for_another(MemoryOutlook{8 * GB, 4 * GB, {1 * GB}}));
  CHECK_FALSE(room_for_another(MemoryOutlook{8 * GB - GB / 10, 4 * GB, {1 * GB}}));
  // No worker has ended yet: the largest running one sets the size (3 GB: 2 GB more for the
  // other, 3.75 for a new one).
  CHECK(room_for_another(MemoryOutlook{5750 * GB / 1000, 0, {3 * GB, 1 * GB}}));
  CHECK_FALSE(room_for_another(MemoryOutlook{5 * GB, 0, {3 * GB, 1 * GB}}));
  // Running ones already past the peak of the ended ones set it instead, and need nothing more.
  CHECK(room_for_another(MemoryOutlook{5 * GB, 1 * GB, {4 * GB}}));
  // More growth to come than is available: no new worker (and no wrap-around).
  CHECK_FALSE(room_for_another(MemoryOutlook{1 * GB, 4 * GB, {0, 0, 0}}));
}

TEST_CASE("for_each_ordered: every result in index order, from workers or from this process") {
  for (const int jobs : {1, 3}) {
    CAPTURE(jobs);
    std::vector<std::size_t> order;
    std::vector<int> values;
    for_each_ordered(
        7, jobs, [](std::size_t i) { return nlohmann::json(static_cast<int>(i * i)); },
        [&](std::size_t i, const nlohmann::json& r) {
          order.push_back(i);
          values.push_back(r.get<int>());
        });
    CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6});
    CHECK(values == std::vector<int>{0, 1, 4, 9, 16, 25, 36});
  }
}

TEST_CASE("for_each_ordered: a worker's error comes back as the error one process would give") {
  std::vector<std::size_t> emitted;
  auto compute = [](std::size_t i) -> nlohmann::json {
    if (i == 2) throw ccsim::Error("item 2 is bad");
    return nlohmann::json(static_cast<int>(i));
  };
  CHECK_THROWS_WITH_AS(for_each_ordered(5, 2, compute, [&](std::size_t i, const nlohmann::json&) { emitted.push_back(i); }),
                       "item 2 is bad", ccsim::Error);
  CHECK(emitted == std::vector<std::size_t>{0, 1});
  auto internal = [](std::size_t) -> nlohmann::json { throw std::logic_error("not a user error"); };
  CHECK_THROWS_AS(for_each_ordered(2, 2, internal, [](std::size_t, const nlohmann::json&) {}), std::runtime_error);
}
