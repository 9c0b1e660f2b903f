#include "ccsim/measure.hpp"

#include <chrono>

#include "kernels/cpu_executor.hpp"

namespace ccsim::cli {

Point measure(const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
              const PointOptions& options, const EngineOptions& engine) {
  Point p;
  const auto t0 = std::chrono::steady_clock::now();
  const Schedule schedule = algo::compile(options.algorithm, spec, options.algorithm_options);
  p.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Correctness first: the data check runs before anything is timed.
  std::optional<std::uint64_t> wrong_oop, wrong_ip;
  if (options.check) {
    if (kernels::execution_memory_bytes(schedule, false) <= options.check_limit_bytes)
      wrong_oop = kernels::check(schedule, false).wrong;
    if (kernels::execution_memory_bytes(schedule, true) <= options.check_limit_bytes)
      wrong_ip = kernels::check(schedule, true).wrong;
  }
  p.simulation = simulate(schedule, topology, model, engine);
  const double seconds = p.simulation.timeline.total_s();
  p.row.spec = spec;
  p.row.algorithm = options.algorithm;
  p.row.protocol = options.algorithm_options.protocol;
  p.row.channels = options.algorithm_options.channels;
  p.row.messages = p.simulation.timeline.messages;
  p.row.out_of_place = perf_result(spec, seconds, wrong_oop);
  p.row.in_place = perf_result(spec, seconds, wrong_ip);
  return p;
}

}  // namespace ccsim::cli
