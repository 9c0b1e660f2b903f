#pragma once
// The arithmetic of one element, shared by the CPU executor and the CUDA kernels so that both
// compute bit-identical results: integers wrap, floats combine in their computing type (fp16 and
// bf16 widen to float), min/max ignore a NaN operand like C's fmin/fmax.
#include <math.h>

#include <cstdint>
#include <type_traits>

#include "sim/reduce_op.hpp"

#if defined(__CUDACC__)
#define CCSIM_HD __host__ __device__ __forceinline__
#else
#define CCSIM_HD inline
#endif

namespace ccsim::kernels {

CCSIM_HD float fmin_of(float a, float b) { return fminf(a, b); }
CCSIM_HD double fmin_of(double a, double b) { return fmin(a, b); }
CCSIM_HD float fmax_of(float a, float b) { return fmaxf(a, b); }
CCSIM_HD double fmax_of(double a, double b) { return fmax(a, b); }

// a op b in the computing type; integer sum and product wrap modulo 2^bits.
template <typename C> CCSIM_HD C combine(ReduceOp op, C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    // Unsigned arithmetic of at least int's width: uint8 * uint8 would promote to a signed int.
    using U = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
      case ReduceOp::prod: return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
      case ReduceOp::min: return b < a ? b : a;
      case ReduceOp::max: return b > a ? b : a;
      case ReduceOp::lor: return static_cast<C>((a != 0 || b != 0) ? 1 : 0);
    }
  } else {
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: return a + b;
      case ReduceOp::prod: return a * b;
      case ReduceOp::min: return fmin_of(a, b);
      case ReduceOp::max: return fmax_of(a, b);
      case ReduceOp::lor: return (a != 0 || b != 0) ? C(1) : C(0);
    }
  }
  return a;
}

// The op's last touch on a final value: avg divides the sum by the rank count (NCCL's ncclAvg:
// integer division for integers); lor turns a lone input into 0 or 1.
template <typename C> CCSIM_HD C finalize(ReduceOp op, C v, int nranks) {
  if (op == ReduceOp::avg) {
    if constexpr (std::is_integral_v<C>) {
      // Divide in a wide type: the rank count need not fit in C (128 ranks of int8).
      using Wide = std::conditional_t<std::is_signed_v<C>, std::int64_t, std::uint64_t>;
      return static_cast<C>(static_cast<Wide>(v) / static_cast<Wide>(nranks));
    } else {
      return v / static_cast<C>(nranks);
    }
  }
  if (op == ReduceOp::lor) return v != 0 ? C(1) : C(0);
  return v;
}

}  // namespace ccsim::kernels
