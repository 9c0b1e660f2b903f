#pragma once
// The schedule IR: what every backend consumes. A collective algorithm compiles to one ordered list
// of steps per (rank, channel) stream. The simulator times the steps, the CPU executor runs them on
// host memory to prove the data right, the CUDA executor runs them on GPUs.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collective.hpp"
#include "sim/protocol.hpp"

namespace ccsim {

// A rank's buffers. input and output are the collective's send and receive buffers (aliased when
// the call is in place, see CollectiveSpec::in_place_*_offset); scratch is algorithm-private.
enum class BufferId : std::uint8_t { input, output, scratch };
std::string_view to_string(BufferId buffer);

// The buffer shares the offset's word (a schedule of a large run holds tens of millions of steps,
// two regions each): 16 bytes instead of 24, offsets up to 2^56 elements.
struct Region {
  BufferId buffer : 8 = BufferId::input;
  std::uint64_t offset : 56 = 0;  // elements
  std::uint64_t count = 0;        // elements
  bool operator==(const Region&) const = default;
};
static_assert(sizeof(Region) == 16);

enum class StepKind : std::uint8_t {
  send,    // send `src` to `peer`
  recv,    // receive from `peer` into `dst`: dst = incoming, or dst = op(src, incoming) if reduce
  copy,    // dst = src (local)
  reduce,  // dst = op(dst, src) (local)
};
std::string_view to_string(StepKind kind);

struct Step {
  StepKind kind = StepKind::send;
  Protocol protocol = Protocol::simple;
  bool reduce = false;    // recv only: combine the incoming data with `src` using the collective's op
  bool finalize = false;  // the result is final: apply the op's last touch (avg divides by nranks)
  bool wait = false;      // send only: the stream waits until the data has arrived (MPI_Send-like)
  bool overlap = false;   // recv: posted together with the next recv, so their transfers run at
                          // once (a switch reading every GPU); combined in program order. send:
                          // issued together with the next send (another peer's point-to-point
                          // operation of the same kernel), so their latencies overlap
  bool fused = false;     // send only: one leg of a multi-party operation (an NVLS reduction reads
                          // every GPU at once) whose latency another step of it pays
  bool part = false;      // send only: a later piece of a chunk forwarded line by line (LL/LL128
                          // inside a node): it pays its latency but takes no FIFO slot of its own
  std::int32_t peer = -1;  // send / recv
  std::int32_t tag = 0;    // a send matches the peer's recv with the same tag, in program order
  Region src;
  Region dst;

  // Elements moved or produced by the step.
  std::uint64_t count() const { return kind == StepKind::send ? src.count : dst.count; }
  // Which regions the step touches: `src` is read by all but a plain recv, `dst` written by all
  // but a send (a reduce also reads it).
  bool uses_src() const { return kind != StepKind::recv || reduce; }
  bool uses_dst() const { return kind != StepKind::send; }
};
static_assert(sizeof(Step) == 48, "a step's size is most of a large schedule's memory");

// Semantics every backend honours: steps of a stream run in order; a send reads its source when it
// runs (later steps may overwrite it) and does not wait for the receiver unless `wait` is set; a
// recv waits for the matching send. Streams run concurrently, several may share a (rank, channel).
struct Stream {
  int rank = 0;
  int channel = 0;
  std::vector<Step> steps;
  // The share of its thread block's threads the stream runs on: 1 but where NCCL splits a block's
  // warps between two jobs (a tree's non-root ranks reduce up with some, broadcast down with the
  // rest). What the block can load and store per second is split the same way.
  float block_share = 1;
};

// A switch that reduces or multicasts in the network (NVLS, CollNet/SHARP) takes part in a schedule
// as an endpoint numbered after the ranks: endpoint nranks + i. Its streams receive, combine and
// forward like a rank's, with scratch memory only. Engines place it on the matching switch of the
// topology and charge its arithmetic nothing (it runs at line rate in the switch).
struct SwitchEndpoint {
  enum class Kind : std::uint8_t {
    nvls,   // a node's NVSwitch fabric (NVLink SHARP)
    sharp,  // the network switch of a rail (InfiniBand SHARP, NCCL's CollNet)
  } kind = Kind::nvls;
  int index = 0;  // nvls: the node; sharp: the rail (the local index of the heads it serves)
};

// Whether an algorithm's schedule is NCCL's point-to-point kernel (ncclSend/ncclRecv in a group:
// alltoall, sendrecv, gather, scatter), whose blocks, protocol latencies and proxy costs are its own.
// Other exchanges (pairwise, Bruck) run as collectives.
inline bool is_point_to_point_kernel(std::string_view algorithm) { return algorithm == "direct"; }

struct Schedule {
  CollectiveSpec spec;
  std::string algorithm;
  std::vector<Stream> streams;
  std::uint64_t scratch_count = 0;  // elements of scratch per endpoint
  std::vector<SwitchEndpoint> switches;
  int blocks_per_stream = 1;  // identical NCCL thread blocks each stream stands for (fold_copies)

  int endpoint_count() const { return spec.nranks + static_cast<int>(switches.size()); }
  bool is_switch(int endpoint) const { return endpoint >= spec.nranks; }

  std::size_t step_count() const;
  // Thread blocks of the busiest rank's kernel: one per channel it runs, times blocks_per_stream.
  int blocks_per_rank() const;
  // Checks the structural rules every backend relies on: ranks, peers and regions in range, each
  // send matched by one recv of the same size and tag. Throws Error naming the first broken step.
  void validate() const;
};

// The steps an in-place call runs. Once the send buffer lies inside the receive buffer
// (CollectiveSpec::in_place_*_offset), a copy from the one to the other at the same place moves
// nothing: an all_gather's or alltoall's own block, a broadcast root's data. Those copies are
// dropped; nullopt when there are none, and the call runs the same steps either way.
std::optional<Schedule> in_place_variant(const Schedule& schedule);
bool has_in_place_copies(const Schedule& schedule);  // whether in_place_variant drops any step

// Bytes a rank sends and receives (data, not wire bytes): the volume the property tests check.
struct RankVolume {
  std::uint64_t sent_bytes = 0;
  std::uint64_t received_bytes = 0;
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
};
// One entry per endpoint: the ranks first, then the switches.
std::vector<RankVolume> rank_volumes(const Schedule& schedule);

}  // namespace ccsim
