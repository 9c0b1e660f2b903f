#include "ccsim/planner.hpp"

#include <algorithm>
#include <limits>

#include <CLI/CLI.hpp>

#include "sim/error.hpp"
#include "sim/topology/rings.hpp"

namespace ccsim::cli {

namespace {

// NCCL's algorithms run only the protocols its kernels have (reference/nccl-model.md §1.1).
bool simple_only(const std::string& algorithm) {
  return algorithm == "nvls" || algorithm == "nvls_tree" || algorithm == "collnet_direct" ||
         algorithm == "collnet_chain" || algorithm == "pat";
}

// Whether NCCL_ALGO leaves `algo` to NCCL's choice for `func` (none: one of ccsim's own
// algorithms, which it rules out whenever it names the collective), and NCCL_PROTO `proto`.
bool algo_allowed(const nccl::EnvSettings& env, nccl::Func func, std::optional<nccl::Algo> algo) {
  const auto algos = nccl::enabled_algos(env, func);
  return !algos || (algo && std::find(algos->begin(), algos->end(), *algo) != algos->end());
}
bool proto_allowed(const nccl::EnvSettings& env, nccl::Func func, Protocol proto) {
  const auto protos = nccl::enabled_protocols(env, func);
  return !protos || std::find(protos->begin(), protos->end(), proto) != protos->end();
}
bool env_allows(const nccl::EnvSettings& env, nccl::Func func, std::optional<nccl::Algo> algo, Protocol proto) {
  return algo_allowed(env, func, algo) && proto_allowed(env, func, proto);
}

std::optional<nccl::Algo> nccl_algo(const std::string& name) {
  for (auto a : nccl::all_algos())
    if (to_string(a) == name) return a;
  return std::nullopt;
}

}  // namespace

void add_nccl_env_option(CLI::App* cmd, std::vector<std::string>& given) {
  cmd->add_option("--nccl-env", given,
                  "NAME=VALUE, repeatable: an NCCL setting the run is made under (" +
                      nccl::env_setting_names_text() +
                      "; NCCL_MIN_NRINGS/NCCL_MAX_NRINGS too). NCCL_NVLS_ENABLE=0 turns NVLS and NVLS tree off, NCCL_COLLNET_ENABLE=0 CollNet (on a --sharp machine), NCCL_LL128_C2C=0 LL128 across nodes beyond PXB (P2C, PXN) on Hopper and later. "
                      "NCCL_ALGO / NCCL_PROTO narrow what NCCL's cost model (and --select fastest) may pick, as NCCL "
                      "reads them: a list (Ring,Tree), an exclusion (^NVLS, ^LL128), or per collective from NCCL 2.24 "
                      "(\"ring,tree;allreduce:^nvls\"); a list that names LL128 runs it also where NCCL keeps it off by "
                      "default (PCIe between GPUs, a NIC beyond PXB), as NCCL does; point-to-point calls ignore them, as in NCCL. "
                      "The channel settings change the channels calls launch, as NCCL "
                      "does (first the maximum, then copies up to the minimum; NVLS within the CTA limits; point-to-point "
                      "channels from the collective ones), not what NCCL's cost model picks. A point-to-point block's own "
                      "copy rate bounds its part; collective blocks are bounded by the links only, so on NVLink a "
                      "collective on fewer channels than NCCL's default loses less here than on real GPUs. "
                      "NCCL_BUFFSIZE (bytes, default 4 MiB) sizes the Simple FIFO and so the chunks Simple "
                      "pipelines; NCCL_P2P_NET/NVL/PCI_CHUNKSIZE the steps of point-to-point operations across "
                      "nodes, on an all-NVLink node and otherwise");
}

Model with_nccl_buffers(Model model, const nccl::EnvSettings& settings) {
  if (settings.buffsize > 0)
    model.set("chunk_bytes.simple", static_cast<double>(settings.buffsize / 2),
              "NCCL_BUFFSIZE=" + std::to_string(settings.buffsize) + ": 4 of the FIFO's 8 steps (a ring's Simple chunk)");
  return model;
}

nccl::EnvSettings parse_nccl_env(const std::vector<std::string>& given) {
  nccl::EnvSettings settings;
  // The old names first, so that NCCL_MIN/MAX_NCHANNELS win as in NCCL (init.cc ncclMinNchannels).
  std::vector<std::string> ordered = given;
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const std::string& s) { return s.rfind("NCCL_MIN_NRINGS=", 0) == 0 || s.rfind("NCCL_MAX_NRINGS=", 0) == 0; });
  for (const std::string& item : ordered) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--nccl-env " + item + ": expected NAME=VALUE, e.g. NCCL_MAX_NCHANNELS=16");
    bool known = false;
    try {
      known = nccl::set_env_setting(settings, item.substr(0, eq), item.substr(eq + 1));
    } catch (const Error& e) {
      throw Error(std::string("--nccl-env ") + e.what());
    }
    if (!known)
      throw Error("--nccl-env " + item + ": " + item.substr(0, eq) + " is not a setting ccsim follows (expected one of " +
                  nccl::env_setting_names_text() + ")");
  }
  return settings;
}

