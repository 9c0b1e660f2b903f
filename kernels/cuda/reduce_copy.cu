// The reduce-copy and copy kernels. Each thread moves 16-byte vectors (kUnroll of them in flight per
// source, for memory-level parallelism); the elements before the first 16-byte boundary and after
// the last whole vector are handled one by one, so any size and any element offset is served.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/reduce_copy.cuh"
#include "kernels/elementwise.hpp"

namespace ccsim::kernels::gpu {

namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 4;
constexpr int kWideUnroll = 8;

// Storage type to computing type, as kernels/numeric.hpp's Element does it on the host (fp16 and
// bf16 widen to float and round back to nearest even).
template <typename T> struct DeviceElement {
  using Compute = T;
  static __device__ __forceinline__ T load(T v) { return v; }
  static __device__ __forceinline__ T store(T v) { return v; }
};
template <> struct DeviceElement<__half> {
  using Compute = float;
  static __device__ __forceinline__ float load(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half store(float v) { return __float2half_rn(v); }
};
template <> struct DeviceElement<__nv_bfloat16> {
  using Compute = float;
  static __device__ __forceinline__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

template <typename T, ReduceOp Op> __device__ __forceinline__ void one_element(const ReduceCopyArgs& a, std::uint64_t i) {
  using E = DeviceElement<T>;
  auto acc = E::load(static_cast<const T*>(a.src[0])[i]);
  for (int s = 1; s < a.sources; ++s) acc = combine(Op, acc, E::load(static_cast<const T*>(a.src[s])[i]));
  if (a.finalize) acc = finalize(Op, acc, a.nranks);
  const T out = E::store(acc);
  for (int d = 0; d < a.destinations; ++d) static_cast<T*>(a.dst[d])[i] = out;
}

// Elements [0, head) and [head + vectors * kVec, count) one at a time; the vectors in between with
// 16-byte loads and stores from element `head` on (where every pointer is 16-byte aligned).
template <typename T, ReduceOp Op>
__global__ void __launch_bounds__(kThreads) reduce_copy_kernel(ReduceCopyArgs a, std::uint64_t head, std::uint64_t vectors) {
  using E = DeviceElement<T>;
  using C = typename E::Compute;
  constexpr int kVec = 16 / sizeof(T);
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = tid; i < head; i += threads) one_element<T, Op>(a, i);
  for (std::uint64_t i = head + vectors * kVec + tid; i < a.count; i += threads) one_element<T, Op>(a, i);

  const bool plain_copy = a.sources == 1 && !a.finalize;
  for (std::uint64_t v0 = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) * kUnroll + threadIdx.x; v0 < vectors;
       v0 += threads * kUnroll) {
    uint4 raw[kUnroll] = {};
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::uint64_t v = v0 + static_cast<std::uint64_t>(k) * blockDim.x;
      if (v < vectors) raw[k] = reinterpret_cast<const uint4*>(static_cast<const T*>(a.src[0]) + head)[v];
    }
    if (!plain_copy) {
      C acc[kUnroll][kVec];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        const T* x = reinterpret_cast<const T*>(&raw[k]);
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[k][j] = E::load(x[j]);
      }
      for (int s = 1; s < a.sources; ++s) {
        uint4 in[kUnroll] = {};
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
          const std::uint64_t v = v0 + static_cast<std::uint64_t>(k) * blockDim.x;
          if (v < vectors) in[k] = reinterpret_cast<const uint4*>(static_cast<const T*>(a.src[s]) + head)[v];
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
          const T* y = reinterpret_cast<const T*>(&in[k]);
#pragma unroll
          for (int j = 0; j < kVec; ++j) acc[k][j] = combine(Op, acc[k][j], E::load(y[j]));
        }
      }
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        T* out = reinterpret_cast<T*>(&raw[k]);
#pragma unroll
        for (int j = 0; j < kVec; ++j) out[j] = E::store(a.finalize ? finalize(Op, acc[k][j], a.nranks) : acc[k][j]);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::uint64_t v = v0 + static_cast<std::uint64_t>(k) * blockDim.x;
      if (v >= vectors) continue;
      for (int d = 0; d < a.destinations; ++d) reinterpret_cast<uint4*>(static_cast<T*>(a.dst[d]) + head)[v] = raw[k];
    }
  }
}

