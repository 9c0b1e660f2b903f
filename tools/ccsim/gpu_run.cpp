#include "ccsim/gpu_run.hpp"

#include <unistd.h>

#include <iostream>

#include "sim/error.hpp"
#include "sim/model.hpp"
#include "sim/text_file.hpp"
#include "sim/topology/presets.hpp"

namespace ccsim::cli {

void add_gpu_sweep_options(CLI::App& cmd, GpuSweepArgs& a) {
  cmd.add_option("collective", a.collective, "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, ...")
      ->required();
  cmd.add_option("-b,--minbytes", a.sweep.min_bytes, "Smallest message size (K/M/G suffixes)")->capture_default_str();
  cmd.add_option("-e,--maxbytes", a.sweep.max_bytes, "Largest message size")->capture_default_str();
  cmd.add_option("-i,--stepbytes", a.sweep.step_bytes, "Size increment when -f is 1")->capture_default_str();
  cmd.add_option("-f,--stepfactor", a.sweep.step_factor, "Size multiplier between rows")->capture_default_str();
  cmd.add_option("-d,--datatype", a.type, "Element type (nccl-tests names)")->capture_default_str();
  cmd.add_option("-o,--op", a.op, "Reduction: sum prod min max avg lor")->capture_default_str();
  cmd.add_option("-r,--root", a.root, "Root rank of rooted collectives")->capture_default_str();
  cmd.add_option("--ranks", a.ranks, "Ranks; rank r runs on --devices[r % count] (several virtual ranks per GPU)")
      ->capture_default_str();
  cmd.add_option("--devices", a.devices, "CUDA devices to place ranks on, e.g. 0,1,2,3")->delimiter(',')->capture_default_str();
  cmd.add_option("--algo", a.algorithm, "Algorithm (ccsim algos)")->capture_default_str();
  cmd.add_option("--proto", a.protocol, "Protocol of the schedule: simple, ll, ll128")->capture_default_str();
  cmd.add_option("--channels", a.channels, "Channels (one CUDA stream each per rank)")->capture_default_str();
  cmd.add_option("--chunk-bytes", a.chunk_bytes, "Data per pipelined step of a channel (default: the GPU family's model)");
  cmd.add_option("-n,--iters", a.iterations, "Timed runs per size (the time is their mean)")->capture_default_str();
  cmd.add_option("-w,--warmup_iters", a.warmup, "Untimed runs first")->capture_default_str();
  cmd.add_option("-c,--check", a.check, "Check the first run's data against the CPU definition (0: print N/A)")
      ->capture_default_str();
  cmd.add_option("--check-limit", a.check_limit, "Check sizes up to this many bytes only (the host reference is slow)")
      ->capture_default_str();
}

namespace {

CollectiveSpec spec_for(const GpuSweepArgs& a, Bytes size) {
  CollectiveSpec spec;
  spec.kind = parse_collective(a.collective);
  spec.type = parse_data_type(a.type);
  spec.op = parse_reduce_op(a.op);
  spec.root = a.root;
  spec.nranks = a.ranks;
  spec.count = count_for_size(spec.kind, spec.type, size, a.ranks);
  return spec;
}

algo::AlgorithmOptions options_for(const GpuSweepArgs& a, const std::string& arch) {
  algo::AlgorithmOptions o;
  o.protocol = parse_protocol(a.protocol);
  if (a.channels < 1) throw Error("--channels must be at least 1");
  o.channels = a.channels;
  o.chunk_bytes = a.chunk_bytes.empty() ? Model::builtin(arch).chunk_bytes(o.protocol) : parse_bytes(a.chunk_bytes);
  o.nvls = true;  // a data-only view, as `ccsim verify` compiles: the GPU executor needs no switch
  o.sharp = true;
  return o;
}

nlohmann::json result_json(const kernels::gpu::GpuRunResult& r) {
  nlohmann::json j{{"time_us", r.time_s * 1e6}, {"graph", r.graph}};
  if (!r.graph_problem.empty()) j["graph_problem"] = r.graph_problem;
  if (r.checked) j["wrong"] = r.check.wrong, j["checked"] = r.check.checked;
  return j;
}

}  // namespace

Schedule sweep_schedule(const GpuSweep& sweep, const CollectiveSpec& spec) {
  return algo::compile(sweep.args.algorithm, spec, sweep.options);
}

GpuSweep run_gpu_sweep(const GpuSweepArgs& a) {
  // The arguments first, so that a mistake is named the same with or without a GPU.
  if (a.ranks < 1) throw Error("--ranks must be at least 1");
  if (a.devices.empty()) throw Error("--devices: name at least one device");
  const std::vector<Bytes> sizes = expand(a.sweep);
  {
    algo::AlgorithmOptions o = options_for(a, "hopper");
    o.chunk_bytes = std::max<Bytes>(o.chunk_bytes, 1 << 20);
    const CollectiveSpec spec = spec_for(a, sizes.front());
    if (spec.count > 0) (void)algo::compile(a.algorithm, spec, o);
  }
  const kernels::gpu::Inventory inv = kernels::gpu::inventory();
  if (!kernels::gpu::built_with_cuda()) throw kernels::gpu::GpuUnavailable("built without CUDA: no GPU commands");
  if (!inv.problem.empty()) throw kernels::gpu::GpuUnavailable("no usable GPU: " + inv.problem);
  for (int d : a.devices)
    if (d < 0 || d >= static_cast<int>(inv.devices.size()))
      throw Error("--devices: device " + std::to_string(d) + " does not exist (" + std::to_string(inv.devices.size()) +
                  " found)");
  GpuSweep sweep;
  sweep.args = a;
  const auto& dev = inv.devices[static_cast<std::size_t>(a.devices.front())];
  sweep.device_name = dev.name;
  sweep.arch = kernels::gpu::arch_of(dev.cc_major, dev.cc_minor);
  sweep.options = options_for(a, sweep.arch);
  const Bytes check_limit = parse_bytes(a.check_limit);
  const bool tty = ::isatty(STDERR_FILENO);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    GpuSize g;
    g.size = sizes[i];
    g.spec = spec_for(a, sizes[i]);
    if (g.spec.count == 0) continue;
    if (tty) std::cerr << "\r[" << i + 1 << "/" << sizes.size() << "] " << format_bytes(sizes[i]) << "    " << std::flush;
    const Schedule schedule = sweep_schedule(sweep, g.spec);
    kernels::gpu::ExecutorOptions o;
    o.devices = a.devices;
    o.iterations = a.iterations;
    o.warmup = a.warmup;
    o.check = a.check != 0 && g.size <= check_limit;
    g.out_of_place = kernels::gpu::run_schedule(schedule, o);
    o.in_place = true;
    o.record_steps = false;
    g.in_place = kernels::gpu::run_schedule(schedule, o);
    sweep.sizes.push_back(std::move(g));
  }
  if (tty) std::cerr << "\r" << std::string(30, ' ') << "\r" << std::flush;
  return sweep;
}

