#include "ccsim/measure.hpp"

#include <chrono>

#include "kernels/cpu_executor.hpp"

namespace ccsim::cli {

Point measure(const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
              const PointOptions& options, const EngineOptions& engine) {
  Point p;
  const Bytes elem = element_bytes(spec.type);
  const auto& o = options.algorithm_options;
  // One loop of any of the algorithms moves at most ranks x channels x chunk: past kSteadyLoops of
  // them the pipeline is in its periodic regime and the time grows linearly with the size.
  const Bytes loop = static_cast<Bytes>(spec.nranks) * static_cast<Bytes>(std::max(1, o.channels)) *
                     std::max<Bytes>(o.chunk_bytes, elem) / elem * elem;
  const bool extrapolate = options.extrapolate && !engine.record_steps && spec.size_bytes() > kSteadyLoops * loop;
  // The whole schedule is compiled when it is simulated or its data checked (within the limit).
  const Bytes rank_bytes = std::max(spec.input_count(0), spec.output_count(0)) * elem;
  std::optional<Schedule> schedule;
  if (!extrapolate || (options.check && rank_bytes <= options.check_limit_bytes)) {
    const auto t0 = std::chrono::steady_clock::now();
    schedule = algo::compile(options.algorithm, spec, o);
    p.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // Correctness first: the data check runs before anything is timed.
  std::optional<std::uint64_t> wrong_oop, wrong_ip;
  if (options.check && schedule) {
    if (kernels::execution_memory_bytes(*schedule, false) <= options.check_limit_bytes)
      wrong_oop = kernels::check(*schedule, false).wrong;
    if (kernels::execution_memory_bytes(*schedule, true) <= options.check_limit_bytes)
      wrong_ip = kernels::check(*schedule, true).wrong;
  }
  double seconds = 0;
  if (extrapolate) {
    auto at = [&](Bytes bytes) {
      CollectiveSpec small = spec;
      small.count = bytes / elem;
      return simulate(algo::compile(options.algorithm, small, o), topology, model, engine);
    };
    const Bytes s1 = kSteadyLoops / 2 * loop, s2 = kSteadyLoops * loop;
    const SimulationResult r1 = at(s1);
    p.simulation = at(s2);
    const double t1 = r1.timeline.total_s(), t2 = p.simulation.timeline.total_s();
    seconds = t2 + (t2 - t1) * static_cast<double>(spec.size_bytes() - s2) / static_cast<double>(s2 - s1);
    p.extrapolated = true;
  } else {
    p.simulation = simulate(*schedule, topology, model, engine);
    seconds = p.simulation.timeline.total_s();
  }
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
