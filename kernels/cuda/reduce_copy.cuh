#pragma once
// The primitive NCCL's steps are made of: read k sources, combine them element by element with the
// reduction op, write the result to m destinations. A copy is the k = 1 case without arithmetic.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu.hpp"
#include "sim/datatype.hpp"
#include "sim/reduce_op.hpp"

namespace ccsim::kernels::gpu {

struct ReduceCopyArgs {
  const void* src[kMaxSources] = {};
  void* dst[kMaxDestinations] = {};
  int sources = 0;
  int destinations = 0;
  std::uint64_t count = 0;  // elements
  bool finalize = false;    // apply the op's last touch (avg divides by nranks)
  int nranks = 1;
};

// Enqueues the kernel on `stream` of the current device. `max_blocks` bounds the grid (0: enough
// blocks to fill the device); a zero count enqueues nothing.
void launch_reduce_copy(DataType type, ReduceOp op, const ReduceCopyArgs& args, int max_blocks, cudaStream_t stream);
// Byte copy with 16-byte vectors where source and destination share their alignment.
void launch_copy(const void* src, void* dst, std::uint64_t bytes, int max_blocks, cudaStream_t stream);
// Blocks that keep every multiprocessor of the current device busy with the kernels above.
int full_grid();

}  // namespace ccsim::kernels::gpu