Planner::Planner(const topo::Topology& topology, const Model& model, int nranks, Selection selection)
    : topology_(topology), model_(model), nranks_(nranks), selection_(std::move(selection)),
      system_(nccl::describe(topology, nranks, selection_.nccl_release, selection_.nccl_env_settings)) {
  if (selection_.algorithm != "auto") algo::find_algorithm(selection_.algorithm);
  if ((selection_.algorithm == "nvls" || selection_.algorithm == "nvls_tree") && selection_.nccl_env_settings.nvls_enable == 0)
    throw Error(selection_.algorithm + " cannot run under NCCL_NVLS_ENABLE=0, which turns NVLS off");
  if (selection_.algorithm.rfind("collnet", 0) == 0 && selection_.nccl_env_settings.collnet_enable == 0)
    throw Error(selection_.algorithm + " cannot run under NCCL_COLLNET_ENABLE=0, which turns CollNet off");
  if (selection_.protocol != "auto") {
    const Protocol proto = parse_protocol(selection_.protocol);
    if (proto != Protocol::simple && simple_only(selection_.algorithm))
      throw Error(selection_.algorithm + " runs only the Simple protocol in NCCL (its kernels have no " +
                  std::string(to_string(proto)) + " variant): use --proto simple or auto");
    // A user's NCCL_PROTO wins over the one a net plugin sets when there is none (aws-ofi-nccl).
    system_.net_allows_ll = system_.net_allows_ll128 = true;
  }
  if (selection_.mode != "nccl" && selection_.mode != "fastest")
    throw Error("unknown selection \"" + selection_.mode + "\" (expected nccl or fastest)");
  if (selection_.channels && *selection_.channels < 1)
    throw Error("channel count must be at least 1, got " + std::to_string(*selection_.channels));
}

PointOptions Planner::point(const CollectiveSpec& spec, const std::string& algorithm, Protocol protocol,
                            int channels) const {
  PointOptions p;
  p.algorithm = algorithm;
  p.gpus_per_thread = selection_.gpus_per_thread;
  p.threads = selection_.threads;
  if (system_.nodes > 1) p.p2p_net_chunk_bytes = system_.p2p_chunk_bytes;
  p.iters = selection_.iters;
  auto& o = p.algorithm_options;
  o.protocol = protocol;
  o.channels = selection_.channels.value_or(channels);
  o.chunk_bytes = model_.chunk_bytes(protocol);
  // What NCCL would pipeline for this call (its algorithms' chunk rules), unless the command says.
  const auto func = nccl::function_of(spec.kind);
  const auto a = nccl_algo(algorithm);
  if (func && a) o.chunk_bytes = nccl::chunk_bytes(system_, *func, *a, protocol, nccl::cost_bytes(spec), o.channels, o.chunk_bytes);
  if (selection_.chunk_bytes) o.chunk_bytes = *selection_.chunk_bytes;
  // NCCL's own chunk limits: NVLS_CHUNKSIZE 128 KiB (§1.5), CollNet chain 256 KiB (§1.4). The
  // algorithms cap it too; saying it here keeps the pipeline-loop size that measure() uses true.
  if (algorithm == "nvls" || algorithm == "nvls_tree") o.chunk_bytes = std::min<Bytes>(o.chunk_bytes, 128 << 10);
  if (algorithm == "collnet_chain") o.chunk_bytes = std::min<Bytes>(o.chunk_bytes, 256 << 10);
  o.ranks_per_node = std::min(topology_.gpus_per_node(), nranks_);
  o.nvls = topology_.has_nvls() && selection_.nccl_env_settings.nvls_enable != 0;  // NCCL_NVLS_ENABLE=0: none
  o.sharp = topology_.has_sharp() && selection_.nccl_env_settings.collnet_enable != 0;  // NCCL_COLLNET_ENABLE=0: none
  o.levels = selection_.levels;
  auto it = rings_.find(o.channels);
  if (it == rings_.end()) {
    // Channels beyond the rings NCCL's search found run copies of them (NCCL's duplication).
    const int searched = std::min(o.channels, std::max(1, system_.ring.channels));
    auto rings = topo::rings(topology_, nranks_, searched);
    for (int c = searched; c < o.channels && !rings.empty(); ++c) rings.push_back(rings[static_cast<std::size_t>(c % searched)]);
    it = rings_.emplace(o.channels, rings).first;
  }
  o.rings = it->second;
  return p;
}

