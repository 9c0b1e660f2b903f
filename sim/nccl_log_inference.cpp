#include "sim/nccl_log_inference.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <tuple>

#include "sim/datatype.hpp"
#include "sim/error.hpp"
#include "sim/nccl_log_words.hpp"
#include "sim/text.hpp"

namespace ccsim::log_inference {

namespace {

using namespace log_words;

// Rank counts [lo, hi] whose busbw factor fits every sample; lo == 0 when none does.
struct RankRange {
  int lo = 0, hi = 0;
};

constexpr int kMaxRanks = 1 << 17;

std::optional<RankRange> ranks_fitting_ratio(CollectiveKind kind, const std::vector<BandwidthSample>& samples) {
  // Broadcast, reduce and sendrecv have factor 1 whatever the rank count: nothing to learn.
  if (samples.empty() || bus_bandwidth_factor(kind, 2) == bus_bandwidth_factor(kind, 3)) return std::nullopt;
  double lowest = 0, highest = std::numeric_limits<double>::infinity();
  for (const auto& s : samples) {
    lowest = std::max(lowest, (s.busbw - s.busbw_tol) / (s.algbw + s.algbw_tol));
    highest = std::min(highest, (s.busbw + s.busbw_tol) / (s.algbw - s.algbw_tol));
  }
  RankRange range;
  // The factors grow with the rank count, so the fitting counts are one run.
  for (int n = 1; n <= kMaxRanks; ++n) {
    const double f = bus_bandwidth_factor(kind, n);
    if (f > highest) break;
    if (f < lowest) continue;
    if (range.lo == 0) range.lo = n;
    range.hi = n;
  }
  return range;
}
// The decisions, over the log and what the parser gathered beside it.
class Inference {
 public:
  Inference(NcclLog& log, Evidence& e)
      : log_(log),
        row_units_(e.row_units),
        samples_(e.samples),
        threads_(e.threads),
        command_collective_(e.command_collective),
        banner_collective_(e.banner_collective),
        device_ranks_(e.device_ranks),
        host_ranks_(e.host_ranks) {}

  void run() {
    decide_time_unit();
    note_failed_checks();
    note_repeated_sizes();
    decide_collective();
    decide_ranks();
    note_count_clash();
    if (const auto layout = layout_from_file_name(log_.origin)) {
      log_.file_nodes = layout->first;
      log_.file_ranks = layout->second;
      if (log_.ranks && *log_.ranks != layout->second)
        log_.notes.push_back("the file name says " + file_layout_word(log_) + " but the log has " +
                             std::to_string(*log_.ranks) + " ranks (by its " + log_.ranks_source + ")");
    } else if (const auto named = ranks_in_file_name(log_.origin); named && log_.ranks && *log_.ranks != *named &&
                                                                    log_.ranks_source != "file name") {
      log_.notes.push_back("the file name says " + std::to_string(*named) + "g but the log has " +
                           std::to_string(*log_.ranks) + " ranks (by its " + log_.ranks_source + ")");
    }
    merge_host_spellings();
    decide_ranks_per_host();
  }

 private:
  // A time column in milliseconds (nccl-tests' first layout) is read as such. Only rows whose
  // header leaves the unit open count: the first layout's (milliseconds unless its rows say
  // otherwise) and rows under no header; a "(us)" header is taken at its word, and a "cputime" one
  // times the host, not what algbw was computed from. Of those rows, algbw is the size over the time
  // (at least (n-1)/n of it for the first layout's all_gather and reduce_scatter), which tells the
  // unit apart (a factor of 1000) wherever algbw is printed with enough digits; the header decides
  // a tie or where no algbw tells.
  void decide_time_unit() {
    const auto unit_open = [&](std::size_t k) {
      return row_units_[k] == TimeUnits::milliseconds || row_units_[k] == TimeUnits::unstated;
    };
    int micro = 0, milli = 0, first_layout = 0, open = 0;
    for (std::size_t k = 0; k < log_.rows.size(); ++k) {
      if (!unit_open(k)) continue;
      ++open;
      first_layout += row_units_[k] == TimeUnits::milliseconds;
      const MeasuredRow& row = log_.rows[k];
      for (const auto& p : {row.out_of_place, row.in_place}) {
        if (!p || !p->has_time || p->time_us <= 0 || p->algbw_gbps < 0.1 || row.size == 0) continue;
        const double ratio = p->algbw_gbps * p->time_us * 1e3 / static_cast<double>(row.size);
        if (ratio > 0.5 && ratio < 2) ++micro;
        if (ratio > 0.5e-3 && ratio < 2e-3) ++milli;
      }
    }
    const bool header_says = first_layout > 0 && first_layout * 2 >= open;
    const bool ms = milli > micro || (milli == micro && header_says);
    if (!ms) {
      if (header_says)
        log_.notes.push_back("its column header is nccl-tests' first layout, which printed milliseconds, but its "
                             "algbw (size / time) says microseconds: read as microseconds");
      return;
    }
    for (std::size_t k = 0; k < log_.rows.size(); ++k) {
      if (!unit_open(k)) continue;
      MeasuredRow& row = log_.rows[k];
      for (auto* p : {&row.out_of_place, &row.in_place})
        if (*p) (*p)->time_us *= 1e3;
    }
    log_.notes.push_back(std::string("its times are in milliseconds (") +
                         (milli > micro ? "algbw = size / time says so" : "as nccl-tests' first layout, \"bytes N type op\", printed them") +
                         "): read as such");
  }