PerfReport perf_report(const GpuSweep& sweep) {
  PerfReport report;
  report.kind = parse_collective(sweep.args.collective);
  report.topology = sweep.device_name + " (CUDA executor, devices";
  for (int d : sweep.args.devices) report.topology += " " + std::to_string(d);
  report.topology += ")";
  report.model = "measured";
  report.nranks = sweep.args.ranks;
  for (const auto& g : sweep.sizes) {
    PerfRow row;
    row.spec = g.spec;
    row.algorithm = sweep.args.algorithm;
    row.protocol = sweep.options.protocol;
    row.channels = sweep.options.channels;
    auto wrong = [](const kernels::gpu::GpuRunResult& r) {
      return r.checked ? std::optional<std::uint64_t>(r.check.wrong) : std::nullopt;
    };
    row.out_of_place = perf_result(g.spec, g.out_of_place.time_s, wrong(g.out_of_place));
    row.in_place = perf_result(g.spec, g.in_place.time_s, wrong(g.in_place));
    report.rows.push_back(row);
  }
  return report;
}

topo::Topology virtual_platform(int ranks, double port_bytes_per_s) {
  topo::PresetOptions o;
  o.gpus = ranks;
  topo::Topology t = topo::make_preset("nvswitch-flat", o);
  double port = 0;
  for (const auto& l : t.links())
    if (l.a == t.gpu(0) || l.b == t.gpu(0)) port += l.bandwidth_bytes_per_s;
  t.scale_links(topo::LinkKind::nvlink, port_bytes_per_s / port);
  return t;
}

