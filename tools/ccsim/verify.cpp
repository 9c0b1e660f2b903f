// ccsim verify: runs the CPU executor over the matrix of collective x algorithm x rank count x data
// type x op x in/out of place x odd sizes, and ends with "N passed, N failed, N skipped".
#include <unistd.h>

#include <iostream>
#include <optional>
#include <sstream>

#include "ccsim/commands.hpp"
#include "kernels/cpu_executor.hpp"
#include "kernels/device_plan.hpp"
#include "sim/algorithms/registry.hpp"
#include "sim/error.hpp"

namespace ccsim::cli {

namespace {

struct VerifyArgs {
  std::string collective = "all";
  std::string algorithm = "all";
  std::string ranks = "1-17,24,32,64,128";
  std::string types = "all";
  std::string executor = "cpu";
};

// The CPU executor holds every rank's buffers (and an all-to-all's schedule grows with the square of
// the ranks) in this one process: past this, a count is refused rather than left to exhaust the memory.
constexpr int kMaxVerifyRanks = 1024;

std::vector<int> parse_ranks(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  const auto whole_number = [](const std::string& digits) {
    std::size_t used = 0;
    const int n = std::stoi(digits, &used);
    if (used != digits.size()) throw std::invalid_argument(digits);  // "1e6" is not 1
    return n;
  };
  for (std::string item; std::getline(ss, item, ',');) {
    int lo = 0, hi = 0;
    try {
      const auto dash = item.find('-');
      lo = whole_number(item.substr(0, dash));
      hi = dash == std::string::npos ? lo : whole_number(item.substr(dash + 1));
      if (lo < 1 || hi < lo) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw Error("--ranks: \"" + item + "\" is not a rank count or range (expected e.g. 1-17,24,32)");
    }
    if (hi > kMaxVerifyRanks)
      throw Error("--ranks: " + item + ": at most " + std::to_string(kMaxVerifyRanks) +
                  " ranks (the CPU executor holds every rank's buffers in this process)");
    for (int r = lo; r <= hi; ++r) out.push_back(r);
  }
  if (out.empty()) throw Error("--ranks: no rank count given (expected e.g. 1-17,24,32)");
  return out;
}

int run_verify(const VerifyArgs& a) {
  std::vector<const algo::Algorithm*> algos;
  if (a.algorithm == "all")
    for (const auto& al : algo::algorithms()) algos.push_back(&al);
  else
    algos.push_back(&algo::find_algorithm(a.algorithm));
  std::vector<CollectiveKind> kinds;
  if (a.collective == "all") kinds = all_collectives();
  else kinds = {parse_collective(a.collective)};
  const std::vector<int> rank_counts = parse_ranks(a.ranks);
  std::vector<DataType> types;
  if (a.types == "all") types = all_data_types();
  else types = {parse_data_type(a.types)};

  std::uint64_t passed = 0, failed = 0, skipped = 0;
  const bool tty = ::isatty(STDERR_FILENO);
  for (const auto* al : algos)
    for (auto kind : kinds) {
      if (!al->supports(kind)) continue;
      for (int n : rank_counts) {
        if (tty) std::cerr << "\r" << al->name << " " << to_string(kind) << " N=" << n << "          " << std::flush;
        const std::vector<ReduceOp> ops = is_reduction(kind) ? all_reduce_ops() : std::vector<ReduceOp>{ReduceOp::sum};
        const std::vector<std::uint64_t> counts =
            count_is_per_rank(kind) ? std::vector<std::uint64_t>{1, 1031}
                                 : std::vector<std::uint64_t>{static_cast<std::uint64_t>(n), 37ULL * n};
        // Node-aware algorithms are also proven with several GPUs per node and one per node.
        std::vector<int> layouts{0};
        if (al->node_aware)
          for (int ppn : {1, 2, 4, 8})
            if (ppn < n && n % ppn == 0) layouts.push_back(ppn);
        for (int ppn : layouts)
        for (auto type : types)
          for (auto op : ops)
            for (auto count : counts) {
              CollectiveSpec spec;
              spec.kind = kind;
              spec.type = type;
              spec.op = op;
              spec.nranks = n;
              spec.count = count;
              spec.root = n > 2 ? n / 2 + 1 : n - 1;  // not rank 0: roots must really be honoured
              algo::AlgorithmOptions o;
              o.channels = 2;
              o.chunk_bytes = 256;  // several chunk loops even for small buffers
              o.ranks_per_node = ppn;
              o.nvls = true;  // data only: no topology to ask
              o.sharp = true;
              std::string what = al->name + " " + std::string(to_string(kind)) + " N=" + std::to_string(n) + " " +
                                 std::string(to_string(type)) + " " + std::string(to_string(op)) +
                                 " count=" + std::to_string(count) +
                                 (ppn ? " ranks_per_node=" + std::to_string(ppn) : std::string());
              Schedule schedule;
              try {
                schedule = algo::compile(al->name, spec, o);
              } catch (const Error& e) {
                ++skipped;  // a documented refusal, e.g. a rank count the algorithm does not serve
                continue;
              }
              std::optional<kernels::DevicePlan> plan;  // one per schedule: it does not depend on the layout
              for (bool in_place : {false, true}) {
                try {
                  if (a.executor == "plan" && !plan) plan = kernels::plan_for_device(schedule);
                  const auto r =
                      a.executor == "cpu"
                          ? kernels::check(schedule, in_place)
                          : kernels::check_with(schedule, in_place, 1, [&](std::vector<kernels::RankMemory>& memory) {
                              kernels::execute_plan(schedule, *plan, memory);
                            });
                  // The plan executor runs one order of the streams; a device runs them at once.
                  const std::string race =
                      a.executor == "plan" ? kernels::find_data_race(schedule, *plan, in_place) : std::string();
                  if (!race.empty()) {
                    ++failed;
                    std::cout << "FAIL " << what << (in_place ? " in-place" : " out-of-place") << ": data race: " << race << "\n";
                  } else if (r.wrong == 0 && r.checked > 0) {
                    ++passed;
                  } else {
                    ++failed;
                    std::cout << "FAIL " << what << (in_place ? " in-place" : " out-of-place") << ": " << r.wrong
                              << " of " << r.checked << " elements wrong\n";
                  }
                } catch (const Error& e) {
                  ++failed;
                  std::cout << "FAIL " << what << (in_place ? " in-place" : " out-of-place") << ": " << e.what() << "\n";
                }
              }
            }
      }
    }
  if (tty) std::cerr << "\r" << std::string(60, ' ') << "\r";
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace

Runner add_verify(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  auto* cmd = app.add_subcommand("verify", "Prove every algorithm's schedules right on the CPU executor");
  cmd->add_option("--coll", args->collective, "Collective, or all")->capture_default_str();
  cmd->add_option("--algo", args->algorithm, "Algorithm, or all")->capture_default_str();
  cmd->add_option("--ranks", args->ranks, "Rank counts: a list of counts and ranges, each at most 1024")->capture_default_str();
  cmd->add_option("-d,--datatype", args->types, "Data type, or all")->capture_default_str();
  cmd->add_option("--executor", args->executor,
                  "cpu: the reference executor; plan: the GPU backend's issue order and staging, run on the host, and a check that no two streams of a rank touch the same bytes unordered")
      ->check(CLI::IsMember({"cpu", "plan"}))
      ->capture_default_str();
  return [args] { return run_verify(*args); };
}

}  // namespace ccsim::cli