  // nccl-tests' own data check failing (a row's #wrong, the old layout's error, the footer's
  // out-of-bounds count): the run computed wrong results, so its times may not be a healthy run's.
  void note_failed_checks() {
    int wrong_rows = 0;
    for (const auto& row : log_.rows)
      for (const auto& p : {row.out_of_place, row.in_place})
        if (p && ((p->wrong && *p->wrong > 0) || (p->max_error && *p->max_error > kFailedMaxError))) {
          ++wrong_rows;
          break;
        }
    if (wrong_rows > 0)
      log_.notes.push_back(std::to_string(wrong_rows) + " of its rows report wrong results (nccl-tests' data " +
                           "check failed): their times may not be a healthy run's");
    else if (log_.out_of_bounds && *log_.out_of_bounds > 0)
      log_.notes.push_back("its footer counts " + std::to_string(*log_.out_of_bounds) +
                           " out-of-bounds values (nccl-tests' data check failed): its times may not be a healthy run's");
  }
  // Rows of a size (and type and op) the run already has: nccl-tests -N cycles, or a second table
  // pasted into one run. Each is compared; said, since the medians then count those sizes twice.
  // Below 1 MiB sizes repeat in any sweep: nccl-tests rounds a size down to whole elements per rank.
  void note_repeated_sizes() {
    std::set<std::tuple<Bytes, std::string, std::string>> seen;
    int repeats = 0;
    for (const auto& row : log_.rows)
      if (row.size >= (Bytes{1} << 20)) repeats += !seen.emplace(row.size, row.type, row.redop).second;
    if (repeats > 0)
      log_.notes.push_back(std::to_string(repeats) + " of its rows repeat a size an earlier row has (nccl-tests -N, or " +
                           "two tables in one run): each is compared");
  }
  // The old layout's error column is the largest difference from the expected result: float
  // rounding leaves it near 1e-7 (1e-3 for half types); a tenth is a wrong result.
  static constexpr double kFailedMaxError = 0.1;

  void decide_collective() {
    const std::pair<std::optional<CollectiveKind>, const char*> sources[] = {
        {command_collective_, "command"},
        {banner_collective_, "test banner"},
        {collective_from_file_name(log_.origin), "file name"}};
    for (const auto& [kind, source] : sources) {
      if (!kind) continue;
      if (!log_.collective) {
        log_.collective = kind;
        log_.collective_source = source;
      } else if (*kind != *log_.collective) {
        log_.notes.push_back("the " + log_.collective_source + " says " + std::string(to_string(*log_.collective)) +
                             " but the " + source + " says " + std::string(to_string(*kind)));
      }
    }
    // A summary table (Azure's guide) may name its collective only in the prose above it ("the NCCL
    // AllReduce (NVLS algorithm) tests"): taken where the prose names exactly one.
    if (log_.collective || !log_.summary_table) return;
    static const std::pair<const char*, CollectiveKind> kWords[] = {
        {"allreduce", CollectiveKind::all_reduce},         {"allgather", CollectiveKind::all_gather},
        {"reducescatter", CollectiveKind::reduce_scatter}, {"alltoall", CollectiveKind::alltoall},
        {"broadcast", CollectiveKind::broadcast}};
    std::set<CollectiveKind> named;
    for (const auto& p : log_.problems) {
      std::string squeezed;
      for (const char c : ascii_lower(p.text))
        if (c != ' ' && c != '_' && c != '-') squeezed += c;
      for (const auto& [word, kind] : kWords)
        if (squeezed.find(word) != std::string::npos) named.insert(kind);
    }
    if (named.size() == 1) {
      log_.collective = *named.begin();
      log_.collective_source = "summary's text";
    }
  }