std::optional<PointOptions> Planner::nccl_pick(const CollectiveSpec& spec) const {
  const auto func = nccl::function_of(spec.kind);
  const bool fixed_algo = selection_.algorithm != "auto";
  const bool fixed_proto = selection_.protocol != "auto";
  if (!func) {
    // Point-to-point in NCCL: direct sends, each operation over as many of the p2p channels as its
    // size takes, small ones with LL (nccl::choose).
    const nccl::Choice n = nccl::choose(system_, spec);
    const std::string a = fixed_algo ? selection_.algorithm : algo::default_algorithm(spec.kind);
    return point(spec, a, fixed_proto ? parse_protocol(selection_.protocol) : n.protocol, n.channels);
  }
  const auto want_algo = fixed_algo ? nccl_algo(selection_.algorithm) : std::nullopt;
  if (fixed_algo && !want_algo) {
    // Not one of NCCL's algorithms: the cost model cannot speak for it; Simple unless told.
    const Protocol pr = fixed_proto ? parse_protocol(selection_.protocol) : Protocol::simple;
    return point(spec, selection_.algorithm, pr, std::max(1, system_.ring.channels));
  }
  const Bytes bytes = nccl::cost_bytes(spec);
  const auto best = nccl_best(spec);
  if (!best) {
    // The user named something NCCL's model rules out here: run it anyway, so that the algorithm
    // itself says why it cannot run, or runs when NCCL merely would not choose it.
    if (fixed_algo) {
      const Protocol pr = fixed_proto ? parse_protocol(selection_.protocol) : Protocol::simple;
      return point(spec, selection_.algorithm, pr,
                   want_algo ? nccl::launched_channels(system_, *want_algo, pr, bytes, spec.nranks)
                             : std::max(1, system_.ring.channels));
    }
    return std::nullopt;
  }
  return point(spec, std::string(to_string(best->algo)), best->proto,
               nccl::launched_channels(system_, best->algo, best->proto, bytes, spec.nranks));
}

