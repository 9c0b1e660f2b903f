#pragma once
// `ccsim run --plot`: hands results.csv to tools/plot.py (python3 + matplotlib).
#include <string>

namespace ccsim::cli {

// Runs the plot script on DIR/results.csv, writing its PNG and SVG files into DIR. When python3,
// matplotlib or the script is missing, says so in one line on stderr and returns false: plots are
// a convenience, never a reason to fail a run.
bool plot_results(const std::string& directory);

}  // namespace ccsim::cli
