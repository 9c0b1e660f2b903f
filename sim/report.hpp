#pragma once
// Result records of `ccsim perf` and their printers: the nccl-tests table (same columns and units,
// so existing parsers read it), JSON and CSV.
#include <cstddef>
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

// The nccl-tests table written a row at a time, as nccl-tests prints it: a long sweep shows each
// size as it ends, and a run stopped early keeps the sizes it ran. The heading takes the report's
// collective, ranks, topology, model and settings (not its rows); `out_of_place` / `in_place` say
// whether those columns are simulated (ccsim perf --column), which the heading notes.
class TableWriter {
 public:
  TableWriter(std::ostream& out, const PerfReport& heading, bool out_of_place, bool in_place);
  void row(const PerfRow& row);
  void finish();  // the totals nccl-tests ends with

 private:
  std::ostream& out_;
  double bus_sum_ = 0;
  std::size_t bus_count_ = 0;  // the columns simulated
  std::size_t rows_ = 0;
  std::size_t host_bound_ = 0;
  std::uint64_t wrong_total_ = 0;
  bool any_checked_ = false;
};

void print_table(std::ostream& out, const PerfReport& report);
void print_csv_header(std::ostream& out);
void print_csv_row(std::ostream& out, const PerfReport& heading, const PerfRow& row);
nlohmann::json to_json(const PerfReport& report);

}  // namespace ccsim