  void decide_ranks() {
    const auto ratio = log_.collective ? ranks_fitting_ratio(*log_.collective, samples_) : std::nullopt;
    const bool ratio_decides = ratio && ratio->lo != 0 && ratio->lo == ratio->hi;
    auto use = [&](int n, const char* source) {
      log_.ranks = n;
      log_.ranks_source = source;
    };
    // A count busbw/algbw allows (any, where no point tells).
    const auto allowed = [&](int n) { return !ratio || (ratio->lo != 0 && ratio->lo <= n && n <= ratio->hi); };
    if (device_ranks_.empty()) {
      if (ratio_decides) return use(ratio->lo, "busbw/algbw ratio");
      // busbw printed to two decimals tells little of small bandwidths (a slow machine's log):
      // a count the ratio allows, named by the file name's <ranks>g, or by the header's threads x
      // GPUs where one process drives several GPUs (no device lines: no other process is seen).
      if (const auto counted = ranks_from_counts(); counted && allowed(*counted)) return use(*counted, "count column");
      if (const auto named = ranks_in_file_name(log_.origin); named && allowed(*named)) return use(*named, "file name");
      if (log_.gpus_per_thread && threads_) {
        const int one_process = *threads_ * *log_.gpus_per_thread;
        if (one_process > 1 && allowed(one_process)) return use(one_process, "header's nThread x nGpus, one process");
      }
      return;
    }
    const int listed = *device_ranks_.rbegin() + 1;
    const bool fits = allowed(listed);
    if (static_cast<int>(device_ranks_.size()) == listed) {
      use(listed, "device lines");
      if (!fits) note_rank_clash("list " + std::to_string(listed) + " ranks", *ratio);
      return;
    }
    // Docs often show only some device lines; the highest rank shown is then a lower bound.
    if (ratio_decides && ratio->lo > listed) return use(ratio->lo, "busbw/algbw ratio");
    if (const auto counted = ranks_from_counts(); counted && *counted > listed && allowed(*counted))
      return use(*counted, "count column");
    if (fits) return use(listed, "highest device rank");
    note_rank_clash("show rank " + std::to_string(listed - 1), *ratio);
  }

  // size / (count x element size), the same on every row that tells (not summary tables, not types
  // ccsim does not know); empty where rows disagree or none tells. nccl-tests prints all_gather's,
  // reduce_scatter's and alltoall's count per rank (per rank and peer for alltoall) beside the total
  // size, in both layouts (gather and scatter too), so for them this is the rank count, exactly
  // (sizes are rounded to whole elements per rank); the other collectives print the whole buffer's
  // count: 1.
  std::optional<int> size_per_count() const {
    std::optional<int> found;
    for (const auto& row : log_.rows) {
      if (row.count == 0 || row.size == 0 || row.size_approximate || row.type.empty()) continue;
      std::size_t bytes = 0;
      try {
        bytes = element_bytes(parse_data_type(row.type));
      } catch (const Error&) {
        continue;  // a type ccsim does not know (fp8): its size says nothing here
      }
      const std::uint64_t per_count = row.count * bytes;
      if (row.size % per_count != 0 || row.size / per_count > static_cast<std::uint64_t>(kMaxRanks)) return std::nullopt;
      const int n = static_cast<int>(row.size / per_count);
      if (found && *found != n) return std::nullopt;
      found = n;
    }
    return found;
  }

  // The block collectives (all_gather, reduce_scatter, alltoall, gather, scatter), whose count
  // column nccl-tests prints per block (ccsim's count_is_per_rank is the buffer-per-rank side).
  static bool count_column_is_a_block(CollectiveKind kind) { return !count_is_per_rank(kind); }

  std::optional<int> ranks_from_counts() const {
    if (!log_.collective || !count_column_is_a_block(*log_.collective)) return std::nullopt;
    return size_per_count();
  }