// The two shapes the executor and NCCL's steps use most, a copy (one source) and a two-source
// reduce, into one destination: the pointers live in registers and each thread keeps U vectors
// of each source in flight, combining them as they come (no accumulator array, so U = 8 fits in
// registers: ptxas spills 8 bytes only for the 1-byte types' logical or). Measured on an H200 at 256 MiB (GB/s read+written; cudaMemcpy 4249): a
// standalone copy of this loop moved 3895 (copy) and 4118 (reduce-copy) with 4 vectors in flight,
// 4031 and 4237 with 8, where the generic kernel above, with 4, moved 3702 and 3798; this kernel
// in ccsim then moved 3987 and 4264 (gpu-check).
template <typename T, ReduceOp Op, int Sources, int U>
__global__ void __launch_bounds__(kThreads) reduce_copy_fixed_kernel(ReduceCopyArgs a, std::uint64_t head, std::uint64_t vectors) {
  using E = DeviceElement<T>;
  constexpr int kVec = 16 / sizeof(T);
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  // Only constant indices into `a`: a dynamic one would put the whole argument block in local
  // memory, written by every thread at the start (120 bytes a thread, 32 MB for a full grid). No
  // __restrict__: in place, the destination is the first source.
  const T* e0 = static_cast<const T*>(a.src[0]);
  const T* e1 = static_cast<const T*>(a.src[Sources - 1]);
  T* o0 = static_cast<T*>(a.dst[0]);
  const bool last = a.finalize;
  const int nranks = a.nranks;
  auto one = [&](std::uint64_t i) {
    auto acc = E::load(e0[i]);
    if constexpr (Sources == 2) acc = combine(Op, acc, E::load(e1[i]));
    o0[i] = E::store(last ? finalize(Op, acc, nranks) : acc);
  };
  for (std::uint64_t i = tid; i < head; i += threads) one(i);
  for (std::uint64_t i = head + vectors * kVec + tid; i < a.count; i += threads) one(i);

  const uint4* s0 = reinterpret_cast<const uint4*>(e0 + head);
  const uint4* s1 = reinterpret_cast<const uint4*>(e1 + head);
  uint4* d0 = reinterpret_cast<uint4*>(o0 + head);
  for (std::uint64_t v0 = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) * U + threadIdx.x; v0 < vectors;
       v0 += threads * U) {
    uint4 x[U], y[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const std::uint64_t v = v0 + static_cast<std::uint64_t>(k) * blockDim.x;
      if (v < vectors) x[k] = s0[v];
    }
    if constexpr (Sources == 2) {
#pragma unroll
      for (int k = 0; k < U; ++k) {
        const std::uint64_t v = v0 + static_cast<std::uint64_t>(k) * blockDim.x;
        if (v < vectors) y[k] = s1[v];
      }
    }
    if (Sources == 2 || last) {
#pragma unroll
      for (int k = 0; k < U; ++k) {
        T* out = reinterpret_cast<T*>(&x[k]);
        const T* in = reinterpret_cast<const T*>(&y[k]);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          auto acc = E::load(out[j]);
          if constexpr (Sources == 2) acc = combine(Op, acc, E::load(in[j]));
          out[j] = E::store(last ? finalize(Op, acc, nranks) : acc);
        }
      }
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const std::uint64_t v = v0 + static_cast<std::uint64_t>(k) * blockDim.x;
      if (v < vectors) d0[v] = x[k];
    }
  }
}

int blocks_for(std::uint64_t work_items, int max_blocks) {
  const std::uint64_t wanted = (work_items + kThreads - 1) / kThreads;
  const int cap = max_blocks > 0 ? max_blocks : full_grid();
  return static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(wanted, static_cast<std::uint64_t>(cap))));
}

