#pragma once
// Points of a sweep simulated side by side (--jobs): each in a worker process of its own, since
// SimGrid keeps one engine per process and a point already forks its simulations. Results come
// back in index order, so tables and summaries print as a one-at-a-time run prints them.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccsim::cli {

// What decides whether one more worker may start beside those running: a worker of a large point
// takes gigabytes, and `jobs` of them at once on a machine with less would have the kernel kill
// them (a sweep that fails) or swap (one that crawls). Sizes in bytes; 0 where unknown.
struct MemoryOutlook {
  std::uint64_t available = 0;              // what the system can still give (/proc/meminfo MemAvailable)
  std::uint64_t worker_peak = 0;            // the most an ended worker held at once (its maximum RSS)
  std::vector<std::uint64_t> running_rss;   // what each running worker holds now
  // Both sizes count the pages a worker still shares with this process since the fork, so a large
  // parent makes every worker look larger than it is: the guard errs towards fewer at once.
};

// True when another worker fits: with none running, or nothing known, always (the sweep goes on,
// one at a time at worst). Otherwise a worker is taken to need as much as the largest seen so far
// (ended or running), each running one to grow to that, and another starts only while what is
// available then still holds it and a quarter more.
bool room_for_another(const MemoryOutlook& m);

// Runs compute(i) for every i below n, up to `jobs` at once (fewer while the memory does not hold
// another: room_for_another, said once on stderr), and calls emit(i, result) in index
// order, each as soon as it and every earlier one are done. With jobs <= 1 (or one item) compute
// runs here, in this process, one item after the other. Otherwise each compute runs in a forked
// worker whose result (JSON) comes back through a pipe: an Error it throws is thrown again here
// when its turn to be emitted comes (any other exception as a std::runtime_error, as it would be
// from this process), no later item is started once one has failed, and the workers still running
// are stopped. `done(k, running)` is told, after each worker ends, how many have ended and how many
// are running.
void for_each_ordered(std::size_t n, int jobs, const std::function<nlohmann::json(std::size_t)>& compute,
                      const std::function<void(std::size_t, const nlohmann::json&)>& emit,
                      const std::function<void(std::size_t, std::size_t)>& done = {});

// for_each_ordered's `done` for a terminal: "[k/total] <what> simulated, R running" on stderr,
// rewritten in place; nothing when `show` is false or the items run one at a time (jobs <= 1),
// which say their own progress.
std::function<void(std::size_t, std::size_t)> workers_progress(bool show, int jobs, std::size_t total, std::string what);

}  // namespace ccsim::cli
