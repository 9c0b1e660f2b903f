#pragma once
// The message sizes of an nccl-tests sweep: -b to -e, times -f when it is above 1, else plus -i.
#include <string>
#include <vector>

#include "sim/units.hpp"

namespace ccsim::cli {

struct SizeSweep {
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  std::string step_bytes = "1M";
  double step_factor = 1;
};

// The most rows one sweep makes.
constexpr std::size_t kMaxSizes = 100000;

// Error on unparsable or zero sizes, -b above -e, a factor that cannot grow the size, or more than kMaxSizes
// sizes. Sizes a fractional factor rounds to the same byte count appear once.
std::vector<Bytes> expand(const SizeSweep& sweep);

}  // namespace ccsim::cli
