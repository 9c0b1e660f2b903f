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

// Error on unparsable or zero sizes, -b above -e, or a factor that cannot grow the size.
std::vector<Bytes> expand(const SizeSweep& sweep);

}  // namespace ccsim::cli
