#include "ccsim/sizes.hpp"

#include <cmath>

#include "sim/error.hpp"

namespace ccsim::cli {

std::vector<Bytes> expand(const SizeSweep& sweep) {
  const Bytes lo = parse_bytes(sweep.min_bytes);
  const Bytes hi = parse_bytes(sweep.max_bytes);
  if (lo > hi)
    throw Error("-b " + sweep.min_bytes + " is larger than -e " + sweep.max_bytes + " (minimum must not exceed maximum)");
  if (!(sweep.step_factor >= 1) || !std::isfinite(sweep.step_factor))
    throw Error("-f " + format_number(sweep.step_factor) + ": the step factor between sizes must be at least 1");
  std::vector<Bytes> sizes;
  if (sweep.step_factor > 1) {
    for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) * (1 + 1e-12); s *= sweep.step_factor)
      sizes.push_back(static_cast<Bytes>(std::llround(s)));
  } else {
    const Bytes step = parse_bytes(sweep.step_bytes);
    for (Bytes s = lo; s <= hi; s += step) {
      sizes.push_back(s);
      if (hi - s < step) break;
    }
  }
  return sizes;
}

}  // namespace ccsim::cli
