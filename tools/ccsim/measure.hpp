#pragma once
// One point of a sweep: compile the schedule, prove it on the CPU executor (when it fits the
// memory limit), simulate it, and turn the time into nccl-tests figures.
#include <optional>
#include <string>

#include "sim/algorithms/registry.hpp"
#include "sim/engine.hpp"
#include "sim/report.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim::cli {

struct PointOptions {
  std::string algorithm = "ring";
  algo::AlgorithmOptions algorithm_options;
  bool check = true;
  Bytes check_limit_bytes = Bytes{1} << 30;  // host memory the data check may use
};

struct Point {
  PerfRow row;
  SimulationResult simulation;
  double compile_s = 0;
};

Point measure(const CollectiveSpec& spec, const topo::Topology& topology, const Model& model,
              const PointOptions& options, const EngineOptions& engine = {});

}  // namespace ccsim::cli
