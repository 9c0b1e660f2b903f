// ccsim gpu info | bench | run: the CUDA backend from the command line. Built without CUDA, or on a
// machine without a usable GPU, each says so and exits non-zero.
#include <fstream>
#include <iomanip>
#include <iostream>

#include "ccsim/commands.hpp"
#include "ccsim/validators.hpp"
#include "ccsim/gpu_run.hpp"
#include "kernels/bench_model.hpp"
#include "sim/error.hpp"
#include "sim/platform.hpp"
#include "sim/trace.hpp"

namespace ccsim::cli {

namespace {

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  if (!out) throw Error(path + ": cannot open for writing");
  out << j.dump(2) << "\n";
  if (!out) throw Error(path + ": write failed");
}

int run_info(bool as_json) {
  const kernels::gpu::Inventory inv = kernels::gpu::inventory();
  if (as_json) {
    nlohmann::json j{{"built_with_cuda", kernels::gpu::built_with_cuda()},
                     {"driver_version", inv.driver_version},
                     {"runtime_version", inv.runtime_version},
                     {"problem", inv.problem},
                     {"devices", nlohmann::json::array()},
                     {"link_class", inv.link_class}};
    for (const auto& d : inv.devices)
      j["devices"].push_back({{"index", d.index}, {"name", d.name}, {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                              {"arch", kernels::gpu::arch_of(d.cc_major, d.cc_minor)}, {"memory_bytes", d.memory_bytes},
                              {"multiprocessors", d.multiprocessors}, {"pci_bus_id", d.pci_bus_id},
                              {"memory_bandwidth_gbps", d.memory_bandwidth_gbps}, {"l2_bytes", d.l2_bytes}});
    std::cout << j.dump(2) << "\n";
    return inv.problem.empty() ? 0 : 1;
  }
  if (!kernels::gpu::built_with_cuda()) {
    std::cerr << "ccsim: error: built without CUDA: no GPU commands (reconfigure with nvcc on PATH)\n";
    return 1;
  }
  std::cout << "# CUDA driver " << inv.driver_version / 1000 << "." << inv.driver_version % 1000 / 10 << ", runtime "
            << inv.runtime_version / 1000 << "." << inv.runtime_version % 1000 / 10 << "\n";
  if (!inv.problem.empty()) {
    std::cerr << "ccsim: error: no usable GPU: " << inv.problem << "\n";
    return 1;
  }
  std::cout << "# dev  name                              cc    arch        memory   SMs  HBM GB/s  L2 MiB  PCI bus\n";
  for (const auto& d : inv.devices)
    std::cout << "  " << std::setw(3) << d.index << "  " << std::left << std::setw(32) << d.name << "  " << d.cc_major << "."
              << d.cc_minor << "   " << std::setw(10) << kernels::gpu::arch_of(d.cc_major, d.cc_minor) << std::right
              << std::setw(6) << std::fixed << std::setprecision(1) << d.memory_bytes / double(1ULL << 30) << " GiB"
              << std::setw(6) << d.multiprocessors << std::setw(10) << std::setprecision(0) << d.memory_bandwidth_gbps
              << std::setw(8) << std::setprecision(1) << d.l2_bytes / 1048576.0 << "  " << d.pci_bus_id << "\n";
  if (inv.devices.size() > 1) {
    std::cout << "# peer access and link class (row: from, column: to)\n     ";
    for (std::size_t j = 0; j < inv.devices.size(); ++j) std::cout << std::setw(8) << ("gpu" + std::to_string(j));
    std::cout << "\n";
    for (std::size_t i = 0; i < inv.devices.size(); ++i) {
      std::cout << "  gpu" << i;
      for (std::size_t j = 0; j < inv.devices.size(); ++j) std::cout << std::setw(8) << inv.link_class[i][j];
      std::cout << "\n";
    }
  }
  return 0;
}

int run_bench(const kernels::gpu::BenchOptions& options, const std::string& out, const std::string& raw) {
  const auto result = kernels::gpu::bench(options, [](const std::string& line) { std::cout << "  " << line << std::endl; });
  const nlohmann::json model = kernels::gpu::model_from_bench(result);
  std::cout << "# model parameters measured (the rest keep the " << model["base"].get<std::string>() << " model's):\n";
  for (const auto& [name, p] : model["parameters"].items())
    std::cout << "  " << std::left << std::setw(32) << name << std::right << std::setw(10) << std::setprecision(3)
              << std::defaultfloat << p["value"].get<double>() << " " << p["unit"].get<std::string>() << "\n";
  if (!out.empty()) {
    write_json(out, model);
    std::cout << "# wrote " << out << " (ccsim perf --model " << out << ")\n";
  }
  if (!raw.empty()) write_json(raw, kernels::gpu::to_json(result));
  return 0;
}

struct RunOutputs {
  std::string json, timeline, trace;
};

int run_gpu(const GpuSweepArgs& args, const RunOutputs& files) {
  const GpuSweep sweep = run_gpu_sweep(args);
  print_table(std::cout, perf_report(sweep));
  bool graph = !sweep.sizes.empty();
  std::string problem;
  for (const auto& g : sweep.sizes) {
    graph = graph && g.out_of_place.graph;
    if (!g.out_of_place.graph_problem.empty()) problem = g.out_of_place.graph_problem;
  }
  std::cout << (graph ? "# steps issued as one CUDA graph per run\n"
                      : "# steps issued stream by stream" + (problem.empty() ? std::string() : " (graph capture failed: " + problem + ")") + "\n");
  if (!files.json.empty()) write_json(files.json, to_json(sweep));
  if (!files.timeline.empty()) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& g : sweep.sizes)
      all.push_back({{"size_bytes", g.size}, {"type", sweep.args.type}, {"op", sweep.args.op}, {"timeline", g.out_of_place.timeline}});
    write_json(files.timeline, all);
  }
  if (!files.trace.empty() && !sweep.sizes.empty()) {
    // The largest size, on the virtual-rank platform (its links name the ranks' traffic).
    const GpuSize& g = sweep.sizes.back();
    const Schedule schedule = sweep_schedule(sweep, g.spec);
    const topo::Topology platform = virtual_platform(sweep.args.ranks, 1e11);
    TraceOptions options;
    options.title = "ccsim gpu run " + sweep.args.collective + " " + format_bytes(g.size) + " on " + sweep.device_name;
    write_json(files.trace, chrome_trace(schedule, g.out_of_place.timeline,
                                         PlatformPlan::build(schedule, platform, Model::builtin(sweep.arch)), options));
  }
  std::uint64_t wrong = 0;
  for (const auto& g : sweep.sizes) wrong += g.out_of_place.check.wrong + g.in_place.check.wrong;
  if (wrong > 0) std::cerr << "ccsim: error: " << wrong << " wrong elements\n";
  return wrong > 0 ? 1 : 0;
}

}  // namespace

