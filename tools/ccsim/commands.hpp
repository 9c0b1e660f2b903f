#pragma once
// The ccsim subcommands. Each registers its options on the app and returns the function to run.
#include <functional>

#include <CLI/CLI.hpp>

namespace ccsim::cli {

using Runner = std::function<int()>;

Runner add_perf(CLI::App& app);
Runner add_run(CLI::App& app);  // what-if scenarios
Runner add_bench(CLI::App& app);
Runner add_verify(CLI::App& app);
Runner add_listings(CLI::App& app);
Runner add_accuracy(CLI::App& app);
Runner add_gpu(CLI::App& app);       // gpu info | bench | run (CUDA backend)
Runner add_validate(CLI::App& app);  // GPU-measured vs simulated
Runner add_calibrate(CLI::App& app);  // topo list, algos, model

}  // namespace ccsim::cli
