#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "kernels/numeric.hpp"
#include "sim/collective.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"

using namespace ccsim;

TEST_CASE("sizes parse with nccl-tests suffixes and reject bad input") {
  CHECK(parse_bytes("8") == 8);
  CHECK(parse_bytes("64K") == 65536);
  CHECK(parse_bytes("1M") == 1048576);
  CHECK(parse_bytes("8G") == 8ULL << 30);
  CHECK(parse_bytes("2t") == 2ULL << 40);
  CHECK(parse_bytes("3MiB") == 3ULL << 20);
  CHECK_THROWS_AS(parse_bytes(""), Error);
  CHECK_THROWS_AS(parse_bytes("0"), Error);
  CHECK_THROWS_AS(parse_bytes("-8"), Error);
  CHECK_THROWS_AS(parse_bytes("1.5M"), Error);
  CHECK_THROWS_AS(parse_bytes("8X"), Error);
  CHECK_THROWS_AS(parse_bytes("99999999999999999999"), Error);
  CHECK_THROWS_AS(parse_bytes("20000000000T"), Error);
  CHECK(format_bytes(8ULL << 30) == "8G");
  CHECK(format_bytes(1000) == "1000");
}

TEST_CASE("format_number quotes a number as it reads back") {
  CHECK(format_number(0.5) == "0.5");
  CHECK(format_number(2) == "2");
  CHECK(format_number(1e-7) == "1e-07");
  CHECK(format_number(-1.25) == "-1.25");
}

TEST_CASE("names of types, ops and collectives round-trip") {
  for (auto t : all_data_types()) CHECK(parse_data_type(to_string(t)) == t);
  CHECK(parse_data_type("bf16") == DataType::bf16);
  CHECK(parse_data_type("fp16") == DataType::fp16);
  for (auto op : all_reduce_ops()) CHECK(parse_reduce_op(to_string(op)) == op);
  for (auto k : all_collectives()) CHECK(parse_collective(to_string(k)) == k);
  CHECK(parse_collective("allreduce") == CollectiveKind::all_reduce);
  CHECK(parse_collective("all_reduce_perf") == CollectiveKind::all_reduce);
  CHECK_THROWS_AS(parse_collective("allreduc"), Error);
}

TEST_CASE("bus bandwidth factors are nccl-tests'") {
  CHECK(bus_bandwidth_factor(CollectiveKind::all_reduce, 8) == test::approx(1.75));
  CHECK(bus_bandwidth_factor(CollectiveKind::all_gather, 8) == test::approx(0.875));
  CHECK(bus_bandwidth_factor(CollectiveKind::broadcast, 8) == 1.0);
}

TEST_CASE("fp16 and bf16 conversions round to nearest even and handle the edges") {
  using namespace ccsim::kernels;
  CHECK(half_to_float(float_to_half(1.0f)) == 1.0f);
  CHECK(half_to_float(float_to_half(-2.5f)) == -2.5f);
  CHECK(half_to_float(float_to_half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(half_to_float(float_to_half(70000.0f))));
  CHECK(half_to_float(float_to_half(5.9604644775390625e-08f)) == 5.9604644775390625e-08f);  // smallest subnormal
  CHECK(half_to_float(float_to_half(1.0f + 0x1.0p-11f)) == 1.0f);  // tie rounds to even
  CHECK(half_to_float(float_to_half(1.0f + 3 * 0x1.0p-11f)) == 1.0f + 0x1.0p-9f);
  CHECK(std::isnan(half_to_float(float_to_half(std::nanf("")))));
  CHECK(bf16_to_float(float_to_bf16(1.0f)) == 1.0f);
  CHECK(bf16_to_float(float_to_bf16(1.0f + 0x1.0p-8f)) == 1.0f);  // tie to even
  CHECK(bf16_to_float(float_to_bf16(3.0f)) == 3.0f);
  // Every half value survives a round trip through float.
  for (unsigned h = 0; h < 0x7c00; ++h) REQUIRE(float_to_half(half_to_float(static_cast<std::uint16_t>(h))) == h);
}