Runner add_gpu(CLI::App& app) {
  auto* gpu = app.add_subcommand("gpu", "Run on real GPUs with the CUDA backend (info, bench, run)");
  gpu->require_subcommand(1);
  auto json_info = std::make_shared<bool>(false);
  auto* info = gpu->add_subcommand("info", "Devices, memory, peer access and link class matrix");
  info->add_flag("--json", *json_info, "Print JSON");

  auto bench_options = std::make_shared<kernels::gpu::BenchOptions>();
  auto bench_out = std::make_shared<std::string>();
  auto bench_raw = std::make_shared<std::string>();
  auto max_bytes = std::make_shared<std::string>("1G");
  auto* bench = gpu->add_subcommand(
      "bench", "Copy and reduce-copy bandwidth, launch and event latency, peer copies; writes a model file (--out)");
  bench->add_option("--device", bench_options->device, "CUDA device")->capture_default_str();
  bench->add_option("--max-bytes", *max_bytes, "Largest buffer (sizes go up by 4x from 1M)")->capture_default_str();
  bench->add_option("--out", *bench_out, "Write the timing-model file (for perf --model, validate --bench)")->check(writable_file());
  bench->add_option("--json", *bench_raw, "Write the raw measurements as JSON")->check(writable_file());

  auto run_args = std::make_shared<GpuSweepArgs>();
  auto run_files = std::make_shared<RunOutputs>();
  auto* run = gpu->add_subcommand("run", "Execute a collective's schedule on the GPUs; prints the nccl-tests table");
  add_gpu_sweep_options(*run, *run_args);
  run->add_option("--json", run_files->json, "Write the measured sweep (per-size times and step timings) for validate --measured")->check(writable_file());
  run->add_option("--timeline", run_files->timeline, "Write each size's measured Timeline (the simulator's --timeline form)")->check(writable_file());
  run->add_option("--trace", run_files->trace, "Write a Chrome trace of the largest size's measured steps")->check(writable_file());

  return [=] {
    if (info->parsed()) return run_info(*json_info);
    if (bench->parsed()) {
      bench_options->max_bytes = parse_bytes(*max_bytes);
      return run_bench(*bench_options, *bench_out, *bench_raw);
    }
    return run_gpu(*run_args, *run_files);
  };
}

}  // namespace ccsim::cli
