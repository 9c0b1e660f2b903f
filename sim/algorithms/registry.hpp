#pragma once
// Every collective algorithm by name: which collectives it serves and how it compiles a call into
// a schedule. Algorithms see core types only (never the engine or SimGrid).
#include <functional>
#include <string>
#include <vector>

#include "sim/collective.hpp"
#include "sim/schedule.hpp"
#include "sim/units.hpp"

namespace ccsim::algo {

struct AlgorithmOptions {
  Protocol protocol = Protocol::simple;
  int channels = 1;
  Bytes chunk_bytes = 0;  // data per pipelined step of one channel
  // Ring order per channel (rank at each ring position); empty means 0, 1, ..., N-1 everywhere.
  std::vector<std::vector<int>> rings;
};

struct Algorithm {
  std::string name;
  std::string description;
  std::vector<CollectiveKind> collectives;
  std::function<Schedule(const CollectiveSpec&, const AlgorithmOptions&)> generate;

  bool supports(CollectiveKind kind) const;
};

const std::vector<Algorithm>& algorithms();
// Error naming the known algorithms when `name` is unknown.
const Algorithm& find_algorithm(const std::string& name);
// Validates the spec and options, refuses (Error with the reason) a collective the algorithm does
// not serve, generates, and validates the resulting schedule.
Schedule compile(const std::string& algorithm, const CollectiveSpec& spec, const AlgorithmOptions& options);

}  // namespace ccsim::algo
