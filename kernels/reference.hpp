#pragma once
// The definition of each collective, element by element, and the test data it is checked on.
#include <cstdint>
#include <vector>

#include "kernels/cpu_executor.hpp"
#include "kernels/numeric.hpp"

namespace ccsim::kernels {

std::uint64_t mix64(std::uint64_t x);

// Input element i of `rank`: deterministic, rarely zero, and safe for `op` over up to 128 ranks
// (odd integers for prod so products never collapse to 0; floats in [-1, 1] for sums and in
// [0.95, 1.05] for products so fp16 neither overflows nor underflows).
template <typename T> T test_value(ReduceOp op, std::uint64_t seed, int rank, std::uint64_t i) {
  const std::uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ULL ^ mix64(static_cast<std::uint64_t>(rank) << 40 ^ i));
  if constexpr (std::is_integral_v<T>) {
    if (op == ReduceOp::prod) return static_cast<T>(h | 1u);
    if (op == ReduceOp::lor) return static_cast<T>(h % 3 == 0 ? 0 : (h >> 8) % 5 + 1);
    return static_cast<T>(h >> 3);
  } else {
    using E = Element<T>;
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
    double v = 2 * u - 1;
    if (op == ReduceOp::prod) v = 0.95 + 0.1 * u;
    if (op == ReduceOp::lor) v = h % 3 == 0 ? 0.0 : 1 + u;
    return E::store(static_cast<typename E::Compute>(v));
  }
}

// Compares every rank's output buffer with the definition of `spec` on the inputs test_value gives.
CheckResult compare_with_definition(const CollectiveSpec& spec, const std::vector<RankMemory>& memory,
                                    std::uint64_t seed);

}  // namespace ccsim::kernels
