#pragma once
// What `ccsim gpu bench` measured, as JSON, and the timing-model file it yields: the device's
// family (hopper, ...) as the base, with the parameters the bench measures replaced and sourced.
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/gpu.hpp"

namespace ccsim::kernels::gpu {

nlohmann::json to_json(const BenchResult& bench);
// `origin` names the file in errors (JSON path and what was expected).
BenchResult bench_from_json(const nlohmann::json& j, const std::string& origin);

// The model file: {"base", "name", "description", "parameters": {...}, "bench": to_json(bench)}.
// Parameters the bench does not measure keep the base's values; "not_measured" lists them.
nlohmann::json model_from_bench(const BenchResult& bench);

// Reads a model file written by model_from_bench (or a bare bench JSON) back into its measurements.
BenchResult read_bench_file(const std::string& path);

}  // namespace ccsim::kernels::gpu
