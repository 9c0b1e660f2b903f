#include "sim/report.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

namespace ccsim {

PerfResult perf_result(const CollectiveSpec& spec, double seconds, std::optional<std::uint64_t> wrong) {
  PerfResult r;
  r.time_us = seconds * 1e6;
  r.algbw_gbps = seconds > 0 ? static_cast<double>(spec.size_bytes()) / seconds / 1e9 : 0;
  r.busbw_gbps = r.algbw_gbps * bus_bandwidth_factor(spec.kind, spec.nranks);
  r.wrong = wrong;
  return r;
}

namespace {

std::string redop_name(const CollectiveSpec& spec) {
  return is_reduction(spec.kind) ? std::string(to_string(spec.op)) : "none";
}

int root_column(const CollectiveSpec& spec) { return is_rooted(spec.kind) ? spec.root : -1; }

std::string time_text(double us) { return format_time_us(us, 7); }

std::string result_text(const PerfResult& r) {
  char buf[96];
  if (!r.simulated) {
    std::snprintf(buf, sizeof buf, "  %7s  %6s  %6s  %5s", "N/A", "N/A", "N/A", "N/A");
    return buf;
  }
  const std::string wrong = r.wrong ? std::to_string(*r.wrong) : "N/A";
  std::snprintf(buf, sizeof buf, "  %s  %6.2f  %6.2f  %5s", time_text(r.time_us).c_str(), r.algbw_gbps,
                r.busbw_gbps, wrong.c_str());
  return buf;
}

nlohmann::json result_json(const PerfResult& r) {
  if (!r.simulated) return nlohmann::json(nullptr);
  nlohmann::json j{{"time_us", r.time_us}, {"algbw_gbps", r.algbw_gbps}, {"busbw_gbps", r.busbw_gbps}};
  j["wrong"] = r.wrong ? nlohmann::json(*r.wrong) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

std::string format_time_us(double us, int width) {
  char buf[48];
  const int decimals = us >= 10000.0 ? 0 : us >= 100.0 ? 1 : 2;
  std::snprintf(buf, sizeof buf, "%*.*f", width, decimals, us);
  return buf;
}

TableWriter::TableWriter(std::ostream& out, const PerfReport& heading, bool out_of_place, bool in_place) : out_(out) {
  out << "# ccsim perf " << to_string(heading.kind) << ": " << heading.nranks << " ranks on " << heading.topology
      << ", model " << heading.model << (heading.nccl_env.empty() ? "" : ", " + heading.nccl_env) << "\n";
  out << "# Times are simulated. In place runs the out-of-place schedule less the copies that would read and\n"
      << "# write the same memory (a rank's own block of all_gather or alltoall, a broadcast root's data), so it\n"
      << "# can be faster; #wrong is the CPU executor's data check of each layout. The last columns say what ran:\n"
      << "# algorithm, protocol, channels.\n";
  for (const auto& [column, simulated] : {std::pair{"out-of-place", out_of_place}, std::pair{"in-place", in_place}})
    if (!simulated) out << "# The " << column << " column was not simulated (ccsim perf --column): N/A.\n";
  if (is_rooted(heading.kind))
    out << "# As nccl-tests times it, a call is one of a run issued back to back: the next starts along the chain\n"
        << "# while this one still forwards.\n";
  out << "#\n";
  out << "#                                                              out-of-place                       in-place\n";
  out << "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong  algorithm  proto  ch\n";
  out << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
}

void TableWriter::row(const PerfRow& row) {
  ++rows_;
  host_bound_ += row.host_bound;
  char head[96];
  std::snprintf(head, sizeof head, "%12llu  %12llu  %8s  %6s  %6d", static_cast<unsigned long long>(row.spec.size_bytes()),
                static_cast<unsigned long long>(row.spec.block_count()), std::string(to_string(row.spec.type)).c_str(),
                redop_name(row.spec).c_str(), root_column(row.spec));
  char what[64];
  std::snprintf(what, sizeof what, "  %9s  %5s  %2d", row.algorithm.c_str(), std::string(to_string(row.protocol)).c_str(), row.channels);
  out_ << head << result_text(row.out_of_place) << result_text(row.in_place) << what << "\n";
  for (const auto* r : {&row.out_of_place, &row.in_place}) {
    if (!r->simulated) continue;
    bus_sum_ += r->busbw_gbps;
    ++bus_count_;
    if (r->wrong) {
      any_checked_ = true;
      wrong_total_ += *r->wrong;
    }
  }
}

void TableWriter::finish() {
  out_ << "# Out of bounds values : " << wrong_total_ << (wrong_total_ == 0 ? " OK" : " FAILED")
       << (any_checked_ ? "" : " (not checked)") << "\n";
  char avg[64];
  std::snprintf(avg, sizeof avg, "%g", bus_count_ == 0 ? 0.0 : bus_sum_ / static_cast<double>(bus_count_));
  out_ << "# Avg bus bandwidth    : " << avg << "\n#\n";
  if (host_bound_ > 0)
    out_ << "# " << host_bound_ << " of " << rows_
         << " sizes take the host's issue time (GPUs per thread x (host_issue_us + channels x host_channel_us)), not the GPUs' own\n";
}

void print_table(std::ostream& out, const PerfReport& report) {
  auto all = [&](PerfResult PerfRow::*column) {
    return std::all_of(report.rows.begin(), report.rows.end(), [&](const PerfRow& row) { return (row.*column).simulated; });
  };
  TableWriter table(out, report, all(&PerfRow::out_of_place), all(&PerfRow::in_place));
  for (const auto& row : report.rows) table.row(row);
  table.finish();
}

void print_csv_header(std::ostream& out) {
  out << "collective,topology,ranks,size_bytes,count,type,redop,root,algorithm,protocol,channels,"
         "oop_time_us,oop_algbw_gbps,oop_busbw_gbps,oop_wrong,ip_time_us,ip_algbw_gbps,ip_busbw_gbps,ip_wrong\n";
}

void print_csv_row(std::ostream& out, const PerfReport& heading, const PerfRow& row) {
  // A column not simulated (ccsim perf --column) leaves its four fields empty.
  auto fields = [](const PerfResult& r) {
    if (!r.simulated) return std::string(",,,");
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.6f,%.6f,%.6f,%s", r.time_us, r.algbw_gbps, r.busbw_gbps,
                  r.wrong ? std::to_string(*r.wrong).c_str() : "N/A");
    return std::string(buf);
  };
  const std::string nums = fields(row.out_of_place) + "," + fields(row.in_place);
  out << to_string(heading.kind) << "," << heading.topology << "," << heading.nranks << "," << row.spec.size_bytes() << ","
      << row.spec.block_count() << "," << to_string(row.spec.type) << "," << redop_name(row.spec) << "," << root_column(row.spec)
      << "," << row.algorithm << "," << to_string(row.protocol) << "," << row.channels << "," << nums << "\n";
}

nlohmann::json to_json(const PerfReport& report) {
  nlohmann::json j{{"collective", to_string(report.kind)},
                   {"topology", report.topology},
                   {"model", report.model},
                   {"ranks", report.nranks}};
  if (!report.nccl_env.empty()) j["nccl_env"] = report.nccl_env;
  auto& rows = j["rows"] = nlohmann::json::array();
  for (const auto& row : report.rows)
    rows.push_back({{"size_bytes", row.spec.size_bytes()},
                    {"count", row.spec.block_count()},
                    {"type", to_string(row.spec.type)},
                    {"redop", redop_name(row.spec)},
                    {"root", root_column(row.spec)},
                    {"algorithm", row.algorithm},
                    {"protocol", to_string(row.protocol)},
                    {"channels", row.channels},
                    {"messages", row.messages},
                    {"host_bound", row.host_bound},
                    {"out_of_place", result_json(row.out_of_place)},
                    {"in_place", result_json(row.in_place)}});
  return j;
}

}  // namespace ccsim
