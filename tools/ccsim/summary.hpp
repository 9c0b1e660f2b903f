#pragma once
// The error summaries the commands print: a median and a percentage, one way everywhere.
#include <algorithm>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

namespace ccsim::cli {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// 0.123 -> "12.3%"
inline std::string percent(double fraction) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << 100 * fraction << "%";
  return s.str();
}

}  // namespace ccsim::cli
