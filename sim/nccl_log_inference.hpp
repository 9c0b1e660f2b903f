#pragma once
// What the lines of an nccl-tests log say together, decided once all are read (nccl_log.cpp reads
// them one by one): the unit of the time column, the collective, the rank count and the ranks per
// host, and the notes where the log disagrees with itself.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/collective.hpp"
#include "sim/nccl_log.hpp"

namespace ccsim::log_inference {

// What the header a row was read under says of its time column.
enum class TimeUnits { unstated, microseconds, milliseconds, not_gpu };  // not_gpu: cputime, summary tables

// One placement's algbw and busbw as printed, each with half a unit of its last printed digit.
struct BandwidthSample {
  double algbw, algbw_tol, busbw, busbw_tol;
};

// What the parser gathers, beside the log itself, for these decisions.
struct Evidence {
  std::vector<TimeUnits> row_units;  // row by row of NcclLog::rows
  std::vector<BandwidthSample> samples;
  std::optional<int> threads;  // the header's nThread
  std::optional<CollectiveKind> command_collective, banner_collective;
  std::set<int> device_ranks;                        // ranks the device lines list
  std::map<std::string, std::set<int>> host_ranks;  // and on which host
};

// Decides, in this order, the rows' time unit, the collective, the rank count and the ranks per
// host (one host's short and qualified spellings merged), and notes failed data checks, repeated
// sizes, a count column of the other kind than the collective's, and a file name that disagrees.
void decide(NcclLog& log, Evidence& evidence);

}  // namespace ccsim::log_inference
