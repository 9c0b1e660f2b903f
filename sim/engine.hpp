#pragma once
// The engine interface: time a schedule on a platform under a timing model. The SimGrid engine is
// the reference implementation; simulate() runs it in a child process because SimGrid allows one
// simulation per process.
#include <cstdint>
#include <functional>

#include "sim/model.hpp"
#include "sim/platform.hpp"
#include "sim/schedule.hpp"
#include "sim/timeline.hpp"

namespace ccsim {

struct EngineOptions {
  bool record_steps = false;    // fill Timeline::steps (memory grows with the step count)
  bool charge_compute = true;   // cost reduce and copy steps by HBM traffic
  // A recv's kernel runs after its data has arrived instead of while it arrives, and a plain recv
  // copies out of a staging slot: the CUDA executor's steps (a send's copy into the receiver's
  // slot, then the recv's reduce-copy out of it), which `ccsim validate` simulates.
  bool staged_receives = false;
  // With staged_receives: the recv kernel is launched only once its data is there, so it starts
  // this long after the arrival (a dependent launch: `gpu bench`'s step figure).
  double staged_launch_s = 0;
  // With staged_receives: the share of a slot's bytes the recv kernel reads from HBM; the rest is
  // still in L2, written there by the send just before (1: all from HBM).
  double staged_slot_hbm_share = 1;
  // Time the call as nccl-tests does: the same call issued back to back on every rank's stream,
  // each rank starting the next as soon as its own kernel of the last ends (and its launch latency
  // has passed). The engine runs two calls and reports the second's duration on the slowest rank
  // (Timeline::period_s). A rooted call's chain then overlaps one call's tail with the next's
  // head, as it does on GPUs; where every rank waits for every other it changes nothing.
  bool back_to_back = false;
  // Ranks one process drives (nccl-tests -t x -g; 1: a process per rank, as MPI launches them).
  // NCCL's P2P transport between two ranks of one process hands the sender the receiver's own
  // buffers (direct pointers), so a collective's last receive from such a peer lands where it
  // belongs; from another process, through host memory or across the network it lands in the
  // connection's FIFO, and the receiving block copies its last slice out after it has arrived.
  int ranks_per_process = 1;
  // NCCL_P2P_NET_CHUNKSIZE: the data a step of a point-to-point operation to another node carries
  // (NCCL's default 128 KiB), whose first copy in and last copy out its blocks pay (nccl::System::
  // p2p_chunk_bytes).
  std::uint64_t p2p_net_chunk_bytes = 128 << 10;
  // Called from the simulating process every few seconds of host time, once the run has taken
  // that long, with the share of the schedule's steps run so far: long runs (a thousand GPUs) say
  // how far they are. Short runs never call it.
  std::function<void(double)> progress;
};

// The fixed per-call cost of a schedule: its kernel's launch (kernel_launch_s) plus the set-up of
// its thread blocks (block_setup_s).
double launch_latency_s(const Schedule& schedule, const Model& model);
// The model's launch latency of the schedule's slowest protocol (NVLS kernels: their own).
double kernel_launch_s(const Schedule& schedule, const Model& model);
// block_setup_us for each thread block of the busiest rank's kernel.
double block_setup_s(const Schedule& schedule, const Model& model);

struct SimulationResult {
  Timeline timeline;
  double wall_s = 0;                 // host time the simulation took
  std::uint64_t peak_rss_bytes = 0;  // peak memory of the simulating process
};

// Runs the SimGrid engine in this process. Call at most once per process (SimGrid's limit).
Timeline simulate_in_process(const Schedule& schedule, const PlatformPlan& plan, const Model& model,
                             const EngineOptions& options);

// Plans the platform, forks, runs the SimGrid engine in the child and returns its timeline with
// link traffic filled in. Safe to call any number of times. Errors in the child come back as Error.
SimulationResult simulate(const Schedule& schedule, const topo::Topology& topology, const Model& model,
                          const EngineOptions& options = {});

}  // namespace ccsim
