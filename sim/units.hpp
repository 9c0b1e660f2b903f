#pragma once
// Byte counts and their human forms. Sizes follow nccl-tests: "8G" is 8 GiB (1024-based), while
// bandwidths print in GB/s = 1e9 B/s.
#include <cstdint>
#include <string>
#include <string_view>

namespace ccsim {

using Bytes = std::uint64_t;

// Parses "8", "64K", "1M", "8G", "2T" (also "KB"/"KiB" forms). Throws Error on anything else,
// including zero, negative or fractional values.
Bytes parse_bytes(std::string_view text);

// "1K", "512M", "8G" when exact, otherwise the plain number.
std::string format_bytes(Bytes bytes);

// The shortest decimal that reads back as `value` ("0.5", "1e-07", "inf"), for messages that quote
// what a user gave (std::to_string would print "0.500000").
std::string format_number(double value);

}  // namespace ccsim
