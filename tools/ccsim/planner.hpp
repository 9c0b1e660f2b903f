#pragma once
// What to run for each point of a sweep: a fixed algorithm and protocol, what NCCL's cost model
// would pick (`auto`, the default), or the fastest by simulation (`--select fastest`).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ccsim/measure.hpp"
#include "sim/nccl_system.hpp"
#include "sim/nccl_tuning.hpp"

namespace CLI {
class App;
}

namespace ccsim::cli {

struct Selection {
  std::string algorithm = "auto";  // a ccsim algorithm, or auto
  std::string protocol = "auto";   // simple, ll, ll128, or auto
  std::string mode = "nccl";       // nccl: NCCL's cost model decides what `auto` means; fastest: simulate all
  std::optional<int> channels;     // default: what NCCL would launch
  std::optional<Bytes> chunk_bytes;  // default: the model's per protocol
  std::vector<std::string> levels;   // hierarchical
  int gpus_per_thread = 1;           // how the run issues calls (nccl-tests -g): PointOptions::gpus_per_thread
  int threads = 1;                   // host threads a process (nccl-tests -t): PointOptions::threads
  int iters = kNcclTestsIters;       // calls in the timed loop (nccl-tests -n): PointOptions::iters
  int nccl_release = 0;              // NCCL 2.x minor whose cost model decides `auto` (nccl::System::release)
  // NCCL_MIN/MAX_NCHANNELS and the like (the channels calls launch), NCCL_NVLS_ENABLE, and
  // NCCL_ALGO / NCCL_PROTO (what `auto` and `--select fastest` may pick from for each collective).
  nccl::EnvSettings nccl_env_settings;
};

// --nccl-env NAME=VALUE, repeatable: the NCCL settings a run is made under (perf, accuracy,
// calibrate). parse_nccl_env reads the values given; Error naming the one it cannot read.
void add_nccl_env_option(CLI::App* cmd, std::vector<std::string>& given);
nccl::EnvSettings parse_nccl_env(const std::vector<std::string>& given);
// The model a run under `settings` takes: NCCL_BUFFSIZE sets the Simple FIFO, whose ring chunk is
// CHUNKSTEPS (4) of its NCCL_STEPS (8) steps, half of it (chunk_bytes.simple; the steps of the other
// Simple algorithms and the FIFO's last-slice copy follow it, NVLS's and CollNet chains' own caps
// stay). Without it, `model` as it is.
Model with_nccl_buffers(Model model, const nccl::EnvSettings& settings);

class Planner {
 public:
  Planner(const topo::Topology& topology, const Model& model, int nranks, Selection selection);

  // One candidate normally; every (algorithm, protocol) the machine allows in fastest mode.
  std::vector<PointOptions> candidates(const CollectiveSpec& spec) const;
  // NCCL's own time estimate for what it would pick (its cost model) under the fixed parts of the
  // selection (NCCL_ALGO / NCCL_PROTO), when it covers the call.
  std::optional<double> nccl_estimate_us(const CollectiveSpec& spec) const;
  const nccl::System& system() const { return system_; }

 private:
  PointOptions point(const CollectiveSpec& spec, const std::string& algorithm, Protocol protocol, int channels) const;
  // NCCL's cheapest (algorithm, protocol) under the fixed parts of the selection.
  std::optional<nccl::Estimate> nccl_best(const CollectiveSpec& spec) const;
  // The (algorithm, protocol, channels) NCCL would use under the fixed parts of the selection.
  std::optional<PointOptions> nccl_pick(const CollectiveSpec& spec) const;

  const topo::Topology& topology_;
  const Model& model_;
  int nranks_;
  Selection selection_;
  nccl::System system_;
  mutable std::map<int, std::vector<std::vector<int>>> rings_;  // by channel count
};

// Simulates the candidates (without data checks), keeps the fastest, then checks its data: the
// winner is never reported unchecked when the check is on.
Point measure_best(const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
                   const std::vector<PointOptions>& candidates, const EngineOptions& engine = {});

}  // namespace ccsim::cli
