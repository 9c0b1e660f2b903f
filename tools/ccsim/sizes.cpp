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
  // Counted before anything is held: a factor of 1.0000001 or a step of one byte across gigabytes would
  // otherwise fill the memory with sizes before the first row is simulated.
  const Bytes step = sweep.step_factor > 1 ? 0 : parse_bytes(sweep.step_bytes);
  const double rows = sweep.step_factor > 1
                          ? std::floor(std::log(static_cast<double>(hi) / static_cast<double>(lo)) / std::log(sweep.step_factor)) + 1
                          : std::floor(static_cast<double>(hi - lo) / static_cast<double>(step)) + 1;
  if (rows > static_cast<double>(kMaxSizes))
    throw Error("-b " + sweep.min_bytes + " -e " + sweep.max_bytes +
                (sweep.step_factor > 1 ? " -f " + format_number(sweep.step_factor) : " -i " + sweep.step_bytes) + " makes " +
                format_number(rows) + " sizes; at most " + std::to_string(kMaxSizes) + " (a larger -f or -i)");
  std::vector<Bytes> sizes;
  if (sweep.step_factor > 1) {
    // A fractional factor rounds small sizes to the same byte count (1, 1.5 -> 2, 2.25 -> 2): one row each.
    for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) * (1 + 1e-12); s *= sweep.step_factor) {
      const auto size = static_cast<Bytes>(std::llround(s));
      if (sizes.empty() || sizes.back() != size) sizes.push_back(size);
    }
  } else {
    for (Bytes s = lo; s <= hi; s += step) {
      sizes.push_back(s);
      if (hi - s < step) break;
    }
  }
  return sizes;
}

}  // namespace ccsim::cli
