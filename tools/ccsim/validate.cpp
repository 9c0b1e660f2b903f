// ccsim validate <collective>: the same schedule executed on the GPU (or read from `gpu run --json`)
// and simulated with the parameters `ccsim gpu bench` measured; per size measured vs simulated time,
// then per step kind.
//
// Virtual ranks on one GPU share its memory system. The platform that stands for it: every rank a
// GPU on one non-blocking switch whose port carries 1/N of the measured copy-kernel rate (a ring
// step has all N ranks copying at once), and whose reduce kernels get 1/N of the measured
// reduce-copy rate. Protocol efficiency is already in the measured rates (efficiency 1, no channel
// cap), latencies are the bench's launch and dependent-step figures. The engine runs each recv's
// kernel after its data arrived, as the executor does (EngineOptions::staged_receives): a dependent
// launch later, reading its slot from L2 as far as the slot is still there (slot_hbm_share).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>

#include "ccsim/commands.hpp"
#include "ccsim/gpu_run.hpp"
#include "ccsim/summary.hpp"
#include "kernels/bench_model.hpp"
#include "sim/engine.hpp"
#include "sim/error.hpp"

namespace ccsim::cli {

namespace {

struct ValidateArgs {
  GpuSweepArgs sweep;
  std::string bench_file;
  std::string measured_file;
  std::string min_error_size = "16M";
};


// The executor's recv kernel reads the slot the sender's copy kernel has just written. Between the
// two, every stream on the GPU runs about one step, each moving its message through L2 four times
// (the send reads and writes it, the recv reads and writes it): when that traffic fits in L2 the
// slot is still there; when it is k times L2, about 1/k of the slots are (the rest come from HBM).
// Measured on an H200 (60 MiB of L2, 8 ranks, ring all_gather of 1 GiB): with 2 MiB steps (64 MiB
// between) it took 6.6 ms, 16% less than with 8 or 32 MiB steps (7.9 ms), whose slots mostly miss.
double slot_hbm_share(const Schedule& schedule, std::uint64_t l2_bytes) {
  if (l2_bytes == 0) return 1;  // not known: all from HBM
  std::uint64_t message = 0;
  for (const auto& stream : schedule.streams)
    for (const auto& step : stream.steps)
      if (step.kind == StepKind::send) message = std::max(message, step.src.count);
  const double between = 4.0 * static_cast<double>(schedule.streams.size() * message * element_bytes(schedule.spec.type));
  return between <= 0 ? 1 : 1 - std::min(1.0, static_cast<double>(l2_bytes) / between);
}

Model virtual_model(const kernels::gpu::BenchResult& bench, int ranks) {
  Model m = Model::from_json(kernels::gpu::model_from_bench(bench), "gpu bench");
  const std::string why = "validate: " + std::to_string(ranks) + " virtual ranks share one GPU";
  m.set("hbm_bandwidth_gbps", m.get("hbm_bandwidth_gbps") / ranks, why + "'s reduce-copy rate");
  m.set("nvlink_efficiency", 1.0, why + ": the port rate is the measured copy rate");
  m.set("nvswitch_efficiency", 1.0, why + ": the measured copy rate already crossed whatever switch there is");
  for (const char* p : {"simple", "ll", "ll128", "ll.net"})
    m.set(std::string("channel_bandwidth_gbps.") + p, 0, why + ": the executor's kernels use the whole GPU");
  m.set("gpu_max_bandwidth_gbps.ll", 0, why + ": the executor's kernels use the whole GPU");
  return m;
}

int run_validate(const ValidateArgs& a) {
  if (a.bench_file.empty()) throw Error("--bench FILE: the model file `ccsim gpu bench --out FILE` wrote");
  const kernels::gpu::BenchResult bench = kernels::gpu::read_bench_file(a.bench_file);
  const GpuSweep sweep = a.measured_file.empty() ? run_gpu_sweep(a.sweep) : read_gpu_sweep(a.measured_file);
  if (sweep.args.devices.size() != 1)
    throw Error("validate models virtual ranks on one GPU; the sweep ran on " + std::to_string(sweep.args.devices.size()) +
                " devices");
  const int n = sweep.args.ranks;
  const double copy_payload = bench.copy_kernel.back().gbps * 1e9 / 2;  // bytes read plus written: half is payload
  const topo::Topology platform = virtual_platform(n, copy_payload / n);
  const Model model = virtual_model(bench, n);
  const Bytes min_error_size = parse_bytes(a.min_error_size);

  std::cout << "# validate " << sweep.args.collective << " --algo " << sweep.args.algorithm << " --proto "
            << sweep.args.protocol << " --channels " << sweep.options.channels << " --chunk-bytes "
            << sweep.options.chunk_bytes << ", " << n << " virtual ranks on " << sweep.device_name << "\n"
            << "# platform: port " << std::fixed << std::setprecision(1) << copy_payload / n / 1e9
            << " GB/s per rank, reduce " << model.get("hbm_bandwidth_gbps") << " GB/s per rank, step latency "
            << std::setprecision(2) << bench.step_us << " us, launch " << bench.launch_us << " us (from " << a.bench_file
            << ")\n";
  if (bench.device.l2_bytes > 0)
    std::cout << "# a recv reads its slot from the " << std::setprecision(1) << bench.device.l2_bytes / 1048576.0
              << " MiB of L2 while 4 x streams x message fits there; slot_hbm: the share it reads from HBM\n";
  else
    std::cout << "# the bench file does not give the L2 size (written before ccsim recorded it): every slot is read from HBM\n";
  std::cout << "#        size     count   measured_us  simulated_us    error  slot_hbm\n";
  std::vector<double> errors, big_errors;
  struct Durations {
    std::vector<double> measured, simulated;
  };
  std::map<std::string, Durations> per_kind;
  for (const auto& g : sweep.sizes) {
    const Schedule schedule = sweep_schedule(sweep, g.spec);
    EngineOptions engine;
    engine.record_steps = true;
    engine.staged_receives = true;  // the executor's recv kernel follows its data; a plain recv copies
    engine.staged_launch_s = bench.step_us * 1e-6;
    engine.staged_slot_hbm_share = slot_hbm_share(schedule, bench.device.l2_bytes);
    const SimulationResult sim = simulate(schedule, platform, model, engine);
    const double measured = g.out_of_place.time_s, simulated = sim.timeline.total_s();
    const double err = simulated / measured - 1;
    errors.push_back(std::fabs(err));
    if (g.size >= min_error_size) big_errors.push_back(std::fabs(err));
    std::cout << std::setw(14) << g.size << std::setw(10) << g.spec.count << std::setw(14) << std::setprecision(1)
              << measured * 1e6 << std::setw(14) << simulated * 1e6 << std::setw(9) << percent(err) << std::setw(10)
              << std::setprecision(2) << engine.staged_slot_hbm_share << "\n";
    std::map<std::pair<std::uint32_t, std::uint32_t>, const StepRecord*> simulated_steps;
    for (const auto& r : sim.timeline.steps) simulated_steps[{r.stream, r.step}] = &r;
    for (const auto& r : g.out_of_place.timeline.steps) {
      const auto it = simulated_steps.find({r.stream, r.step});
      if (it == simulated_steps.end() || r.end_s <= 0) continue;
      const Step& step = schedule.streams.at(r.stream).steps.at(r.step);
      const std::string kind = std::string(to_string(step.kind)) + (step.reduce ? "+reduce" : "");
      per_kind[kind].measured.push_back(r.end_s - r.start_s);
      per_kind[kind].simulated.push_back(it->second->end_s - it->second->start_s);
    }
  }
  if (!per_kind.empty()) {
    std::cout << "# per step, all sizes: kind           steps  measured_mean_us  simulated_mean_us  median_abs_err\n";
    for (const auto& [kind, d] : per_kind) {
      double m = 0, s = 0;
      std::vector<double> e;
      for (std::size_t i = 0; i < d.measured.size(); ++i) {
        m += d.measured[i];
        s += d.simulated[i];
        if (d.measured[i] > 0) e.push_back(std::fabs(d.simulated[i] / d.measured[i] - 1));
      }
      std::cout << "  " << std::left << std::setw(30) << kind << std::right << std::setw(7) << d.measured.size()
                << std::setw(18) << std::setprecision(2) << m / d.measured.size() * 1e6 << std::setw(19)
                << s / d.measured.size() * 1e6 << std::setw(16) << percent(median(e)) << "\n";
    }
  }
  std::cout << "# validate: median_abs_err=" << percent(median(errors)) << " n=" << errors.size() << "; sizes >= "
            << a.min_error_size << ": median_abs_err=" << percent(median(big_errors))
            << " max_abs_err=" << percent(big_errors.empty() ? 0 : *std::max_element(big_errors.begin(), big_errors.end()))
            << " n=" << big_errors.size() << "\n";
  return 0;
}

}  // namespace

Runner add_validate(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate", "Run a schedule on the GPU and simulate it with `gpu bench` parameters: measured vs simulated");
  add_gpu_sweep_options(*cmd, args->sweep);
  cmd->add_option("--bench", args->bench_file, "Model file written by `ccsim gpu bench --out`")->required();
  cmd->add_option("--measured", args->measured_file,
                  "Sweep written by `ccsim gpu run --json` (its options replace the sweep options): simulate only, no GPU");
  cmd->add_option("--error-from", args->min_error_size, "Smallest size in the second error summary")->capture_default_str();
  return [args] { return run_validate(*args); };
}

}  // namespace ccsim::cli
