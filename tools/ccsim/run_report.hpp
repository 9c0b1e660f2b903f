#pragma once
// Results of `ccsim run`: one record per (variant, collective, algorithm column, size), the
// comparison tables printed per variant, and results.json / results.csv.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/collective.hpp"
#include "sim/units.hpp"

namespace ccsim::cli {

struct RunPoint {
  CollectiveKind collective = CollectiveKind::all_reduce;
  std::string column;     // what the sweep asked for: "ring", "auto", or "ring/ll" when it lists several protocols
  std::string algorithm;  // what ran (auto: NCCL's pick)
  std::string protocol;   // what ran
  int channels = 0;
  Bytes size = 0;
  bool ran = false;    // false: the machine cannot run it (n/a)
  std::string reason;  // n/a: why
  double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  double bound_busbw_gbps = 0;  // sim/bounds.hpp: the busbw the bandwidth lower bound allows
  double efficiency = 0;        // busbw / bound busbw
  std::string limiter;          // injection | bisection
};

struct VariantResult {
  std::string name, description;
  std::string topology, model;
  int nodes = 0, ranks = 0;
  std::vector<std::string> columns;  // in sweep order
  std::vector<RunPoint> points;
  double wall_s = 0;
};

struct RunResult {
  std::string scenario, description, origin;
  std::vector<VariantResult> variants;  // the first is the base
};

struct Crossover {
  Bytes size = 0;  // the first size the new winner wins
  std::string from, to;
};

// The fastest column at one size; explicit algorithms only when there are any besides auto.
const RunPoint* winner(const VariantResult& v, CollectiveKind collective, Bytes size);
std::vector<Crossover> crossovers(const VariantResult& v, CollectiveKind collective);
std::vector<Bytes> sizes_of(const VariantResult& v, CollectiveKind collective);
std::vector<CollectiveKind> collectives_of(const VariantResult& v);

// Per collective: rows = sizes, time and busbw per column, winner, change of the winner's time vs
// the base variant, bound busbw and the winner's efficiency; then the crossovers and n/a reasons.
void print_variant(std::ostream& out, const RunResult& result, std::size_t variant);

void write_results_json(const std::string& path, const RunResult& result);
// variant,collective,algorithm,protocol,channels,size_bytes,time_us,algbw_gbps,busbw_gbps,
// bound_busbw_gbps,efficiency,nodes,ranks,selected (the algorithm that ran); n/a points left out.
void write_results_csv(const std::string& path, const RunResult& result);

}  // namespace ccsim::cli
