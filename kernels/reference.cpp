#include "kernels/reference.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "sim/error.hpp"

namespace ccsim::kernels {

std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {

// Unit round-off of each type's storage: the tolerance grows with the number of rounded operations.
template <typename T> double unit_roundoff() {
  if constexpr (std::is_same_v<T, Half>) return 0x1.0p-11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 0x1.0p-8;
  else if constexpr (std::is_same_v<T, float>) return 0x1.0p-24;
  else return 0x1.0p-53;
}

// The reduced value of element i over all ranks. Integers: the same wrapping fold in rank order
// (the ops are commutative and associative modulo 2^bits, so any correct order agrees bit for bit).
// Floats: computed in double, with the error bound of n rounded operations in T.
template <typename T> struct Expected {
  double exact = 0;
  double tolerance = 0;
  T integer{};
};

template <typename T> Expected<T> reduced(const CollectiveSpec& spec, std::uint64_t seed, std::uint64_t i) {
  Expected<T> e;
  const int n = spec.nranks;
  if constexpr (std::is_integral_v<T>) {
    T acc = test_value<T>(spec.op, seed, 0, i);
    for (int r = 1; r < n; ++r) acc = combine(spec.op, acc, test_value<T>(spec.op, seed, r, i));
    e.integer = finalize(spec.op, acc, n);
  } else {
    using E = Element<T>;
    double exact = static_cast<double>(E::load(test_value<T>(spec.op, seed, 0, i)));
    double magnitude = std::fabs(exact);
    for (int r = 1; r < n; ++r) {
      const double x = static_cast<double>(E::load(test_value<T>(spec.op, seed, r, i)));
      exact = combine<double>(spec.op, exact, x);
      magnitude = spec.op == ReduceOp::prod ? std::fabs(exact) : magnitude + std::fabs(x);
    }
    e.exact = finalize<double>(spec.op, exact, n);
    if (spec.op == ReduceOp::avg) magnitude /= n;
    const bool exact_op = spec.op == ReduceOp::min || spec.op == ReduceOp::max || spec.op == ReduceOp::lor;
    e.tolerance = exact_op ? 0.0 : (n + 2) * unit_roundoff<T>() * magnitude + 1e-30;
  }
  return e;
}

template <typename T> bool matches(const Expected<T>& e, T got) {
  if constexpr (std::is_integral_v<T>) {
    return got == e.integer;
  } else {
    const double g = static_cast<double>(Element<T>::load(got));
    return !std::isnan(g) && std::fabs(g - e.exact) <= e.tolerance;
  }
}

template <typename T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

}  // namespace

CheckResult compare_with_definition(const CollectiveSpec& spec, const std::vector<RankMemory>& memory,
                                    std::uint64_t seed) {
  CheckResult result;
  const int n = spec.nranks;
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  dispatch(spec.type, [&](auto tag) {
    using T = decltype(tag);
    auto output = [&](int r) {
      return reinterpret_cast<const T*>(memory[static_cast<std::size_t>(r)].base(BufferId::output));
    };
    auto input = [&](int r, std::uint64_t i) { return test_value<T>(spec.op, seed, r, i); };
    auto expect_reduced = [&](const T* out, const Expected<T>& e) {
      ++result.checked;
      if (!matches(e, *out)) ++result.wrong;
    };
    auto expect_copy = [&](T got, T want) {
      ++result.checked;
      if (!same_bits(got, want)) ++result.wrong;
    };
    switch (spec.kind) {
      case CollectiveKind::all_reduce:
        for (std::uint64_t i = 0; i < spec.count; ++i) {
          const Expected<T> e = reduced<T>(spec, seed, i);
          for (int r = 0; r < n; ++r) expect_reduced(output(r) + i, e);
        }
        break;
      case CollectiveKind::reduce:
        for (std::uint64_t i = 0; i < spec.count; ++i) expect_reduced(output(spec.root) + i, reduced<T>(spec, seed, i));
        break;
      case CollectiveKind::reduce_scatter:
        for (int r = 0; r < n; ++r)
          for (std::uint64_t j = 0; j < block; ++j)
            expect_reduced(output(r) + j, reduced<T>(spec, seed, static_cast<std::uint64_t>(r) * block + j));
        break;
      case CollectiveKind::broadcast:
        for (int r = 0; r < n; ++r)
          for (std::uint64_t i = 0; i < spec.count; ++i) expect_copy(output(r)[i], input(spec.root, i));
        break;
      case CollectiveKind::all_gather:
        for (int r = 0; r < n; ++r)
          for (int s = 0; s < n; ++s)
            for (std::uint64_t j = 0; j < block; ++j)
              expect_copy(output(r)[static_cast<std::uint64_t>(s) * block + j], input(s, j));
        break;
      case CollectiveKind::gather:
        for (int s = 0; s < n; ++s)
          for (std::uint64_t j = 0; j < block; ++j)
            expect_copy(output(spec.root)[static_cast<std::uint64_t>(s) * block + j], input(s, j));
        break;
      case CollectiveKind::scatter:
        for (int r = 0; r < n; ++r)
          for (std::uint64_t j = 0; j < block; ++j)
            expect_copy(output(r)[j], input(spec.root, static_cast<std::uint64_t>(r) * block + j));
        break;
      case CollectiveKind::alltoall:
        for (int r = 0; r < n; ++r)
          for (int s = 0; s < n; ++s)
            for (std::uint64_t j = 0; j < block; ++j)
              expect_copy(output(r)[static_cast<std::uint64_t>(s) * block + j],
                          input(s, static_cast<std::uint64_t>(r) * block + j));
        break;
      case CollectiveKind::sendrecv:
        for (int r = 0; r < n; ++r)
          for (std::uint64_t i = 0; i < spec.count; ++i) expect_copy(output(r)[i], input((r + n - 1) % n, i));
        break;
    }
  });
  return result;
}

}  // namespace ccsim::kernels
