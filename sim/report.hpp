#pragma once
// Result records of `ccsim perf` and their printers: the nccl-tests table (same columns and units,
// so existing parsers read it), JSON and CSV.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/collective.hpp"
#include "sim/protocol.hpp"

namespace ccsim {

struct PerfResult {
  double time_us = 0;
  double algbw_gbps = 0;  // GB/s = 1e9 B/s
  double busbw_gbps = 0;
  std::optional<std::uint64_t> wrong;  // empty: not checked (N/A)
  bool simulated = true;  // false: this column was not simulated (ccsim perf --column): all N/A
};

struct PerfRow {
  CollectiveSpec spec;
  std::string algorithm;
  Protocol protocol = Protocol::simple;
  int channels = 1;
  std::uint64_t messages = 0;
  bool host_bound = false;  // the host's issue time (nccl-tests -g), not the GPUs', sets the time
  PerfResult out_of_place;
  PerfResult in_place;
};

struct PerfReport {
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::string topology;
  std::string model;
  std::string nccl_env;  // the NCCL channel settings the run is made under ("NCCL_MAX_NCHANNELS=8"), if any
  int nranks = 0;
  std::vector<PerfRow> rows;
};

// nccl-tests' figures for one simulated time: algbw = size / time, busbw = algbw x factor.
PerfResult perf_result(const CollectiveSpec& spec, double seconds, std::optional<std::uint64_t> wrong);

// A time in µs as nccl-tests prints it: fewer decimals as it grows, right-aligned in `width`.
std::string format_time_us(double us, int width = 0);

void print_table(std::ostream& out, const PerfReport& report);
void print_csv(std::ostream& out, const PerfReport& report);
nlohmann::json to_json(const PerfReport& report);

}  // namespace ccsim