std::vector<PointOptions> Planner::candidates(const CollectiveSpec& spec) const {
  const bool fixed_algo = selection_.algorithm != "auto";
  const bool fixed_proto = selection_.protocol != "auto";
  // An algorithm or protocol the command fixes that NCCL_ALGO / NCCL_PROTO rule out for this
  // collective asks for two things at once: said, not settled silently for one of them.
  if (const auto func = nccl::function_of(spec.kind)) {
    const auto& env = selection_.nccl_env_settings;
    if (fixed_algo && !algo_allowed(env, *func, nccl_algo(selection_.algorithm)))
      throw Error(selection_.algorithm + " is not among what NCCL_ALGO=" + env.algo + " leaves " +
                  std::string(to_string(*func)));
    if (fixed_proto && !proto_allowed(env, *func, parse_protocol(selection_.protocol)))
      throw Error(selection_.protocol + " is not among what NCCL_PROTO=" + env.proto + " leaves " +
                  std::string(to_string(*func)));
  }
  if (selection_.mode == "nccl" || (fixed_algo && fixed_proto)) {
    auto p = nccl_pick(spec);
    if (!p) {
      const std::string env = nccl::to_string(selection_.nccl_env_settings);
      // Say why where the reason is NCCL's LL128 safety rule, which a user is least likely to guess.
      const auto func = nccl::function_of(spec.kind);
      const bool ll128_rule = selection_.protocol == "ll128" && !system_.ll128_enabled &&
                              !(func && nccl::ll128_requested(selection_.nccl_env_settings, *func));
      const std::string why = ll128_rule ? " (NCCL enables LL128 by default only where a node's GPUs are joined by NVLink "
                                           "and, across nodes, every GPU is within PXB of its NIC, or within PXN from "
                                           "Hopper on; --nccl-env NCCL_PROTO=LL128 runs it anyway, as NCCL does)"
                                         : "";
      throw Error("NCCL's cost model has no algorithm for " + std::string(to_string(spec.kind)) + " with protocol " +
                  selection_.protocol + " on this machine" + (env.empty() ? "" : " under " + env) + why);
    }
    return {*p};
  }
  std::vector<PointOptions> out;
  std::vector<std::string> names;
  if (fixed_algo) names = {selection_.algorithm};
  else
    for (const auto& a : algo::algorithms())
      if (a.supports(spec.kind) && (a.name != "hierarchical" || !selection_.levels.empty())) names.push_back(a.name);
  const auto func = nccl::function_of(spec.kind);
  for (const auto& name : names) {
    std::vector<Protocol> protos;
    if (fixed_proto) protos = {parse_protocol(selection_.protocol)};
    else if (simple_only(name)) protos = {Protocol::simple};
    else {
      if (system_.net_allows_ll) protos.push_back(Protocol::ll);
      if (func ? nccl::ll128_allowed(system_, *func) : system_.ll128_enabled && system_.net_allows_ll128)
        protos.push_back(Protocol::ll128);
      protos.push_back(Protocol::simple);
    }
    for (auto pr : protos) {
      if (func && !env_allows(selection_.nccl_env_settings, *func, nccl_algo(name), pr)) continue;
      int channels = std::max(1, system_.ring.channels);
      if (const auto a = nccl_algo(name); a && nccl::function_of(spec.kind))
        channels = nccl::launched_channels(system_, *a, pr, nccl::cost_bytes(spec), spec.nranks);
      else if (!nccl::function_of(spec.kind))  // point-to-point: NCCL's split of each operation
        channels = nccl::p2p_operation_channels(system_, nccl::p2p_peer_bytes(spec));
      out.push_back(point(spec, name, pr, channels));
    }
  }
  return out;
}

std::optional<nccl::Estimate> Planner::nccl_best(const CollectiveSpec& spec) const {
  const auto func = nccl::function_of(spec.kind);
  if (!func) return std::nullopt;
  const bool fixed_algo = selection_.algorithm != "auto";
  const bool fixed_proto = selection_.protocol != "auto";
  const auto want_algo = fixed_algo ? nccl_algo(selection_.algorithm) : std::nullopt;
  if (fixed_algo && !want_algo) return std::nullopt;
  std::optional<nccl::Estimate> best;
  for (const auto& e : nccl::cost_table(nccl::for_call(system_, spec), *func, nccl::cost_bytes(spec))) {
    if (e.time_us < 0) continue;
    if (want_algo && e.algo != *want_algo) continue;
    if (fixed_proto && e.proto != parse_protocol(selection_.protocol)) continue;
    if (!env_allows(selection_.nccl_env_settings, *func, e.algo, e.proto)) continue;
    if (!best || e.time_us < best->time_us) best = e;  // strict: ties keep NCCL's earlier index
  }
  return best;
}

std::optional<double> Planner::nccl_estimate_us(const CollectiveSpec& spec) const {
  // Under NCCL_ALGO / NCCL_PROTO NCCL's model rates only what they leave (the others' bandwidth is
  // zero), so its estimate is that of the fixed selection's best, as is what it runs.
  const auto best = nccl_best(spec);
  if (!best) return std::nullopt;
  return best->time_us;
}

Point measure_best(const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
                   const std::vector<PointOptions>& candidates, const EngineOptions& engine) {
  if (candidates.size() == 1) return measure(spec, topology, model, candidates.front(), engine);
  std::optional<Point> best;
  std::size_t best_index = 0;
  std::string refused;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    PointOptions unchecked = candidates[i];
    unchecked.check = false;
    try {
      Point p = measure(spec, topology, model, unchecked, engine);
      if (!best || p.row.out_of_place.time_us < best->row.out_of_place.time_us) {
        best = std::move(p);
        best_index = i;
      }
    } catch (const Error& e) {
      refused = e.what();  // an algorithm this machine or call cannot run: not a candidate
    }
  }
  if (!best) throw Error("no algorithm can run this call" + (refused.empty() ? "" : ": " + refused));
  if (!candidates[best_index].check) return *best;
  return measure(spec, topology, model, candidates[best_index], engine);
}

}  // namespace ccsim::cli
