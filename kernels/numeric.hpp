#pragma once
// Host arithmetic on every element type, as a GPU kernel does it: fp16 and bf16 are widened to
// float for each operation and rounded back (round to nearest even), integers wrap.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "sim/datatype.hpp"
#include "sim/reduce_op.hpp"

namespace ccsim::kernels {

struct Half { std::uint16_t bits; };
struct BFloat16 { std::uint16_t bits; };

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);
float bf16_to_float(std::uint16_t b);
std::uint16_t float_to_bf16(float f);

// The C++ type that stores each DataType, and how it converts to and from a computing type.
template <typename T> struct Element {
  using Compute = T;
  static Compute load(T v) { return v; }
  static T store(Compute v) { return v; }
};
template <> struct Element<Half> {
  using Compute = float;
  static float load(Half v) { return half_to_float(v.bits); }
  static Half store(float v) { return {float_to_half(v)}; }
};
template <> struct Element<BFloat16> {
  using Compute = float;
  static float load(BFloat16 v) { return bf16_to_float(v.bits); }
  static BFloat16 store(float v) { return {float_to_bf16(v)}; }
};

// Calls f(T{}) with the storage type of `type`.
template <typename F> decltype(auto) dispatch(DataType type, F&& f) {
  switch (type) {
    case DataType::int8: return f(std::int8_t{});
    case DataType::uint8: return f(std::uint8_t{});
    case DataType::int32: return f(std::int32_t{});
    case DataType::uint32: return f(std::uint32_t{});
    case DataType::int64: return f(std::int64_t{});
    case DataType::uint64: return f(std::uint64_t{});
    case DataType::fp16: return f(Half{});
    case DataType::bf16: return f(BFloat16{});
    case DataType::fp32: return f(float{});
    case DataType::fp64: return f(double{});
  }
  return f(float{});
}

// a op b in the computing type; integer sum and product wrap modulo 2^bits.
template <typename C> C combine(ReduceOp op, C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case ReduceOp::prod: return static_cast<C>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
      case ReduceOp::min: return b < a ? b : a;
      case ReduceOp::max: return b > a ? b : a;
      case ReduceOp::lor: return static_cast<C>((a != 0 || b != 0) ? 1 : 0);
    }
  } else {
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: return a + b;
      case ReduceOp::prod: return a * b;
      case ReduceOp::min: return std::fmin(a, b);
      case ReduceOp::max: return std::fmax(a, b);
      case ReduceOp::lor: return (a != 0 || b != 0) ? C(1) : C(0);
    }
  }
  return a;
}

// The op's last touch on a final value: avg divides the sum by the rank count (NCCL's ncclAvg:
// integer division for integers); lor turns a lone input into 0 or 1.
template <typename C> C finalize(ReduceOp op, C v, int nranks) {
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
