#pragma once
// CLI11 checks shared by the subcommands, run when the command line is read: a bad value fails
// then, not after minutes of simulation.
#include <CLI/CLI.hpp>

namespace ccsim::cli {

// The file can be opened for writing. An existing file keeps its contents; one the check had to
// create is removed again.
CLI::Validator writable_file();

// A finite number (CLI11's Range lets nan through) of at least `low`, or above it where `strict`.
CLI::Validator finite_number(double low, bool strict = false);

}  // namespace ccsim::cli