nlohmann::json to_json(const GpuSweep& s) {
  nlohmann::json j;
  const GpuSweepArgs& a = s.args;
  j["collective"] = a.collective;
  j["algorithm"] = a.algorithm;
  j["protocol"] = a.protocol;
  j["channels"] = s.options.channels;
  j["chunk_bytes"] = s.options.chunk_bytes;
  j["ranks"] = a.ranks;
  j["type"] = a.type;
  j["op"] = a.op;
  j["root"] = a.root;
  j["devices"] = a.devices;
  j["device_name"] = s.device_name;
  j["arch"] = s.arch;
  j["iterations"] = a.iterations;
  j["warmup"] = a.warmup;
  j["sizes"] = nlohmann::json::array();
  for (const auto& g : s.sizes) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& r : g.out_of_place.timeline.steps) steps.push_back({r.stream, r.step, r.start_s * 1e6, r.end_s * 1e6});
    j["sizes"].push_back({{"bytes", g.size},
                          {"count", g.spec.count},
                          {"out_of_place", result_json(g.out_of_place)},
                          {"in_place", result_json(g.in_place)},
                          {"steps", steps}});
  }
  return j;
}

GpuSweep read_gpu_sweep(const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  auto need = [&](const nlohmann::json& o, const std::string& key, const std::string& at) -> const nlohmann::json& {
    if (!o.is_object() || !o.contains(key)) throw Error(path + ": " + at + key + ": missing (is this `ccsim gpu run --json` output?)");
    return o.at(key);
  };
  GpuSweep s;
  GpuSweepArgs& a = s.args;
  try {
    a.collective = need(j, "collective", "").get<std::string>();
    a.algorithm = need(j, "algorithm", "").get<std::string>();
    a.protocol = need(j, "protocol", "").get<std::string>();
    a.channels = need(j, "channels", "").get<int>();
    a.chunk_bytes = std::to_string(need(j, "chunk_bytes", "").get<std::uint64_t>());
    a.ranks = need(j, "ranks", "").get<int>();
    a.type = need(j, "type", "").get<std::string>();
    a.op = need(j, "op", "").get<std::string>();
    a.root = need(j, "root", "").get<int>();
    a.devices = need(j, "devices", "").get<std::vector<int>>();
    s.device_name = need(j, "device_name", "").get<std::string>();
    s.arch = need(j, "arch", "").get<std::string>();
  } catch (const nlohmann::json::type_error& e) {
    throw Error(path + ": a top-level field has the wrong type: " + e.what());
  }
  s.options = options_for(a, s.arch);
  const auto& sizes = need(j, "sizes", "");
  if (!sizes.is_array()) throw Error(path + ": sizes: expected an array");
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string at = "sizes[" + std::to_string(i) + "].";
    GpuSize g;
    try {
      g.size = need(sizes[i], "bytes", at).get<std::uint64_t>();
      g.spec = spec_for(a, g.size);
      for (auto [key, r] : {std::pair<const char*, kernels::gpu::GpuRunResult*>{"out_of_place", &g.out_of_place},
                            {"in_place", &g.in_place}}) {
        const auto& o = need(sizes[i], key, at);
        r->time_s = need(o, "time_us", at + key + ".").get<double>() * 1e-6;
        r->timeline.makespan_s = r->time_s;
        if (o.contains("wrong")) {
          r->checked = true;
          r->check.wrong = o["wrong"].get<std::uint64_t>();
          r->check.checked = o.value("checked", std::uint64_t{0});
        }
      }
      for (const auto& st : need(sizes[i], "steps", at)) {
        StepRecord r;
        r.stream = st.at(0).get<std::uint32_t>();
        r.step = st.at(1).get<std::uint32_t>();
        r.start_s = st.at(2).get<double>() * 1e-6;
        r.end_s = st.at(3).get<double>() * 1e-6;
        g.out_of_place.timeline.steps.push_back(r);
      }
    } catch (const nlohmann::json::exception& e) {
      throw Error(path + ": " + at + ": " + e.what());
    }
    s.sizes.push_back(std::move(g));
  }
  return s;
}

}  // namespace ccsim::cli