  // A count column of the other kind than the collective's (a whole buffer's count under an
  // all_gather name, a rank's share under an all_reduce one) says the run was another collective
  // than the one simulated: a file named after the wrong test, or a table pasted under another's.
  void note_count_clash() {
    const auto k = size_per_count();
    if (!log_.collective || !k || (log_.ranks && *log_.ranks < 2)) return;  // one rank: both kinds alike
    const bool per_rank = count_column_is_a_block(*log_.collective);
    if (per_rank && *k == 1)
      log_.notes.push_back("its count column is each row's whole buffer, as all_reduce, broadcast, reduce and sendrecv "
                           "print it, where " + std::string(to_string(*log_.collective)) + " prints a rank's block (by its " +
                           log_.collective_source + "): is it another collective's run?");
    else if (!per_rank && *k > 1)
      log_.notes.push_back("its count column is 1/" + std::to_string(*k) + " of each row's size, a rank's block as all_gather, "
                           "reduce_scatter, alltoall, gather and scatter print it, where " + std::string(to_string(*log_.collective)) +
                           " prints the whole buffer (by its " + log_.collective_source + "): is it another collective's run?");
  }

  // One host written two ways, short and fully qualified ("node01", "node01.cluster.local", as two
  // launchers of one job may print it), is one host. An IP address is not shortened.
  void merge_host_spellings() {
    std::vector<std::string> kept;
    for (const auto& h : log_.hosts) {
      const auto dot = h.find('.');
      const std::string short_name = h.substr(0, dot);
      const bool qualified = dot != std::string::npos && dot > 0 && !all_digits(short_name);
      if (qualified && h != short_name && host_ranks_.count(short_name)) {
        host_ranks_[short_name].insert(host_ranks_[h].begin(), host_ranks_[h].end());
        host_ranks_.erase(h);
        continue;
      }
      kept.push_back(h);
    }
    log_.hosts = kept;
  }

  void decide_ranks_per_host() {
    if (host_ranks_.empty() || !log_.ranks) return;
    const std::size_t k = host_ranks_.begin()->second.size();
    std::size_t listed = 0;
    for (const auto& [host, ranks] : host_ranks_) {
      if (ranks.size() != k) return;
      listed += ranks.size();
    }
    if (static_cast<int>(listed) == *log_.ranks) log_.ranks_per_host = static_cast<int>(k);
  }

  void note_rank_clash(const std::string& devices_say, RankRange ratio) {
    std::string note = "device lines " + devices_say + " but busbw/algbw fits " + describe(ratio);
    // The collective may be what is wrong (a run pasted under another's file name): say which
    // collectives' busbw factor fits the listed ranks.
    const int listed = *device_ranks_.rbegin() + 1;
    const std::pair<CollectiveKind, const char*> families[] = {
        {CollectiveKind::all_reduce, "all_reduce"},
        {CollectiveKind::all_gather, "all_gather, reduce_scatter or alltoall"},
        {CollectiveKind::broadcast, "broadcast, reduce or sendrecv"}};
    // busbw equal to algbw (factor 1) fits the third family at any rank count.
    const bool factor_one = !samples_.empty() && std::all_of(samples_.begin(), samples_.end(), [](const BandwidthSample& x) {
      return x.busbw - x.busbw_tol <= x.algbw + x.algbw_tol && x.algbw - x.algbw_tol <= x.busbw + x.busbw_tol;
    });
    for (const auto& [kind, names] : families) {
      if (kind == *log_.collective) continue;
      const auto fit = ranks_fitting_ratio(kind, samples_);
      const bool fits = kind == CollectiveKind::broadcast ? factor_one : fit && fit->lo != 0 && fit->lo <= listed && listed <= fit->hi;
      if (fits) note += ": at " + std::to_string(listed) + " ranks it fits " + names + " (--collective names it)";
    }
    log_.notes.push_back(note);
  }

  static std::string describe(RankRange range) {
    if (range.lo == 0) return "no rank count";
    if (range.lo == range.hi) return "only " + std::to_string(range.lo) + " ranks";
    return std::to_string(range.lo) + " to " + std::to_string(range.hi) + " ranks";
  }

  NcclLog& log_;
  std::vector<TimeUnits>& row_units_;
  std::vector<BandwidthSample>& samples_;
  std::optional<int>& threads_;
  std::optional<CollectiveKind>& command_collective_;
  std::optional<CollectiveKind>& banner_collective_;
  std::set<int>& device_ranks_;
  std::map<std::string, std::set<int>>& host_ranks_;
};

}  // namespace

void decide(NcclLog& log, Evidence& evidence) { Inference(log, evidence).run(); }

}  // namespace ccsim::log_inference
