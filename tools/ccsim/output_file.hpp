#pragma once
// Output files are checked when the command line is read: a path that cannot be written fails then,
// not after minutes of simulation.
#include <CLI/CLI.hpp>

namespace ccsim::cli {

// A CLI11 check that the file can be opened for writing. An existing file keeps its contents; one the
// check had to create is removed again.
CLI::Validator writable_file();

}  // namespace ccsim::cli