template <typename T, ReduceOp Op> void launch_typed(const ReduceCopyArgs& a, int max_blocks, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  // The vector body needs every pointer at the same offset from a 16-byte boundary.
  const auto misalign = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16; };
  const std::uintptr_t m = misalign(a.src[0]);
  bool shared = (16 - m) % sizeof(T) == 0;
  for (int s = 0; s < a.sources; ++s) shared = shared && misalign(a.src[s]) == m;
  for (int d = 0; d < a.destinations; ++d) shared = shared && misalign(a.dst[d]) == m;
  std::uint64_t head = a.count, vectors = 0;
  if (shared) {
    head = std::min<std::uint64_t>(a.count, ((16 - m) % 16) / sizeof(T));
    vectors = (a.count - head) / kVec;
  }
  const std::uint64_t scalar = a.count - vectors * kVec;
  const int blocks = blocks_for(std::max(scalar, (vectors + kUnroll - 1) / kUnroll), max_blocks);
  if (a.destinations == 1 && a.sources <= 2) {
    // 8 vectors in flight once every thread of the grid has that many; below, 4 keep the grid as
    // wide as the generic kernel's (a 2 MiB step then runs on 64 blocks, not 32).
    const bool wide = vectors >= static_cast<std::uint64_t>(blocks) * kThreads * kWideUnroll;
    if (a.sources == 1) {
      if (wide) reduce_copy_fixed_kernel<T, Op, 1, kWideUnroll><<<blocks, kThreads, 0, stream>>>(a, head, vectors);
      else reduce_copy_fixed_kernel<T, Op, 1, kUnroll><<<blocks, kThreads, 0, stream>>>(a, head, vectors);
    } else {
      if (wide) reduce_copy_fixed_kernel<T, Op, 2, kWideUnroll><<<blocks, kThreads, 0, stream>>>(a, head, vectors);
      else reduce_copy_fixed_kernel<T, Op, 2, kUnroll><<<blocks, kThreads, 0, stream>>>(a, head, vectors);
    }
  } else {
    reduce_copy_kernel<T, Op><<<blocks, kThreads, 0, stream>>>(a, head, vectors);
  }
  CCSIM_CUDA(cudaGetLastError());
}

template <typename T> void launch_op(ReduceOp op, const ReduceCopyArgs& a, int max_blocks, cudaStream_t stream) {
  switch (op) {
    case ReduceOp::sum: return launch_typed<T, ReduceOp::sum>(a, max_blocks, stream);
    case ReduceOp::prod: return launch_typed<T, ReduceOp::prod>(a, max_blocks, stream);
    case ReduceOp::min: return launch_typed<T, ReduceOp::min>(a, max_blocks, stream);
    case ReduceOp::max: return launch_typed<T, ReduceOp::max>(a, max_blocks, stream);
    case ReduceOp::avg: return launch_typed<T, ReduceOp::avg>(a, max_blocks, stream);
    case ReduceOp::lor: return launch_typed<T, ReduceOp::lor>(a, max_blocks, stream);
  }
}

}  // namespace

