#pragma once
// Host arithmetic on every element type, as a GPU kernel does it: fp16 and bf16 are widened to
// float for each operation and rounded back (round to nearest even), integers wrap
// (kernels/elementwise.hpp).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/elementwise.hpp"
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

}  // namespace ccsim::kernels
