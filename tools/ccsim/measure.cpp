#include "ccsim/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include "kernels/cpu_executor.hpp"

namespace ccsim::cli {

int p2p_ops_per_thread(const CollectiveSpec& spec, int gpus_per_thread) {
  const int g = std::clamp(gpus_per_thread, 1, spec.nranks), n = spec.nranks;
  switch (spec.kind) {
    case CollectiveKind::alltoall: return g * 2 * n;   // a send and a receive per peer, itself included
    case CollectiveKind::sendrecv: return g * 2;       // to the next rank, from the previous one
    case CollectiveKind::gather:                       // every rank sends to the root, which also receives n
    case CollectiveKind::scatter:                      // (scatter: the other way round)
      return g + (spec.root < g ? n : 0);              // the busiest thread: the one with the root
    default: return 0;                                 // one collective call per GPU
  }
}

namespace {

struct Timed {
  double seconds = 0;  // per call, nccl-tests' loop of options.iters calls
  SimulationResult simulation;
  bool extrapolated = false;
};

// Times the call, on `whole` (the compiled schedule) or, when `extrapolate`, on smaller sizes of it;
// `in_place`: the steps an in-place call runs (in_place_variant).
Timed time_call(const CollectiveSpec& spec, const topo::Topology& topology, const Model& model, const PointOptions& options,
                const EngineOptions& engine, const algo::AlgorithmOptions& o, const std::optional<Schedule>& whole,
                bool extrapolate, Bytes loop, bool in_place) {
  const Bytes elem = element_bytes(spec.type);
  auto run = [&](const Schedule& s) {
    if (in_place)
      if (auto v = in_place_variant(s)) return simulate(*v, topology, model, engine);
    return simulate(s, topology, model, engine);
  };
  Timed t;
  if (!extrapolate) {
    t.simulation = run(*whole);
    t.seconds = t.simulation.timeline.per_call_s(options.iters);
    return t;
  }
  auto at = [&](Bytes bytes) {
    CollectiveSpec small = spec;
    small.count = bytes / elem;
    return run(algo::compile(options.algorithm, small, o));
  };
  // Time is affine in size once the pipeline is periodic with full chunks. Three sizes L/4, L/2,
  // L (L/4 still holds several loops) show it by equal slopes (0.1%); otherwise L doubles, at most
  // twice. Reaching the size itself means simulating it whole.
  // After a doubling the new L/4 and L/2 are the old L/2 and L: only L itself is simulated anew.
  const Bytes first = kSteadyLoops * loop;
  double t1 = 0, t2 = 0;
  for (Bytes L = first;; L *= 2) {
    if (L >= spec.size_bytes()) {
      t.simulation = whole ? run(*whole) : run(algo::compile(options.algorithm, spec, o));
      t.seconds = t.simulation.timeline.per_call_s(options.iters);
      return t;
    }
    if (L == first) {
      t1 = at(L / 4).timeline.per_call_s(options.iters);
      t2 = at(L / 2).timeline.per_call_s(options.iters);
    }
    SimulationResult r3 = at(L);
    const double t3 = r3.timeline.per_call_s(options.iters);
    const double slope_a = (t2 - t1) / static_cast<double>(L / 2 - L / 4);
    const double slope_b = (t3 - t2) / static_cast<double>(L - L / 2);
    // Schedules whose streams run ahead of each other (fused sends are not flow-controlled)
    // drift slowly instead of repeating exactly; past 4x the first range the last slope stands.
    if (std::abs(slope_b - slope_a) <= 1e-3 * std::abs(slope_b) || L >= 4 * first) {
      t.seconds = t3 + slope_b * static_cast<double>(spec.size_bytes() - L);
      t.simulation = std::move(r3);
      t.extrapolated = true;
      return t;
    }
    t1 = t2;
    t2 = t3;
  }
}

}  // namespace

EngineOptions with_run_options(EngineOptions engine, const PointOptions& options) {
  // The ranks a process's host threads drive share it (and NCCL's direct pointers).
  engine.ranks_per_process = std::max(engine.ranks_per_process, std::max(1, options.threads) * options.gpus_per_thread);
  if (options.p2p_net_chunk_bytes > 0) engine.p2p_net_chunk_bytes = options.p2p_net_chunk_bytes;
  return engine;
}

Point measure(const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
              const PointOptions& options, const EngineOptions& engine_options) {
  Point p;
  // nccl-tests times calls issued back to back (reference/nccl-model.md §4): a rooted call's chain
  // overlaps the next call's start (its root moves on once its part is sent), which a single
  // call's makespan would miss. Where every rank waits for every other, the two agree and one call
  // is cheaper to simulate.
  EngineOptions engine = engine_options;
  engine.back_to_back = engine.back_to_back || is_rooted(spec.kind);
  engine = with_run_options(engine, options);
  const Bytes elem = element_bytes(spec.type);
  // NCCL's duplicated channels follow the same rings: run each set of copies as one stream.
  const algo::AlgorithmOptions o = algo::fold_copies(options.algorithm, spec, options.algorithm_options);
  // One loop of any of the algorithms moves at most ranks x channels x chunk: past kSteadyLoops of
  // them the pipeline is in its periodic regime and the time grows linearly with the size.
  const Bytes loop = static_cast<Bytes>(spec.nranks) * static_cast<Bytes>(std::max(1, o.channels)) *
                     std::max<Bytes>(o.chunk_bytes, elem) / elem * elem;
  const bool extrapolate = options.extrapolate && !engine.record_steps && spec.size_bytes() > 2 * kSteadyLoops * loop;
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
  // Most calls run the same steps in place; those that copy their input into their output out of
  // place (in_place_variant) are timed for each column asked for. Whether a call is one of them
  // is a matter of its structure, which a one-loop schedule of it shows as well as the whole.
  const bool out_of_place = options.columns != Columns::in_place, in_place = options.columns != Columns::out_of_place;
  bool differs = false;
  if (in_place && out_of_place) {
    if (schedule) {
      differs = has_in_place_copies(*schedule);
    } else {
      CollectiveSpec probe = spec;
      probe.count = std::min<std::uint64_t>(spec.count, loop / elem);
      differs = has_in_place_copies(algo::compile(options.algorithm, probe, o));
    }
  }
  Timed t = time_call(spec, topology, model, options, engine, o, schedule, extrapolate, loop, !out_of_place);
  double seconds_ip = t.seconds;
  if (differs) seconds_ip = time_call(spec, topology, model, options, engine, o, schedule, extrapolate, loop, true).seconds;
  p.simulation = std::move(t.simulation);
  p.extrapolated = t.extrapolated;
  // nccl-tests issues alltoall, gather, scatter and sendrecv as point-to-point operations, whose
  // host cost host_p2p_op_us counts per operation (its channel work included).
  const int p2p_ops = p2p_ops_per_thread(spec, options.gpus_per_thread);
  const double host_s = model.host_issue_s(options.gpus_per_thread, p2p_ops,
                                           p2p_ops > 0 ? 0 : options.algorithm_options.channels);
  p.row.host_bound = host_s > (out_of_place ? t.seconds : seconds_ip);
  p.row.spec = spec;
  p.row.algorithm = options.algorithm;
  p.row.protocol = options.algorithm_options.protocol;
  p.row.channels = options.algorithm_options.channels;
  p.row.messages = p.simulation.timeline.messages;
  p.row.out_of_place = perf_result(spec, std::max(t.seconds, host_s), wrong_oop);
  p.row.in_place = perf_result(spec, std::max(seconds_ip, host_s), wrong_ip);
  return p;
}

namespace {

nlohmann::json result_json(const PerfResult& r) {
  nlohmann::json j{{"time_us", r.time_us}, {"algbw", r.algbw_gbps}, {"busbw", r.busbw_gbps}, {"simulated", r.simulated}};
  if (r.wrong) j["wrong"] = *r.wrong;
  return j;
}

PerfResult result_from(const nlohmann::json& j) {
  PerfResult r;
  r.time_us = j.at("time_us").get<double>();
  r.algbw_gbps = j.at("algbw").get<double>();
  r.busbw_gbps = j.at("busbw").get<double>();
  r.simulated = j.at("simulated").get<bool>();
  if (j.contains("wrong")) r.wrong = j["wrong"].get<std::uint64_t>();
  return r;
}

}  // namespace

nlohmann::json point_to_json(const Point& p, bool with_timeline) {
  nlohmann::json j{{"algorithm", p.row.algorithm},
                   {"protocol", static_cast<int>(p.row.protocol)},
                   {"channels", p.row.channels},
                   {"messages", p.row.messages},
                   {"host_bound", p.row.host_bound},
                   {"out_of_place", result_json(p.row.out_of_place)},
                   {"in_place", result_json(p.row.in_place)},
                   {"wall_s", p.simulation.wall_s},
                   {"peak_rss_bytes", p.simulation.peak_rss_bytes},
                   {"compile_s", p.compile_s},
                   {"extrapolated", p.extrapolated}};
  if (with_timeline) j["timeline"] = p.simulation.timeline;
  return j;
}

Point point_from_json(const nlohmann::json& j, const CollectiveSpec& spec) {
  Point p;
  p.row.spec = spec;
  p.row.algorithm = j.at("algorithm").get<std::string>();
  p.row.protocol = static_cast<Protocol>(j.at("protocol").get<int>());
  p.row.channels = j.at("channels").get<int>();
  p.row.messages = j.at("messages").get<std::uint64_t>();
  p.row.host_bound = j.at("host_bound").get<bool>();
  p.row.out_of_place = result_from(j.at("out_of_place"));
  p.row.in_place = result_from(j.at("in_place"));
  p.simulation.wall_s = j.at("wall_s").get<double>();
  p.simulation.peak_rss_bytes = j.at("peak_rss_bytes").get<std::uint64_t>();
  p.compile_s = j.at("compile_s").get<double>();
  p.extrapolated = j.at("extrapolated").get<bool>();
  if (j.contains("timeline")) p.simulation.timeline = j["timeline"].get<Timeline>();
  p.simulation.timeline.messages = p.row.messages;
  return p;
}

std::function<void(double)> steps_progress_line(const std::string& point) {
  return [&point](double share) {
    std::cerr << "\r\033[K" << point << ": " << static_cast<int>(100 * share) << "% of the steps simulated" << std::flush;
  };
}

}  // namespace ccsim::cli