int full_grid() {
  static int cached[64] = {};
  int device = 0;
  CCSIM_CUDA(cudaGetDevice(&device));
  if (device < 0 || device >= 64) return 1024;
  if (cached[device] == 0) {
    int sms = 0, threads = 0;
    CCSIM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CCSIM_CUDA(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    cached[device] = sms * std::max(1, threads / kThreads);
  }
  return cached[device];
}

void launch_reduce_copy(DataType type, ReduceOp op, const ReduceCopyArgs& args, int max_blocks, cudaStream_t stream) {
  if (args.count == 0 || args.destinations == 0) return;
  if (args.sources < 1 || args.sources > kMaxSources || args.destinations > kMaxDestinations)
    throw Error("reduce-copy: " + std::to_string(args.sources) + " sources and " + std::to_string(args.destinations) +
                " destinations (at most " + std::to_string(kMaxSources) + " and " + std::to_string(kMaxDestinations) + ")");
  switch (type) {
    case DataType::int8: return launch_op<std::int8_t>(op, args, max_blocks, stream);
    case DataType::uint8: return launch_op<std::uint8_t>(op, args, max_blocks, stream);
    case DataType::int32: return launch_op<std::int32_t>(op, args, max_blocks, stream);
    case DataType::uint32: return launch_op<std::uint32_t>(op, args, max_blocks, stream);
    case DataType::int64: return launch_op<std::int64_t>(op, args, max_blocks, stream);
    case DataType::uint64: return launch_op<std::uint64_t>(op, args, max_blocks, stream);
    case DataType::fp16: return launch_op<__half>(op, args, max_blocks, stream);
    case DataType::bf16: return launch_op<__nv_bfloat16>(op, args, max_blocks, stream);
    case DataType::fp32: return launch_op<float>(op, args, max_blocks, stream);
    case DataType::fp64: return launch_op<double>(op, args, max_blocks, stream);
  }
}

void launch_copy(const void* src, void* dst, std::uint64_t bytes, int max_blocks, cudaStream_t stream) {
  if (bytes == 0) return;
  ReduceCopyArgs a;
  a.src[0] = src;
  a.dst[0] = dst;
  a.sources = 1;
  a.destinations = 1;
  a.count = bytes;
  launch_typed<std::uint8_t, ReduceOp::sum>(a, max_blocks, stream);  // one source: a plain copy
}

// --- Test harness: host arrays in, host arrays out ---------------------------------------------

namespace {

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { CCSIM_CUDA(cudaMalloc(&p, std::max<std::size_t>(bytes, 16))); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::byte* bytes() { return static_cast<std::byte*>(p); }
};

}  // namespace

std::vector<std::vector<std::byte>> reduce_copy_on_device(int device, DataType type, ReduceOp op,
                                                          const std::vector<std::vector<std::byte>>& sources,
                                                          int destinations, std::uint64_t count,
                                                          std::uint64_t src_offset, std::uint64_t dst_offset,
                                                          bool finalize_values, int nranks) {
  CCSIM_CUDA(cudaSetDevice(device));
  const std::size_t e = element_bytes(type);
  ReduceCopyArgs a;
  a.sources = static_cast<int>(sources.size());
  a.destinations = destinations;
  a.count = count;
  a.finalize = finalize_values;
  a.nranks = nranks;
  std::vector<std::unique_ptr<DeviceBuffer>> in, out;
  for (std::size_t s = 0; s < sources.size() && s < kMaxSources; ++s) {
    if (sources[s].size() < count * e) throw Error("reduce_copy_on_device: source " + std::to_string(s) + " is too short");
    in.push_back(std::make_unique<DeviceBuffer>((src_offset + count) * e));
    CCSIM_CUDA(cudaMemcpy(in.back()->bytes() + src_offset * e, sources[s].data(), count * e, cudaMemcpyHostToDevice));
    a.src[s] = in.back()->bytes() + src_offset * e;
  }
  for (int d = 0; d < destinations && d < kMaxDestinations; ++d) {
    out.push_back(std::make_unique<DeviceBuffer>((dst_offset + count) * e));
    a.dst[d] = out.back()->bytes() + dst_offset * e;
  }
  launch_reduce_copy(type, op, a, 0, nullptr);
  CCSIM_CUDA(cudaDeviceSynchronize());
  std::vector<std::vector<std::byte>> result(out.size(), std::vector<std::byte>(count * e));
  for (std::size_t d = 0; d < out.size(); ++d)
    CCSIM_CUDA(cudaMemcpy(result[d].data(), a.dst[d], count * e, cudaMemcpyDeviceToHost));
  return result;
}

std::vector<std::byte> copy_on_device(int device, const std::vector<std::byte>& source, std::uint64_t src_offset,
                                      std::uint64_t dst_offset) {
  CCSIM_CUDA(cudaSetDevice(device));
  DeviceBuffer in(src_offset + source.size()), out(dst_offset + source.size());
  CCSIM_CUDA(cudaMemcpy(in.bytes() + src_offset, source.data(), source.size(), cudaMemcpyHostToDevice));
  launch_copy(in.bytes() + src_offset, out.bytes() + dst_offset, source.size(), 0, nullptr);
  CCSIM_CUDA(cudaDeviceSynchronize());
  std::vector<std::byte> result(source.size());
  CCSIM_CUDA(cudaMemcpy(result.data(), out.bytes() + dst_offset, source.size(), cudaMemcpyDeviceToHost));
  return result;
}

}  // namespace ccsim::kernels::gpu
