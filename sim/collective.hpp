#pragma once
// What a collective call is, and the buffer conventions of nccl-tests for each kind: what "count"
// means, how large each rank's send and receive buffers are, and where the send buffer sits inside
// the receive buffer when the call is in place.
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/datatype.hpp"
#include "sim/reduce_op.hpp"
#include "sim/units.hpp"

namespace ccsim {

enum class CollectiveKind {
  broadcast,
  reduce,
  all_reduce,
  reduce_scatter,
  all_gather,
  gather,
  scatter,
  alltoall,
  sendrecv,
};

std::string_view to_string(CollectiveKind kind);
CollectiveKind parse_collective(std::string_view name);  // also accepts nccl-tests' "allreduce" forms
const std::vector<CollectiveKind>& all_collectives();
bool is_reduction(CollectiveKind kind);
bool is_rooted(CollectiveKind kind);
// Whether a call's element count is one rank's whole buffer (all_reduce, broadcast, reduce,
// sendrecv) or the total over all ranks, split into equal blocks (all_gather, reduce_scatter,
// alltoall, gather, scatter). nccl-tests' -b/-e sizes are the total either way; its "count" column
// prints one block (CollectiveSpec::block_count).
bool count_is_per_rank(CollectiveKind kind);
// nccl-tests' element count for a message of `size` bytes (its -b/-e sizes, the "size" column):
// size / element, rounded down to a multiple of the ranks for the block collectives, which give
// each rank an equal block. 0 when the size holds less than one element per rank.
std::uint64_t count_for_size(CollectiveKind kind, DataType type, Bytes size, int nranks);
// nccl-tests' busbw = algbw x factor (doc/PERFORMANCE.md).
double bus_bandwidth_factor(CollectiveKind kind, int nranks);

struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::all_reduce;
  DataType type = DataType::fp32;
  ReduceOp op = ReduceOp::sum;  // ignored by non-reductions
  int root = 0;                 // ignored by rootless collectives
  int nranks = 1;
  // Elements per rank for all_reduce, broadcast, reduce and sendrecv; total elements (all ranks
  // together) for all_gather, reduce_scatter, alltoall, gather, scatter: size_bytes() is the size
  // column of nccl-tests either way.
  std::uint64_t count = 0;

  Bytes size_bytes() const { return count * element_bytes(type); }
  // Elements of one rank's block: the whole count where it is per rank, else an equal share of it
  // (what one rank gives each peer of an alltoall, or gathers from each). This is what nccl-tests
  // prints in its "count" column (its paramcount: a rank's block for the block collectives).
  std::uint64_t block_count() const;
  // Elements in one rank's send (input) and receive (output) buffer.
  std::uint64_t input_count(int rank) const;
  std::uint64_t output_count(int rank) const;
  // In-place calls share one allocation per rank of max(input, output) elements. These are the
  // element offsets of the send and receive buffers inside it: all_gather's send buffer is block
  // `rank` of the receive buffer, reduce_scatter's receive buffer is block `rank` of the send
  // buffer, and the other kinds use the same memory for both.
  std::uint64_t in_place_input_offset(int rank) const;
  std::uint64_t in_place_output_offset(int rank) const;
  // Throws Error when the spec cannot be run (rank count, root, count divisibility).
  void validate() const;
};

}  // namespace ccsim
