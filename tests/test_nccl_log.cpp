#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/error.hpp"
#include "sim/nccl_log.hpp"
#include "sim/text.hpp"

using namespace ccsim;

namespace {

NcclLog parse(const std::string& text, const std::string& origin = "inline") {
  std::istringstream in(text);
  return parse_nccl_log(in, origin);
}

std::vector<int> problem_lines(const NcclLog& log) {
  std::vector<int> lines;
  for (const auto& p : log.problems) lines.push_back(p.line);
  return lines;
}

// Shows what went wrong when a check on a whole log fails.
std::string dump_problems(const NcclLog& log) {
  std::string out;
  for (const auto& p : log.problems) out += std::to_string(p.line) + ": " + p.text + " [" + p.why + "]\n";
  for (const auto& n : log.notes) out += "note: " + n + "\n";
  return out;
}

const char* const kNewLayout = R"LOG(# nThread 1 nGpus 2 minBytes 0 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   1000 on      node1 device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   1001 on      node1 device  1 [0x2a] NVIDIA H100 80GB HBM3
NCCL version 2.21.5+cuda12.4
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           0             0     float     sum      -1     0.10    0.00    0.00      0     0.10    0.00    0.00      0
     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    19.00   55.19   55.19    N/A
   134217728      33554432     float     sum      -1    12485   10.75   10.75      2    12000   11.18   11.18      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 25.5
#
)LOG";

}  // namespace

TEST_CASE("nccl log: current layout with device lines and footer") {
  const NcclLog log = parse(kNewLayout, "logs/h100-2g-allreduce-1.log");
  CHECK(log.problems.empty());
  // The 128 MiB row's out-of-place #wrong is 2: nccl-tests' data check failed there.
  CHECK(log.notes == std::vector<std::string>{
                         "1 of its rows report wrong results (nccl-tests' data check failed): their times may not be "
                         "a healthy run's"});
  REQUIRE(log.rows.size() == 3);
  CHECK(log.collective == CollectiveKind::all_reduce);
  CHECK(log.collective_source == "file name");
  CHECK(log.ranks == 2);
  CHECK(log.ranks_source == "device lines");
  CHECK(log.gpu == "NVIDIA H100 80GB HBM3");
  CHECK(log.command.empty());
  CHECK(log.gpus_per_thread == 2);
  CHECK(log.gpus_per_thread_source == "header");
  CHECK(log.iters == 20);  // "warmup iters: 5 iters: 20 agg iters: 1": the timed loop's, not the others
  CHECK(log.iters_source == "header");
  CHECK(log.graph_launches == 0);  // "graph: 0": calls launched one by one
  CHECK(log.agg_iters == 1);       // "agg iters: 1": one call per timed iteration
  CHECK_FALSE(log.summary_table);
  CHECK(log.avg_busbw_gbps == test::approx(25.5));
  CHECK(log.out_of_bounds == 0);

  const MeasuredRow& zero = log.rows[0];
  CHECK(zero.line == 11);
  CHECK(zero.size == 0);
  CHECK(zero.count == 0);
  REQUIRE(zero.out_of_place);
  CHECK(zero.out_of_place->time_us == test::approx(0.10));

  const MeasuredRow& mid = log.rows[1];
  CHECK(mid.size == 1048576);
  CHECK(mid.count == 262144);
  CHECK(mid.type == "float");
  CHECK(mid.redop == "sum");
  CHECK(mid.root == -1);
  REQUIRE(mid.out_of_place);
  REQUIRE(mid.in_place);
  CHECK(mid.out_of_place->time_us == test::approx(20.0));
  CHECK(mid.out_of_place->algbw_gbps == test::approx(52.43));
  CHECK(mid.out_of_place->busbw_gbps == test::approx(52.43));
  CHECK(mid.out_of_place->wrong == 0);
  CHECK(mid.out_of_place->has_time);
  CHECK_FALSE(mid.in_place->wrong);  // N/A
  CHECK_FALSE(mid.in_place->max_error);

  const MeasuredRow& big = log.rows[2];
  CHECK(big.out_of_place->time_us == test::approx(12485));  // printed without decimals
  CHECK(big.out_of_place->wrong == 2);
}

TEST_CASE("nccl log: old layout without root column and with an error column") {
  const NcclLog log = parse(R"LOG(mpirun -np 8 all_reduce_perf -b 4 -e 32M -f 2
# nThread 1 nGpus 1 minBytes 4 maxBytes 33554432 step: 2(factor) warmup iters: 5 iters: 100 validation: 1
#
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           4             1   float     sum    14.53    0.00    0.00  0e+00    14.19    0.00    0.00  0e+00
    33554432       8388608   float     sum    403.2   83.22  145.64  1e-07    401.9   83.49  146.11    N/A
)LOG");
  CHECK(log.problems.empty());
  REQUIRE(log.rows.size() == 2);
  CHECK(log.collective == CollectiveKind::all_reduce);
  CHECK(log.collective_source == "command");
  CHECK(log.command == "mpirun -np 8 all_reduce_perf -b 4 -e 32M -f 2");
  const MeasuredRow& row = log.rows[1];
  CHECK_FALSE(row.root);
  CHECK(row.redop == "sum");
  CHECK(row.out_of_place->max_error == test::approx(1e-7));
  CHECK_FALSE(row.out_of_place->wrong);
  CHECK_FALSE(row.in_place->max_error);
  CHECK(log.rows[0].out_of_place->max_error == 0.0);
  // No device lines: 145.64 / 83.22 and 146.11 / 83.49 fit 2(n-1)/n only for n = 8.
  CHECK(log.ranks == 8);
  CHECK(log.ranks_source == "busbw/algbw ratio");
}

TEST_CASE("nccl log: old rows without a header, told apart by their number of values") {
  // Old broadcast: root but no redop. Old alltoall: neither.
  const NcclLog bcast = parse("           8             2   float       0     7.28    0.00    0.00  0e+00     7.23    0.00    0.00  0e+00\n",
                              "abci-8g-broadcast-1.log");
  CHECK(bcast.problems.empty());
  REQUIRE(bcast.rows.size() == 1);
  CHECK(bcast.rows[0].root == 0);
  CHECK(bcast.rows[0].redop.empty());
  CHECK(bcast.collective == CollectiveKind::broadcast);
  // busbw = algbw whatever the rank count: the file name's 8g tells it.
  CHECK(bcast.ranks == 8);
  CHECK(bcast.ranks_source == "file name");

  const NcclLog a2a = parse("     1048576         32768   float            87.42   11.99   10.50    N/A    88.90   11.79   10.32    N/A\n",
                            "sb-8g-alltoall-1.log");
  CHECK(a2a.problems.empty());
  REQUIRE(a2a.rows.size() == 1);
  CHECK_FALSE(a2a.rows[0].root);
  CHECK(a2a.rows[0].redop.empty());
  CHECK(a2a.rows[0].in_place->busbw_gbps == test::approx(10.32));
  CHECK(a2a.ranks == 8);
}

TEST_CASE("nccl log: srun and OpenMPI rank labels are stripped") {
  const NcclLog log = parse(
      " 0: #  Rank  0 Group  0 Pid 291005 on    node005 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
      " 0: #  Rank  1 Group  0 Pid 291006 on    node005 device  1 [0x6d] NVIDIA H100 80GB HBM3\n"
      "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "0:            8             2     float     sum      -1    164.3    0.00    0.00      0    163.3    0.00    0.00      0\n"
      "[1,0]<stdout>:     16777216       4194304     float     sum      -1    167.6  100.10  100.10      0    166.1  101.01  101.01      0\n"
      "[1,0]<stdout>:# Avg bus bandwidth    : 156.742 \n"
      "0:\n",
      "x-2g-allreduce-1.log");
  INFO(dump_problems(log));
  CHECK(log.problems.empty());
  REQUIRE(log.rows.size() == 2);
  CHECK(log.rows[0].size == 8);
  CHECK(log.rows[1].size == 16777216);
  CHECK(log.rows[1].in_place->algbw_gbps == test::approx(101.01));
  CHECK(log.avg_busbw_gbps == test::approx(156.742));
  CHECK(log.ranks == 2);
}

TEST_CASE("nccl log: copies that lost their '#' (nebius, markdown indentation)") {
  const NcclLog log = parse(R"LOG(  nccl-tests version 2.17.6 nccl-headers=22602 nccl-library=22602
  Collective test starting: all_reduce_perf
    nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
 out-of-place                       in-place
        size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
  8589934592    2147483648     float     sum      -1  34448.4  249.36  467.54       0  34381.0  249.85  468.46       0
  Out of bounds values : 0 OK
  Avg bus bandwidth    : 125.499

  Collective test concluded: all_reduce_perf
)LOG",
                            "nebius-2n16g-allgather-1.log");
  INFO(dump_problems(log));
  CHECK(log.problems.empty());
  REQUIRE(log.rows.size() == 1);
  CHECK(log.rows[0].in_place->busbw_gbps == test::approx(468.46));
  CHECK(log.avg_busbw_gbps == test::approx(125.499));
  CHECK(log.out_of_bounds == 0);
  // The banner outranks the file name, and the disagreement is noted.
  CHECK(log.collective == CollectiveKind::all_reduce);
  CHECK(log.collective_source == "test banner");
  REQUIRE(log.notes.size() == 1);
  CHECK(log.notes[0] == "the test banner says all_reduce but the file name says all_gather");
  CHECK(log.ranks == 16);
}

TEST_CASE("nccl log: markdown summary tables keep busbw only") {
  const NcclLog log = parse(R"LOG(## NCCL Bandwidth

The values (in GB/s) are bus bandwidths of in-place operations.

| Message Size (Bytes) | ND H100 V5 (GB/s) |  
| -------------------- | ----------------- |  
| 1K                   | 0.07              |  
| 65K                  | 2.72              | 
| 8G                   | 478.87            |  
| 16M                  | fast              |
)LOG",
                            "azure-8g-allreduce-summary-1.log");
  CHECK(log.summary_table);
  CHECK(log.summary_system == "ND H100 V5");  // the busbw column's system, its unit left off
  REQUIRE(log.rows.size() == 3);
  CHECK(problem_lines(log) == std::vector<int>{3, 10});
  CHECK(log.collective == CollectiveKind::all_reduce);
  CHECK(log.ranks == 8);  // busbw only: the file name's 8g
  const MeasuredRow& row = log.rows[1];
  CHECK(row.line == 8);
  CHECK(row.size == 64 * 1024);  // "65K": 65536 written in thousands, taken as the power of two
  CHECK(row.size_approximate);
  CHECK_FALSE(row.out_of_place);
  REQUIRE(row.in_place);
  CHECK_FALSE(row.in_place->has_time);
  CHECK(row.in_place->busbw_gbps == test::approx(2.72));
  CHECK(log.rows[2].size == 8ULL << 30);
}

// A write-up may set the whole nccl-tests table in markdown, its header cells with their units:
// read as the text table (every value of a row, the header by each cell's first word).
TEST_CASE("nccl log: a whole nccl-tests table in markdown reads as the text table") {
  const NcclLog md = parse(
      "Results on our box:\n"
      "| Size (B) | Count | Type | Redop | Root | Time (us) | algbw (GB/s) | busbw (GB/s) | #wrong | Time (us) | algbw (GB/s) | busbw (GB/s) | #wrong |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
      "| 268435456 | 67108864 | float | sum | -1 | 1130.6 | 237.43 | 415.50 | 0 | 1129.4 | 237.68 | 415.94 | 0 |\n"
      "| 1073741824 | 268435456 | float | sum | -1 | 4188.1 | 256.38 | 448.66 | 0 | 4185.6 | 256.53 | 448.93 | 0 |\n",
      "h100-8g-allreduce.log");
  CHECK(problem_lines(md) == std::vector<int>{1});  // the prose line
  REQUIRE(md.rows.size() == 2);
  CHECK_FALSE(md.summary_table);
  REQUIRE(md.rows[1].in_place);
  CHECK(md.rows[1].out_of_place->time_us == test::approx(4188.1));
  CHECK(md.rows[1].in_place->busbw_gbps == test::approx(448.93));
  CHECK(md.rows[1].root == -1);
  CHECK(md.ranks == 8);
}

TEST_CASE("nccl log: rows with one placement") {
  const NcclLog cut = parse(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0\n");
  CHECK(cut.problems.empty());
  REQUIRE(cut.rows.size() == 1);
  CHECK(cut.rows[0].out_of_place);
  CHECK_FALSE(cut.rows[0].in_place);

  const NcclLog in_place = parse(
      "#                                   in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    19.00   55.19   55.19      0\n");
  CHECK(in_place.problems.empty());
  REQUIRE(in_place.rows.size() == 1);
  CHECK_FALSE(in_place.rows[0].out_of_place);
  CHECK(in_place.rows[0].in_place);
}

// A write-up that trims nccl-tests' table may drop the check column from the header and the rows
// alike ("time algbw busbw" a placement, as a GKE A4 B200 guide prints its all_reduce runs): its
// three values a placement read as the header names them; without such a header they do not.
TEST_CASE("nccl log: a column header without a check column heads rows of three values a placement") {
  const NcclLog trimmed = parse(
      "#       size         count      type   redop    root     time   algbw   busbw\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n"
      "     8388608       2097152     float     sum      -1    80.32  104.44  182.77\n"
      "  8589934592    2147483648     float     sum      -1    17899  479.90  839.82\n",
      "b200-allreduce.log");
  CHECK(trimmed.problems.empty());
  REQUIRE(trimmed.rows.size() == 2);
  REQUIRE(trimmed.rows[1].out_of_place);
  CHECK_FALSE(trimmed.rows[1].in_place);
  CHECK(trimmed.rows[1].out_of_place->time_us == test::approx(17899));
  CHECK(trimmed.rows[1].out_of_place->busbw_gbps == test::approx(839.82));
  CHECK_FALSE(trimmed.rows[1].out_of_place->wrong);
  CHECK(trimmed.ranks == 8);  // all_reduce (the file name) and busbw/algbw = 2 x 7/8
  CHECK(trimmed.ranks_source == "busbw/algbw ratio");

  const NcclLog both = parse(
      "#       size         count      type   redop    root     time   algbw   busbw     time   algbw   busbw\n"
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75    19.00   55.19   96.58\n");
  CHECK(both.problems.empty());
  REQUIRE(both.rows.size() == 1);
  REQUIRE(both.rows[0].in_place);
  CHECK(both.rows[0].in_place->time_us == test::approx(19.0));

  // Under the usual header, three values are a cut row, as before.
  const NcclLog cut = parse(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    20.00   52.43   52.43\n");
  CHECK(cut.rows.empty());
  CHECK(problem_lines(cut) == std::vector<int>{2});
}

TEST_CASE("nccl log: rank count from busbw/algbw only when one count fits") {
  auto row = [](const char* algbw, const char* busbw) {
    return std::string("  1048576  262144  float  sum  -1  10.0  ") + algbw + "  " + busbw + "  0  10.0  " + algbw +
           "  " + busbw + "  0\n";
  };
  // 19.80 / 10.00 fits every all_reduce count from 94 to 108.
  const NcclLog wide = parse(row("10.00", "19.80"), "x-allreduce-1.log");
  CHECK_FALSE(wide.ranks);
  CHECK(wide.ranks_source.empty());
  // 1.75 says 8, 1.5 says 4: no single count fits both.
  const NcclLog mixed = parse(row("100.00", "175.00") + row("100.00", "150.00"), "x-allreduce-1.log");
  CHECK_FALSE(mixed.ranks);
  // Rows under 1 GB/s say too little to count.
  const NcclLog slow = parse(row("0.50", "0.75") + row("100.00", "175.00"), "x-allreduce-1.log");
  CHECK(slow.ranks == 8);
  const NcclLog gather = parse(row("100.00", "87.50"), "x-allgather-1.log");
  CHECK(gather.ranks == 8);
  const NcclLog unknown = parse(row("100.00", "175.00"), "inline");
  CHECK_FALSE(unknown.collective);
  CHECK_FALSE(unknown.ranks);
}

TEST_CASE("nccl log: without device lines, a count the ratio allows from the file name or the header") {
  const std::string slow_row = "  1048576  262144  float  sum  -1  9000.0  0.12  0.12  0  9000.0  0.12  0.12  0\n";
  const std::string header = "# nThread 1 nGpus 2 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n";
  // Bandwidths below 1 GB/s say nothing of the count: the file name's 2g does.
  const NcclLog named = parse(slow_row, "rtx2080ti-2g-allreduce-1.log");
  CHECK(named.ranks == 2);
  CHECK(named.ranks_source == "file name");
  // No such word: one process driving nGpus GPUs.
  const NcclLog one_process = parse(header + slow_row, "box-allreduce-1.log");
  CHECK(one_process.ranks == 2);
  CHECK(one_process.ranks_source == "header's nThread x nGpus, one process");
  // One GPU per process (MPI) tells nothing; nor does a file name the ratio refutes (1.75: 8 ranks
  // of all_reduce, not 4).
  CHECK_FALSE(parse("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n" + slow_row, "box-allreduce-1.log").ranks);
  const NcclLog refuted = parse("  1048576  262144  float  sum  -1  10.0  100.00  175.00  0  10.0  100.00  175.00  0\n",
                                "box-4g-allreduce-1.log");
  CHECK(refuted.ranks == 8);
  CHECK(refuted.ranks_source == "busbw/algbw ratio");
  // all_gather, reduce_scatter and alltoall print a rank's count beside the total size: 1 MiB of
  // floats as 16384 per rank is 16 ranks, whatever the file name or the bandwidths say.
  const std::string gather_row = "  1048576  16384  float  none  -1  9000.0  0.12  0.11  0  9000.0  0.12  0.11  0\n";
  const NcclLog gathered = parse(gather_row, "box-4g-allgather-1.log");
  CHECK(gathered.ranks == 16);
  CHECK(gathered.ranks_source == "count column");
  // Rows that disagree (a pasted mix) decide nothing by their counts.
  const NcclLog mixed = parse(gather_row + "  2097152  65536  float  none  -1  9000.0  0.23  0.22  0  9000.0  0.23  0.22  0\n",
                              "box-allgather-1.log");
  CHECK_FALSE(mixed.ranks);
  // Device lines that show only rank 3 are a lower bound the count column raises.
  const NcclLog shown = parse("#  Rank  3 Group  0 Pid   2574 on host device  3 [0000:0f:00] NVIDIA A100-SXM4-40GB\n" + gather_row,
                              "box-allgather-1.log");
  CHECK(shown.ranks == 16);
  CHECK(shown.ranks_source == "count column");
  // A count column of the other kind than the collective named says so: an all_gather file whose
  // rows print whole buffers, an all_reduce one whose rows print a rank's block.
  const NcclLog named_wrong = parse(std::string("  1048576  262144  float  sum  -1  10.0  100.00  175.00  0  10.0  100.00  175.00  0\n"),
                                    "box-allgather-1.log");
  REQUIRE(named_wrong.notes.size() >= 1);
  CHECK(named_wrong.notes.back().find("its count column is each row's whole buffer") != std::string::npos);
  const NcclLog reduced_blocks = parse(std::string("  1048576  32768  float  sum  -1  10.0  100.00  175.00  0  10.0  100.00  175.00  0\n"),
                                       "box-allreduce-1.log");
  REQUIRE(reduced_blocks.notes.size() >= 1);
  CHECK(reduced_blocks.notes.back().find("its count column is 1/8 of each row's size") != std::string::npos);
  CHECK(parse(gather_row, "box-allgather-1.log").notes.empty());
  // An all_reduce's count is the whole buffer's: it says nothing of the ranks.
  CHECK(parse(slow_row, "box-allreduce-1.log").ranks_source != "count column");
}

TEST_CASE("nccl log: device lines that show only some ranks") {
  const std::string rows =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "  1073741824     268435456     float     sum      -1  10887.4   98.62  184.92       0  10867.5   98.80  185.26       0\n";
  auto device = [](int rank) {
    return "#  Rank " + std::to_string(rank) +
           " Group  0 Pid   2574 on host device  0 [0000:0f:00] NVIDIA A100-SXM4-40GB\n";
  };
  // Ranks 0, 7, 8, 15 shown of 16; busbw/algbw agrees.
  const NcclLog shown = parse(device(0) + device(7) + device(8) + device(15) + rows, "x-allreduce-1.log");
  CHECK(shown.ranks == 16);
  CHECK(shown.ranks_source == "highest device rank");
  // Only rank 3 shown: a lower bound, which busbw/algbw raises to 16.
  const NcclLog raised = parse(device(3) + rows, "x-allreduce-1.log");
  CHECK(raised.ranks == 16);
  CHECK(raised.ranks_source == "busbw/algbw ratio");
  // Rank 31 shown, yet the ratio fits only 16: no answer, and a note saying why.
  const NcclLog clash = parse(device(31) + rows, "x-allreduce-1.log");
  CHECK_FALSE(clash.ranks);
  REQUIRE(clash.notes.size() == 1);
  CHECK(clash.notes[0] == "device lines show rank 31 but busbw/algbw fits only 16 ranks");
  // Old nccl-tests printed no Group.
  const NcclLog old = parse("#   Rank  0 Pid  62652 on ip-172-31-16-64 device  0 [0x00] Tesla V100-SXM2-32GB\n"
                            "#   Rank  1 Pid  62653 on ip-172-31-16-64 device  1 [0x00] Tesla V100-SXM2-32GB\n");
  CHECK(old.ranks == 2);
  CHECK(old.gpu == "Tesla V100-SXM2-32GB");
  CHECK(old.hosts == std::vector<std::string>{"ip-172-31-16-64"});
  CHECK(old.ranks_per_host == 2);
  // Ranks 0, 7, 8, 15 of 16 on one host: not every rank is listed, so no count per host.
  CHECK(shown.hosts == std::vector<std::string>{"host"});
  CHECK_FALSE(shown.ranks_per_host);
}

TEST_CASE("nccl log: the hosts of the device lines give the nodes and the GPUs of each") {
  auto device = [](int rank, const std::string& host) {
    return "#  Rank " + std::to_string(rank) + " Group  0 Pid  100 on " + host + " device  " + std::to_string(rank % 2) +
           " [0x1b] NVIDIA H100 80GB HBM3\n";
  };
  const std::string rows =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    40.00   26.21   39.32       0    40.00   26.21   39.32       0\n";
  const NcclLog two = parse(device(0, "dgx-06") + device(1, "dgx-06") + device(2, "dgx-07") + device(3, "dgx-07") + rows,
                            "x-allreduce-1.log");
  CHECK(two.ranks == 4);
  CHECK(two.hosts == std::vector<std::string>{"dgx-06", "dgx-07"});
  CHECK(two.ranks_per_host == 2);
  // Hosts that list different numbers of ranks: no count per host.
  const NcclLog uneven = parse(device(0, "a") + device(1, "a") + device(2, "b") + "#  Rank  3 Group  0 Pid  100 on a device  3 [0x1b] NVIDIA H100 80GB HBM3\n" + rows,
                               "x-allreduce-1.log");
  CHECK(uneven.hosts.size() == 2);
  CHECK_FALSE(uneven.ranks_per_host);
}

// A write-up may list the devices without hosts and note each one's node after its name, with
// "..." for the lines it left out: the note is not part of the GPU's name, and names the host.
TEST_CASE("nccl log: a device line's \"(node N)\" note names its host, not its GPU") {
  const NcclLog noted = parse(
      "# Using devices (across 2 nodes)\n"
      "#  Rank  0 Group  0 device  0 [0000:8f:00] NVIDIA B200 (node 0)\n"
      "#  ...\n"
      "#  Rank  8 Group  0 device  0 [0000:8f:00] NVIDIA B200 (node 1)\n"
      "#  Rank 15 Group  0 device  7 [0000:cc:00] NVIDIA B200 (node 1)\n"
      "#       size         count      type   redop    root     time   algbw   busbw\n"
      "  8589934592    2147483648     float     sum      -1    23842  360.29  675.54\n",
      "b200-2n16g-allreduce.log");
  CHECK(noted.problems.empty());
  CHECK(noted.gpu == "NVIDIA B200");
  CHECK(noted.hosts == std::vector<std::string>{"node 0", "node 1"});
  CHECK(noted.ranks == 16);
}

TEST_CASE("nccl log: a file name's <nodes>n<ranks>g word gives the run's layout") {
  const std::string row =
      "     1048576        262144     float     sum      -1    40.00   26.21   39.32       0    40.00   26.21   39.32       0\n";
  const NcclLog two = parse(row, "logs/lambda-b200-2n16g-allreduce-1.log");
  CHECK(two.file_nodes == 2);
  CHECK(two.file_ranks == 16);
  // The row's busbw/algbw (1.5) is an all_reduce of 4 ranks: the name and the log disagree, said.
  REQUIRE(two.notes.size() == 1);
  CHECK(two.notes[0] == "the file name says 2n16g but the log has 4 ranks (by its busbw/algbw ratio)");
  const NcclLog many = parse(row, "abci_v100_ib_32n128g.log");
  CHECK(many.file_nodes == 32);
  CHECK(many.file_ranks == 128);
  // One node's "<ranks>g", a word that only starts like one, a directory's, zero: no layout.
  for (const char* name : {"x-8g-allreduce-1.log", "x-2n16gpu-allreduce-1.log", "2n16g/x-allreduce-1.log",
                           "x-0n8g-allreduce.log", "x-2n-allreduce.log"}) {
    CAPTURE(name);
    const NcclLog none = parse(row, name);
    CHECK_FALSE(none.file_nodes);
    CHECK_FALSE(none.file_ranks);
  }
  // One node's "<ranks>g" that the log contradicts is said too; of several such words the last is
  // the GPU count (a memory size comes earlier, in the system's name: A100 40GB, 8 GPUs).
  const NcclLog one = parse(row, "x-a100-40g-8g-allreduce-1.log");
  REQUIRE(one.notes.size() == 1);
  CHECK(one.notes[0] == "the file name says 8g but the log has 4 ranks (by its busbw/algbw ratio)");
  CHECK(parse(row, "x-a100-40g-4g-allreduce-1.log").notes.empty());
}

TEST_CASE("nccl log: the collective comes from the command, then the banner, then the file name") {
  const NcclLog prompt = parse("cnh@dgx-06:~/nccl-tests$ mpirun -n 2 ./build/all_gather_perf -b 8 -e 1G -g 8\n",
                               "x-allreduce-1.log");
  CHECK(prompt.problems.empty());
  CHECK(prompt.command == "mpirun -n 2 ./build/all_gather_perf -b 8 -e 1G -g 8");
  CHECK(prompt.collective == CollectiveKind::all_gather);
  CHECK(prompt.collective_source == "command");
  CHECK(prompt.notes.size() == 1);
  CHECK(prompt.gpus_per_thread == 8);  // no header: the command's -g
  CHECK(prompt.gpus_per_thread_source == "command");

  const NcclLog continued = parse(
      "me@spark:~/nccl-tests$ cd ~/nccl-tests\n"
      "mpirun -np 2 \\\n"
      "  -H 10.0.1.1:1,10.0.1.2:1 \\\n"
      "  ./build/reduce_scatter_perf -b 1G -e 4G\n"
      "# nThread 1 nGpus 1\n");
  CHECK(continued.problems.empty());
  CHECK(continued.command == "mpirun -np 2 -H 10.0.1.1:1,10.0.1.2:1 ./build/reduce_scatter_perf -b 1G -e 4G");
  CHECK(continued.collective == CollectiveKind::reduce_scatter);
  CHECK(continued.gpus_per_thread == 1);
  CHECK(continued.gpus_per_thread_source == "header");

  const NcclLog dangling = parse(
      "./build/all_reduce_perf -b 8 \\\n"
      "  8  2  float  sum  -1  5.0  0.00  0.00  0  5.0  0.00  0.00  0\n");
  CHECK(dangling.command == "./build/all_reduce_perf -b 8");
  CHECK(dangling.rows.size() == 1);

  const NcclLog quoted = parse("`./nccl-tests/build/sendrecv_perf -b 1G -e 8G`\n");
  CHECK(quoted.command == "./nccl-tests/build/sendrecv_perf -b 1G -e 8G");
  CHECK(quoted.collective == CollectiveKind::sendrecv);

  const NcclLog mpi_build = parse("/opt/ompi/bin/mpirun --np 32 /home/u/nccl-tests/build/alltoall_perf_mpi -b 8\n");
  CHECK(mpi_build.collective == CollectiveKind::alltoall);

  // The header wins over the command; a launcher's options before the binary are not nccl-tests'.
  CHECK(parse("./build/all_reduce_perf -g 4\n# nThread 1 nGpus 2 minBytes 8\n").gpus_per_thread == 2);
  CHECK(parse("./build/all_reduce_perf --ngpus=4 -b 8\n").gpus_per_thread == 4);
  CHECK(parse("./build/all_reduce_perf -g2 -b 8\n").gpus_per_thread == 2);
  CHECK_FALSE(parse("srun -g 3 ./build/all_reduce_perf -b 8\n").gpus_per_thread);
  // nccl-tests -t: the header's nThread, else the command's; srun's -t (a time limit) is not it.
  CHECK(parse("# nThread 8 nGpus 1 minBytes 8\n").threads == 8);
  CHECK(parse("./build/all_reduce_perf -t 4 -g 2\n# nThread 2 nGpus 2 minBytes 8\n").threads == 2);
  CHECK(parse("./build/all_reduce_perf -b 8 -t 4 -g 2\n").threads == 4);
  CHECK(parse("./build/all_reduce_perf --nthreads=3 -b 8\n").threads == 3);
  CHECK_FALSE(parse("srun -t 10 ./build/all_reduce_perf -b 8\n").threads);
  CHECK_FALSE(parse("./build/all_reduce_perf -b 8\n").threads);
  CHECK(parse("./build/all_reduce_perf -b 8 -n 50\n").iters == 50);
  CHECK(parse("./build/all_reduce_perf --iters=7 -b 8\n").iters == 7);
  CHECK(parse("./build/all_reduce_perf -n 50\n# nThread 1 nGpus 2 minBytes 8 warmup iters: 5 iters: 100\n").iters == 100);
  CHECK_FALSE(parse("./build/all_reduce_perf -b 8\n").iters);
  CHECK(parse("mpirun -n 16 ./build/all_reduce_perf -b 8 -n 30\n").iters == 30);  // the launcher's -n is not it
  CHECK_FALSE(parse("mpirun -n 16 ./build/all_reduce_perf -b 8\n").iters);
  // CUDA graphs (-G): the header's "graph: N", else the command's.
  CHECK(parse("# nThread 1 nGpus 1 minBytes 8 warmup iters: 5 iters: 20 validation: 1 graph: 3\n").graph_launches == 3);
  CHECK(parse("./build/all_reduce_perf -b 8 -G 10\n").graph_launches == 10);
  CHECK(parse("./build/all_reduce_perf -b 8 --cudagraph=2\n").graph_launches == 2);
  CHECK_FALSE(parse("./build/all_reduce_perf -b 8\n").graph_launches);
  CHECK(parse("# nThread 1 nGpus 1 minBytes 8 warmup iters: 5 iters: 20 agg iters: 4 validation: 1\n").agg_iters == 4);
  CHECK(parse("./build/all_reduce_perf -b 8 -m 8\n").agg_iters == 8);
  CHECK(parse("./build/all_reduce_perf -b 8 -R 2\n").registration == 2);
  CHECK_FALSE(parse("./build/all_reduce_perf -b 8\n").registration);
  CHECK(problem_lines(parse("# nThread 1 nGpus 1 minBytes 8 warmup iters: 5 iters: many\n")) == std::vector<int>{1});
  const NcclLog bad_header = parse("# nThread 1 nGpus x minBytes 8\n");
  CHECK_FALSE(bad_header.gpus_per_thread);
  CHECK(problem_lines(bad_header) == std::vector<int>{1});

  const NcclLog commented = parse("# ./build/broadcast_perf -b 8 -e 128M -g 8\n");
  CHECK(commented.command == "./build/broadcast_perf -b 8 -e 128M -g 8");
  CHECK(commented.collective == CollectiveKind::broadcast);

  const NcclLog banner = parse("# Collective test starting: reduce_perf\n", "x-allreduce-1.log");
  CHECK(banner.collective == CollectiveKind::reduce);
  CHECK(banner.collective_source == "test banner");

  for (const char* name : {"/data/sys-8g-allreduce-1.log", "sys-8g-all_reduce-2.log", "sys-2n16g-reducescatter-1.log",
                           "azure-8g-allreduce-summary-1.log"}) {
    INFO(name);
    const NcclLog by_name = parse("", name);
    CHECK(by_name.collective.has_value());
    CHECK(by_name.collective_source == "file name");
  }
  CHECK(parse("", "sys-8g-reducescatter-1.log").collective == CollectiveKind::reduce_scatter);
  CHECK_FALSE(parse("", "notes.log").collective);
}

TEST_CASE("nccl log: unknown lines and broken rows are reported with their line numbers") {
  const NcclLog log = parse(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    19.00   55.19   55.19      0\n"
      "Warning: Permanently added '[10.0.0.1]:22' (ED25519) to the list of known hosts.\n"
      "     2097152        524288     float     sum      -1    30.00   69.90\n"
      "     4194304       1048576     float     sum      -1    4x.00   69.90   69.90      0    40.00   104.86  104.86      0\n"
      "     4194304       1048576     float     sum      -1    40.00  104.86  104.86    one    40.00   104.86  104.86      0\n"
      "     4194304       1048576     float     sum      -1    40.00  104.86  104.86      0    40.00   104.86  104.86      0   7\n"
      "     8388608       2097152     float     sum     -1.5    80.00  104.86  104.86      0    80.00   104.86  104.86      0\n"
      "...\n"
      "# any comment is fine\n"
      "# Avg bus bandwidth    : n/a\n"
      "\n");
  CHECK(log.rows.size() == 1);
  CHECK(problem_lines(log) == std::vector<int>{3, 4, 5, 6, 7, 8, 9, 11});
  REQUIRE(log.problems.size() == 8);
  CHECK(log.problems[0].text.starts_with("Warning: Permanently added"));
  CHECK(log.problems[1].why == "expected 4 or 8 values (time algbw busbw #wrong per placement), found 2 (truncated row?)");
  CHECK(log.problems[2].why == "time \"4x.00\" is not a number");
  CHECK(log.problems[3].why == "#wrong \"one\" is not a count");
  CHECK(log.problems[4].why.starts_with("expected 4 or 8 values"));
  CHECK(log.problems[5].why == "root \"-1.5\" is not a rank");
  CHECK(log.problems[6].text == "...");
  CHECK_FALSE(log.avg_busbw_gbps);
}

TEST_CASE("nccl log: CRLF line ends and missing files") {
  const NcclLog log = parse("# Avg bus bandwidth    : 1.5\r\n"
                            "  8  2  float  sum  -1  5.0  0.00  0.00  0  5.0  0.00  0.00  0\r\n");
  CHECK(log.problems.empty());
  CHECK(log.rows.size() == 1);
  CHECK(log.avg_busbw_gbps == test::approx(1.5));
  CHECK_THROWS_WITH_AS(read_nccl_log("/nonexistent/x.log"), "/nonexistent/x.log: cannot open file", Error);
}

// ---- the real logs in shared/data/measured ------------------------------------------------------

namespace {

const std::string kMeasuredDir = std::string(CCSIM_SHARED_DIR) + "/data/measured";

// Lines of these logs that are not nccl-tests output (wrapper scripts, ssh, notes, elisions),
// kept as published; INDEX.md says where each file comes from.
const std::map<std::string, std::vector<int>> kExpectedProblems = {
    {"azure-nda100v4-8g-allreduce-summary-1.log", {3}},        // prose above the table
    {"azure-ndh100v5-8g-allreduce-summary-1.log", {3}},        // prose above the table
    {"coreweave-h100-ib-12n96g-allreduce-1.log", {3}},         // "..."
    {"gke-a4-b200-gib-2n16g-allgather-1.log", {2, 3, 4}},      // "Generating hostfiles" and host names
    {"gke-a4-b200-gib-2n2g-allgather-1.log", {3, 4, 5}},       // the same
    {"gke-a4-b200-nvlink-2g-allgather-1.log", {2, 3, 14}},     // the same, and "..." for skipped rows
    {"h100-pcie-nvlink-2g-allreduce-1.log", {3}},              // "H100 PCIe"
    {"h200-tcp-2n16g-allreduce-1.log", {2}},                   // ssh known-hosts warning
    {"vmware-h100-ib-4n32g-allreduce-1.log", {2}},             // "Run-1 Starting command at ..."
};

// One file whose only device line (rank 143, same Pid and host as the 72-GPU file's rank 71)
// disagrees with its busbw/algbw, which fits 128 ranks only.
const std::map<std::string, std::string> kExpectedNotes = {
    {"coreweave-gb200-nvl72-2rack-144g-allreduce-1.log",
     "device lines show rank 143 but busbw/algbw fits only 128 ranks"},
};

// "<system>-16g-..." or "<system>-2n16g-...": the dataset's GPU count.
std::optional<int> gpus_in_file_name(const std::string& name) {
  // The last such word: "superbench-a100-sxm4-40g-8g-..." has a 40 GB model before its 8 GPUs.
  std::optional<int> gpus;
  std::istringstream parts(name);
  std::string part;
  while (std::getline(parts, part, '-')) {
    if (part.size() < 2 || part.back() != 'g') continue;
    const auto n = part.find('n');
    const std::string digits = part.substr(n == std::string::npos ? 0 : n + 1, std::string::npos);
    const std::string number = digits.substr(0, digits.size() - 1);
    if (!number.empty() && std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }))
      gpus = std::stoi(number);
  }
  return gpus;
}

void check_point(const MeasuredRow& row, const MeasuredPoint& p) {
  if (p.time_us <= 0 || p.algbw_gbps < 0.1) return;
  INFO("line ", row.line);
  // nccl-tests: algbw = size / time, in GB/s with time in microseconds. algbw is printed with two
  // decimals, which alone is 2.5% off at 0.2 GB/s; allow that on top.
  const double expected = static_cast<double>(row.size) / p.time_us / 1e3;
  CHECK(std::abs(p.algbw_gbps - expected) <= 0.02 * expected + 0.005);
}

}  // namespace

TEST_CASE("nccl log: every measured log parses") {
  // The shared data sits beside the checkout, as the accuracy tests need it too: missing, this
  // fails rather than drops out of the list of tests.
  REQUIRE(std::filesystem::is_directory(kMeasuredDir));
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kMeasuredDir))
    if (entry.path().extension() == ".log") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 81);
  int with_problems = 0;
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    INFO(name);
    const NcclLog log = read_nccl_log(path.string());
    INFO(dump_problems(log));
    CHECK(log.rows.size() >= 1);
    CHECK(log.collective.has_value());
    CHECK(log.summary_table == (name.find("-summary-") != std::string::npos));
    CHECK(log.run_starts.empty());  // one run a file, as INDEX.md lists them

    const auto expected = kExpectedProblems.find(name);
    CHECK(problem_lines(log) == (expected == kExpectedProblems.end() ? std::vector<int>{} : expected->second));
    with_problems += !log.problems.empty();
    const auto note = kExpectedNotes.find(name);
    const std::vector<std::string> notes =
        note == kExpectedNotes.end() ? std::vector<std::string>{} : std::vector<std::string>{note->second};
    CHECK(log.notes == notes);

    // Where the log says how many ranks ran, it is the GPU count the dataset names the file by.
    if (log.ranks) CHECK(log.ranks == gpus_in_file_name(name));

    for (const auto& row : log.rows) {
      if (log.summary_table) {
        CHECK(row.in_place);
        continue;
      }
      CHECK((row.out_of_place || row.in_place));
      if (row.out_of_place) check_point(row, *row.out_of_place);
      if (row.in_place) check_point(row, *row.in_place);
    }
  }
  CHECK(with_problems == static_cast<int>(kExpectedProblems.size()));
}

TEST_CASE("nccl log: the NCCL release that ran, from NCCL's line or nccl-tests' library code") {
  const char* both =
      "# nccl-tests version 2.17.6 nccl-headers=22602 nccl-library=22703\n"
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
      "NCCL version 2.26.6+cuda12.8\n"
      "           8             2     float     sum      -1    36.50    0.00    0.00      0    35.30    0.00    0.00      0\n";
  CHECK(parse(both, "x-2g-allreduce-1.log").nccl_version == "2.26.6");  // the library NCCL itself reports
  const char* code_only =
      "# nccl-tests version 2.17.6 nccl-headers=22602 nccl-library=22602\n"
      "           8             2     float     sum      -1    36.50    0.00    0.00      0    35.30    0.00    0.00      0\n";
  CHECK(parse(code_only, "x-2g-allreduce-1.log").nccl_version == "2.26.2");
  const char* old_code = "# nccl-tests version 2.0.0 nccl-headers=2708 nccl-library=2708\n";
  CHECK(parse(old_code, "x-2g-allreduce-1.log").nccl_version == "2.7.8");  // NCCL_VERSION_CODE before 2.9
  const char* neither =
      "           8             2     float     sum      -1    36.50    0.00    0.00      0    35.30    0.00    0.00      0\n";
  CHECK(parse(neither, "x-2g-allreduce-1.log").nccl_version.empty());
  const char* info = "node1:2051:2051 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n";
  CHECK(parse(info, "x-2g-allreduce-1.log").nccl_version == "2.18.3");
  const char* garbled = "NCCL version 2.26+cuda12.8\n";
  CHECK(parse(garbled, "x-2g-allreduce-1.log").nccl_version.empty());
}

TEST_CASE("nccl log: NCCL's debug output is recognised, and what it reports of the settings wins") {
  const std::string text = std::string("$ NCCL_ALGO=Tree mpirun -np 2 ./build/all_reduce_perf -b 8 -e 128M -g 1\n") +
                           "node1:1000:1000 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                           "node1:1000:1000 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
                           "node1:1000:1000 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0:1, mlx5_3:1\n"
                           "node1:1000:1012 [0] NCCL WARN NET/IB : Got completion with error 12\n"
                           "node1:1001:1001 [1] NCCL INFO NCCL version 2.25.1+cuda12.8\n" +
                           kNewLayout + "[1,0]<stdout>:node1:1000:1020 [0] NCCL TRACE comm 0x1 rank 0\n";
  const NcclLog log = parse(text);
  CHECK(log.problems.empty());  // none of them is an unreadable line
  CHECK(log.nccl_debug_lines == 6);
  REQUIRE(log.nccl_warnings.size() == 1);
  CHECK(log.nccl_warnings[0].line == 5);
  CHECK(log.nccl_version == "2.21.5");  // the last "NCCL version" line read (the table's) wins
  CHECK(log.nccl_env.at("NCCL_ALGO") == "Ring");  // what NCCL read, not the command's Tree
  CHECK(log.nccl_env.at("NCCL_IB_HCA") == "mlx5_0:1, mlx5_3:1");  // the rest of the line
  CHECK(log.nccl_env_reported == std::set<std::string>{"NCCL_ALGO", "NCCL_IB_HCA"});
  CHECK(log.rows.size() == 3);
  // "NCCL" and a level further into a line is prose, not NCCL's prefix.
  CHECK(parse("the run printed words and then NCCL INFO somewhere\n").problems.size() == 1);
}

TEST_CASE("nccl log: nccl-tests' old table, with a maximum error column, is told from the #wrong one") {
  CHECK_FALSE(parse(kNewLayout).error_column);
  const char* old_table =
      "# nThread 1 nGpus 8 minBytes 1 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 0\n"
      "#\n"
      "#                                                     out-of-place                       in-place\n"
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "           8             2   float     sum    34.47    0.00    0.00  0e+00    34.18    0.00    0.00  0e+00\n";
  const NcclLog old = parse(old_table, "x-8g-allreduce-1.log");
  CHECK(old.error_column);
  CHECK(old.rows.size() == 1);
}

TEST_CASE("nccl log: nccl-tests' first layout prints milliseconds, which algbw confirms, and the headers' release") {
  // The shape of nccl-tests before its "size count" header (NCCL 2.0-2.4 era): "bytes N type op",
  // a "res" check column, no units line, device lines without Pid, times in milliseconds.
  const std::string first =
      "# nThread 1 nGpus 2 minBytes 4 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
      "# NCCL Tests compiled with NCCL 2.4\n"
      "# Using devices\n"
      "#   Rank  0 on       host device  0 [0x05] GeForce RTX 2080 Ti\n"
      "#   Rank  1 on       host device  1 [0x06] GeForce RTX 2080 Ti\n"
      "\n"
      "#                                                 out-of-place                    in-place\n"
      "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n";
  const std::string rows =
      "           4             1   float     sum    0.010   0.00   0.00    0e+00    0.009   0.00   0.00    0e+00\n"
      "     1048576        262144   float     sum    0.105   9.99   9.99    0e+00    0.104  10.08  10.08    0e+00\n";
  const NcclLog log = parse(first + rows, "x-2g-allreduce-1.log");
  REQUIRE(log.rows.size() == 2);
  CHECK(log.problems.empty());
  CHECK(log.error_column);
  CHECK(log.ranks == 2);
  CHECK(log.nccl_version == "2.4");
  CHECK(log.rows[0].out_of_place->time_us == test::approx(10.0));
  CHECK(log.rows[1].out_of_place->time_us == test::approx(105.0));
  CHECK(log.rows[1].in_place->time_us == test::approx(104.0));
  CHECK(std::any_of(log.notes.begin(), log.notes.end(), [](const std::string& n) { return n.find("milliseconds (algbw") != std::string::npos; }));
  // Without a row whose algbw tells, the header decides.
  const NcclLog small = parse(first + rows.substr(0, rows.find('\n') + 1), "x-2g-allreduce-1.log");
  CHECK(small.rows[0].out_of_place->time_us == test::approx(10.0));
  // Where algbw says microseconds, the header does not turn them into milliseconds.
  const NcclLog micro = parse(first + "     1048576        262144   float     sum    105.0   9.99   9.99    0e+00    104.0  10.08  10.08    0e+00\n",
                              "x-2g-allreduce-1.log");
  CHECK(micro.rows[0].out_of_place->time_us == test::approx(105.0));
  // A copy that commented the rows out ('#' before each, a table pasted into a shell script):
  // under a column header, a commented line of a row's shape is a row; other comments stay comments.
  std::string commented = first;
  for (const auto line : split_list(rows, '\n')) commented += "#" + std::string(line) + "\n";
  commented += "# 8 GPUs on 2 hosts, not a row\n";
  const NcclLog hashed = parse(commented, "x-2g-allreduce-1.log");
  REQUIRE(hashed.rows.size() == 2);
  CHECK(hashed.rows[1].line == 10);
  CHECK(hashed.rows[1].out_of_place->time_us == test::approx(105.0));
  CHECK(hashed.problems.empty());
  CHECK(std::any_of(hashed.notes.begin(), hashed.notes.end(), [](const std::string& n) { return n.find("commented out") != std::string::npos; }));
  // Before any header, a commented line of digits is only a comment.
  CHECK(parse("#     1048576        262144   float     sum    0.105   9.99   9.99    0e+00    0.104  10.08  10.08    0e+00\n").rows.empty());
  // A tie between the rows' votes goes to the header.
  const NcclLog tie = parse(first + rows + "     1048576        262144   float     sum    105.0   9.99   9.99    0e+00    104.0  10.08  10.08    0e+00\n",
                            "x-2g-allreduce-1.log");
  CHECK(tie.rows[1].out_of_place->time_us == test::approx(105.0));
  CHECK(tie.rows[2].out_of_place->time_us == test::approx(105000.0));
  // The host times of a "cputime" table (nccl-tests -C 1: what enqueueing cost, a few us against
  // the GPUs' milliseconds) put algbw x time near a thousandth of the size: still microseconds.
  const NcclLog host = parse(
      "#       size         count      type   redop    root  cputime   algbw   busbw #wrong  cputime   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "  1073741824     268435456     float     sum      -1     5.10  230.10  402.68      0     5.00  230.00  402.50      0\n"
      "  2147483648     536870912     float     sum      -1     5.20  231.10  404.43      0     5.10  231.00  404.25      0\n",
      "h100-8g-allreduce-1.log");
  REQUIRE(host.rows.size() == 2);
  CHECK(host.rows[0].out_of_place->time_us == test::approx(5.1));
  CHECK(std::none_of(host.notes.begin(), host.notes.end(), [](const std::string& n) { return n.find("milliseconds") != std::string::npos; }));
  // The first layout's all_gather printed busbw as algbw: its ratio says nothing of the rank count,
  // which the device lines give without a clash.
  const NcclLog gather = parse(
      "# NCCL Tests compiled with NCCL 2.3\n"
      "#   Rank  0 on       host device  0 [0x05] Tesla V100-SXM2-16GB\n"
      "#   Rank  1 on       host device  1 [0x06] Tesla V100-SXM2-16GB\n"
      "#   Rank  2 on       host device  2 [0x07] Tesla V100-SXM2-16GB\n"
      "#   Rank  3 on       host device  3 [0x08] Tesla V100-SXM2-16GB\n"
      "#      bytes             N    type     time  algbw  busbw      res     time  algbw  busbw      res\n"
      "     4194304        262144   float    0.100  31.46  31.46    0e+00    0.100  31.46  31.46    0e+00\n",
      "x-4g-allgather-1.log");
  REQUIRE(gather.rows.size() == 1);
  CHECK(gather.ranks == 4);
  CHECK(gather.ranks_source == "device lines");
  CHECK(gather.rows[0].out_of_place->time_us == test::approx(100.0));
  CHECK(std::none_of(gather.notes.begin(), gather.notes.end(), [](const std::string& n) { return n.find("busbw") != std::string::npos; }));
  // The current layout in microseconds stays as printed, with nothing said.
  const NcclLog current = parse(kNewLayout);
  CHECK(std::none_of(current.notes.begin(), current.notes.end(), [](const std::string& n) { return n.find("milliseconds") != std::string::npos; }));
}

TEST_CASE("nccl log: a copy out of a web page keeps its escapes and no-break spaces, read as the text") {
  std::string html;
  for (const auto line : split_list(kNewLayout, '\n')) html += "[1,0]&lt;stdout&gt;:" + std::string(line) + "\n";
  const NcclLog plain = parse(kNewLayout);
  const NcclLog web = parse(html);
  REQUIRE(web.rows.size() == plain.rows.size());
  CHECK(web.problems.empty());
  CHECK(web.ranks == plain.ranks);
  CHECK(std::any_of(web.notes.begin(), web.notes.end(), [](const std::string& n) { return n.find("web page's escapes") != std::string::npos; }));
  // No-break spaces (UTF-8 C2 A0) between the columns, and an escaped ampersand that is not markup.
  std::string spaced;
  for (const char c : std::string(kNewLayout)) spaced += c == ' ' ? std::string("\xC2\xA0") : std::string(1, c);
  const NcclLog nbsp = parse(spaced);
  REQUIRE(nbsp.rows.size() == plain.rows.size());
  CHECK(nbsp.rows.back().out_of_place->time_us == plain.rows.back().out_of_place->time_us);
  CHECK(parse("NCCL_ALGO=Ring all_reduce_perf -b 8 -e 8 &amp;&amp; echo done\n").command.find("&& echo") != std::string::npos);
  // A root of "−1" set with a minus sign (U+2212) by a page's typography.
  std::string minus = kNewLayout;
  for (std::size_t at = minus.find(" -1 "); at != std::string::npos; at = minus.find(" -1 ", at + 4)) minus.replace(at + 1, 1, "\xE2\x88\x92");
  const NcclLog typeset = parse(minus);
  REQUIRE(typeset.rows.size() == plain.rows.size());
  CHECK(typeset.problems.empty());
  CHECK(typeset.rows.front().root == -1);
  CHECK(std::none_of(plain.notes.begin(), plain.notes.end(), [](const std::string& n) { return n.find("escapes") != std::string::npos; }));
}

TEST_CASE("nccl log: NCCL's INFO lines say which network it drove: the NICs' link layer and the transport") {
  const auto network = [](const std::string& lines) { return parse(lines + kNewLayout); };
  const NcclLog roce = network(
      "node1:1000:1000 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
      "node1:1000:1000 [0] NCCL INFO Using network IB\n");
  CHECK(roce.net_link_layers == std::set<std::string>{"RoCE"});
  CHECK(roce.nccl_network == "IB");
  CHECK(roce.problems.empty());
  // An InfiniBand port, one with SHARP behind it, and a list ending in ';'.
  const NcclLog ib = network("node1:1000:1000 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB/SHARP [1]mlx5_1:1/IB; OOB ib0:10.0.0.1<0>\n");
  CHECK(ib.net_link_layers == std::set<std::string>{"IB"});
  const NcclLog both = network("node1:1000:1000 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE\n");
  CHECK(both.net_link_layers == std::set<std::string>{"IB", "RoCE"});
  CHECK(network("node1:1000:1000 [0] NCCL INFO Using network Socket\n").nccl_network == "Socket");
  CHECK(network("node1:1000:1000 [0] NCCL INFO Using network AWS Libfabric\n").nccl_network == "AWS Libfabric");
  // Other "Using" lines (the bootstrap's interface) say nothing of the network.
  const NcclLog bootstrap = network("node1:1000:1000 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n");
  CHECK(bootstrap.net_link_layers.empty());
  CHECK(bootstrap.nccl_network.empty());
  CHECK(bootstrap.peer_transports.empty());
}

TEST_CASE("nccl log: NCCL's INFO lines say how it connected peers: P2P, through host memory (SHM), the network") {
  const auto lines = [](const std::string& info) { return parse(info + kNewLayout); };
  CHECK(lines("box:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n").peer_transports ==
        std::set<std::string>{"P2P"});
  CHECK(lines("box:1:2 [1] NCCL INFO Channel 01/0 : 1[1] -> 0[0] via SHM/direct/direct\n"
              "box:1:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/0\n")
            .peer_transports == std::set<std::string>{"SHM", "NET"});
  // NCCL 2.4's rings: "Ring 00 : 0[0] -> 1[1] via P2P/IPC".
  CHECK(lines("box:1:2 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC\n").peer_transports == std::set<std::string>{"P2P"});
  // "via" elsewhere in a line, not after a connection, names no transport.
  CHECK(lines("box:1:2 [0] NCCL INFO Setting affinity via sched_setaffinity\n").peer_transports.empty());
}

TEST_CASE("nccl log: the NCCL settings of the command line, in the forms launchers pass them") {
  const NcclLog mpirun = parse(std::string("$ mpirun -np 16 -x NCCL_ALGO=Ring -x \"NCCL_PROTO=Simple\" -x NCCL_IB_HCA=mlx5_2,mlx5_8 "
                                           "./build/all_reduce_perf -b 8 -e 1G -g 1\n") + kNewLayout);
  CHECK(mpirun.nccl_env.at("NCCL_ALGO") == "Ring");
  CHECK(mpirun.nccl_env.at("NCCL_PROTO") == "Simple");
  CHECK(mpirun.nccl_env.at("NCCL_IB_HCA") == "mlx5_2,mlx5_8");  // a list value keeps its commas
  const NcclLog shell = parse(std::string("NCCL_NET_GDR_LEVEL='PHB' NCCL_P2P_LEVEL=SYS ./all_gather_perf -b 8 -e 128M\n") + kNewLayout);
  CHECK(shell.nccl_env.at("NCCL_NET_GDR_LEVEL") == "PHB");
  CHECK(shell.nccl_env.at("NCCL_P2P_LEVEL") == "SYS");
  // In srun's list a comma followed by another NAME= ends the value; other commas belong to it.
  const NcclLog srun = parse(std::string("srun --export=ALL,NCCL_ALGO=Tree,Ring,NCCL_DEBUG=INFO,OMP_NUM_THREADS=4 "
                                         "all_reduce_perf -b 8 -e 1M\n") + kNewLayout);
  CHECK(srun.nccl_env.at("NCCL_ALGO") == "Tree,Ring");
  CHECK(srun.nccl_env.at("NCCL_DEBUG") == "INFO");
  CHECK(srun.nccl_env.size() == 2);
  // Not a setting: a word that merely contains the name, or a name without a value.
  const NcclLog none = parse(std::string("mpirun -x MY_NCCL_ALGO=ring -x NCCL_ALGO ./all_reduce_perf -b 8\n") + kNewLayout);
  CHECK(none.nccl_env.empty());
}

TEST_CASE("text: lists as NCCL settings write them split, trimmed, empty items left out") {
  CHECK(split_list("mlx5_0,mlx5_1") == std::vector<std::string_view>{"mlx5_0", "mlx5_1"});
  CHECK(split_list(" Ring , Tree ,") == std::vector<std::string_view>{"Ring", "Tree"});
  CHECK(split_list("").empty());
  CHECK(split_list(",,").empty());
  CHECK(trim("  x\t\n") == "x");
}

TEST_CASE("nccl log: a file of several runs says where each begins, and one can be read alone") {
  // A pasted session (synthetic): all_reduce_perf's run, then all_gather_perf's.
  const std::string text =
      "$ ./build/all_reduce_perf -b 1M -e 1M -g 2\n"                                  // 1
      "#  Rank  0 Group  0 Pid   1 on h device  0 [0x1b] NVIDIA H100 80GB HBM3\n"   // 2
      "#  Rank  1 Group  0 Pid   1 on h device  1 [0x43] NVIDIA H100 80GB HBM3\n"   // 3
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0\n"
      "# Avg bus bandwidth    : 52.43\n"                                               // 6
      "$ ./build/all_gather_perf -b 1M -e 1M -g 2\n"                                  // 7
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        131072     float    none      -1    15.00   69.91   34.95      0    14.00   74.90   37.45      0\n";
  const auto path = (std::filesystem::temp_directory_path() / "ccsim-two-runs-test.log").string();
  {
    std::ofstream out(path);
    out << text;
  }
  std::istringstream in(text);
  const NcclLog whole = parse_nccl_log(in, path);
  CHECK(whole.run_starts == std::vector<int>{7});  // the second command line, after the first run's rows
  CHECK_THROWS_WITH_AS(read_nccl_log(path), doctest::Contains("the file holds 2 nccl-tests runs (1 from line 1: all_reduce, 1 row; 2 from line 7: all_gather, 1 row)"), Error);
  const NcclLog second = read_nccl_log(path, 2);
  REQUIRE(second.collective.has_value());
  CHECK(*second.collective == CollectiveKind::all_gather);
  REQUIRE(second.rows.size() == 1);
  CHECK(second.rows.front().line == 9);  // numbered as in the file
  CHECK(second.run == 2);
  CHECK(second.runs == 2);
  CHECK(read_nccl_log(path, 1).rows.front().line == 5);
  CHECK_THROWS_WITH_AS(read_nccl_log(path, 3), doctest::Contains("run 3 asked for, but the file holds 2 runs"), Error);
  std::filesystem::remove(path);
  // A command echoed after the only run's rows starts no run of its own.
  std::istringstream echoed(text.substr(0, text.find("     1048576        131072")) );
  CHECK(parse_nccl_log(echoed, "echo.log").run_starts.empty());
}

// --- forms met in logs collected by other tools ---------------------------------------------------

namespace {
// Two rows of an 8-rank all_reduce, each line behind `prefix`.
std::string prefixed_run(const std::string& prefix) {
  const char* const lines[] = {
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
      "#  Rank  0 Group  0 Pid   1234 on b200-node01 device  0 [0000:18:00] NVIDIA B200",
      "b200-node01:1234:1234 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 4.",
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
      "           8             2     float     sum      -1    20.00    0.00    0.00      0    20.00    0.00    0.00      0",
      "          16             4     float     sum      -1    20.00    0.00    0.00      0    20.00    0.00    0.00      0"};
  std::string out;
  for (const char* line : lines) out += prefix + line + "\n";
  return out;
}
}  // namespace

TEST_CASE("nccl log: labels other tools put before every line come off") {
  // MPICH's -l, kubectl logs --prefix, pdsh, a collector's timestamps (two forms, and bracketed
  // with the space inside, as Python's logging writes them).
  for (const std::string prefix : {"[0] ", "[pod/nccl-test-launcher-abcde/nccl-test] ", "b200-node01: ",
                                   "2025-03-04T10:11:12.123456+00:00 ", "2025-03-04 10:11:12,345 ",
                                   "[2025-03-04 10:11:12,345] ", "[2025-03-04 10:11:12] "}) {
    CAPTURE(prefix);
    const NcclLog log = parse(prefixed_run(prefix), "b200-allreduce-1.log");
    CHECK(log.problems.empty());
    CHECK(log.rows.size() == 2);
    CHECK(log.gpu == "NVIDIA B200");
    CHECK(log.nccl_env.at("NCCL_MAX_NCHANNELS") == "4");
  }
  // Only where what follows starts as nccl-tests output does: a line of prose keeps its words.
  const NcclLog prose = parse("Note: the run below is the second one\n" + prefixed_run(""), "b200-allreduce-1.log");
  REQUIRE(prose.problems.size() == 1);
  CHECK(prose.problems[0].text == "Note: the run below is the second one");
}

TEST_CASE("nccl log: NCCL's numeric setting reports end with a period, string ones do not") {
  const NcclLog log = parse(prefixed_run("") + "h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n" +
                                "h:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.\n",
                            "b200-allreduce-1.log");
  CHECK(log.nccl_env.at("NCCL_MAX_NCHANNELS") == "4");
  CHECK(log.nccl_env.at("NCCL_NVLS_ENABLE") == "0");
  CHECK(log.nccl_env.at("NCCL_ALGO") == "Ring");
  CHECK(log.nccl_env_reported.count("NCCL_NVLS_ENABLE") == 1);
}

TEST_CASE("nccl log: exported settings count, under the command's own and NCCL's report") {
  const NcclLog log = parse("export NCCL_ALGO=Tree NCCL_PROTO=Simple\nNCCL_NVLS_ENABLE=0\nexport CUDA_VISIBLE_DEVICES=0,1\n"
                            "NCCL_PROTO=LL128 ./build/all_reduce_perf -b 8 -e 16 -g 8\n" +
                                prefixed_run(""),
                            "b200-allreduce-1.log");
  CHECK(log.problems.empty());
  CHECK(log.nccl_env.at("NCCL_ALGO") == "Tree");
  CHECK(log.nccl_env.at("NCCL_NVLS_ENABLE") == "0");
  CHECK(log.nccl_env.at("NCCL_PROTO") == "LL128");  // the command's own
  CHECK(log.nccl_env.at("NCCL_MAX_NCHANNELS") == "4");
  CHECK(log.nccl_env_exported == std::set<std::string>{"NCCL_ALGO", "NCCL_NVLS_ENABLE"});
  CHECK(log.nccl_env.count("CUDA_VISIBLE_DEVICES") == 0);
}

TEST_CASE("nccl log: cputime columns, untimed placements, failed data checks") {
  SUBCASE("-C 1 heads the time columns cputime: read, and said") {
    std::string text = prefixed_run("");
    for (std::size_t at; (at = text.find("   time ")) != std::string::npos;) text.replace(at, 8, "cputime ");
    const NcclLog log = parse(text, "b200-allreduce-1.log");
    CHECK(log.problems.empty());
    REQUIRE(log.rows.size() == 2);
    CHECK(log.rows[0].in_place->time_us == test::approx(20.0));
    REQUIRE(log.notes.size() == 1);
    CHECK(log.notes[0].find("cputime") != std::string::npos);
  }
  SUBCASE("an in-place side of N/A leaves the out-of-place one; N/A on both is no row") {
    const NcclLog log = parse(R"LOG(#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
           8             2     float     sum      -1    20.00    0.00    0.00      0      N/A     N/A     N/A    N/A
          16             4     float     sum      -1      N/A     N/A     N/A    N/A      N/A     N/A     N/A    N/A
)LOG",
                              "h100-8g-allreduce-1.log");
    REQUIRE(log.rows.size() == 1);
    CHECK(log.rows[0].out_of_place->time_us == test::approx(20.0));
    CHECK_FALSE(log.rows[0].in_place);
    CHECK(problem_lines(log) == std::vector<int>{3});
  }
  SUBCASE("the old layout's error column: a rounding error is a pass, a whole unit a failure") {
    const char* const table = R"LOG(#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
     1048576        262144   float     sum    30.00   34.95   61.17  %s    30.00   34.95   61.17  1e-07
)LOG";
    char passed[512], failed[512];
    std::snprintf(passed, sizeof passed, table, "2e-07");
    std::snprintf(failed, sizeof failed, table, "3e+00");
    CHECK(parse(passed, "v100-8g-allreduce-1.log").notes.empty());
    const NcclLog log = parse(failed, "v100-8g-allreduce-1.log");
    REQUIRE(log.notes.size() == 1);
    CHECK(log.notes[0].starts_with("1 of its rows report wrong results"));
  }
}

TEST_CASE("nccl log: a summary's size labels in thousands, 1024s, KB and KiB are nccl-tests' powers of two") {
  const NcclLog log = parse(R"LOG(| Message Size (Bytes) | ND H200 V5 (GB/s) |
| --- | --- |
| 1 KB | 0.07 |
| 2KiB | 0.14 |
| 33M | 295.53 |
| 536M | 438.46 |
| 3M | 100.0 |
)LOG",
                            "azure-ndh200v5-8g-allreduce-summary-1.log");
  REQUIRE(log.rows.size() == 5);
  CHECK(log.rows[0].size == 1024);
  CHECK(log.rows[1].size == 2048);
  CHECK(log.rows[2].size == Bytes{32} << 20);
  CHECK(log.rows[3].size == Bytes{512} << 20);
  CHECK(log.rows[4].size == Bytes{3} << 20);  // no power of two within 10%: as written
}

TEST_CASE("nccl log: busbw/algbw that fits another collective at the listed ranks says which") {
  // An all_gather table (busbw = 7/8 algbw on 8 ranks) in a file named for all_reduce.
  std::string text;
  for (int r = 0; r < 8; ++r)
    text += "#  Rank  " + std::to_string(r) + " Group  0 Pid   1 on h device  " + std::to_string(r) +
            " [0x1b] NVIDIA H100 80GB HBM3\n";
  text +=
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "   134217728       4194304     float    none      -1   500.00  268.44  234.88      0   500.00  268.44  234.88      0\n";
  const NcclLog log = parse(text, "h100-8g-allreduce-1.log");
  REQUIRE(log.notes.size() == 2);
  CHECK(log.notes[0] == "device lines list 8 ranks but busbw/algbw fits no rank count: at 8 ranks it fits all_gather, "
                        "reduce_scatter or alltoall (--collective names it)");
  // Its count column (4194304 floats of 128 MiB) is a rank's block too.
  CHECK(log.notes[1].starts_with("its count column is 1/8 of each row's size"));
  // A broadcast table (busbw = algbw) under an all_reduce name: the factor-1 collectives.
  std::string bcast = text.substr(0, text.find("   134217728"));
  bcast += "   134217728      33554432     float     sum       0   500.00  268.44  268.44      0   500.00  268.44  268.44      0\n";
  const NcclLog b = parse(bcast, "h100-8g-allreduce-1.log");
  REQUIRE(b.notes.size() == 1);
  CHECK(b.notes[0].ends_with("at 8 ranks it fits broadcast, reduce or sendrecv (--collective names it)"));
}

TEST_CASE("nccl log: a label comes off only before a data row's shape, and exports start the run they precede") {
  // "Nodes: 1" and an MPI notice are text, not a label before a row: warnings, one run.
  const NcclLog log = parse("Nodes: 1\n[a0048:1235813] 7 more processes have sent help message help-mpi-btl-base.txt\n" +
                                prefixed_run(""),
                            "b200-allreduce-1.log");
  CHECK(problem_lines(log) == std::vector<int>{1, 2});
  CHECK(log.rows.size() == 2);
  CHECK(log.run_starts.empty());
  // Two runs, each under its own exports: each run has its own setting.
  const std::string text =
      "export NCCL_ALGO=Ring\n"
      "./build/all_reduce_perf -b 1M -e 1M -g 8\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n"
      "export NCCL_ALGO=Tree\n"
      "./build/all_reduce_perf -b 1M -e 1M -g 8\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n";
  const NcclLog whole = parse(text, "two.log");
  CHECK(whole.run_starts == std::vector<int>{5});  // at the export above the second command
  const auto path = (std::filesystem::temp_directory_path() / "ccsim-two-exports.log").string();
  std::ofstream(path) << text;
  CHECK(read_nccl_log(path, 1).nccl_env.at("NCCL_ALGO") == "Ring");
  CHECK(read_nccl_log(path, 2).nccl_env.at("NCCL_ALGO") == "Tree");
  std::filesystem::remove(path);
}

TEST_CASE("nccl log: a summary table's collective from the prose above it, where it names one") {
  const std::string table = "| Message Size (Bytes) | ND H200 V5 (GB/s) |\n| --- | --- |\n| 1K | 0.07 |\n";
  const NcclLog log = parse("The values are bus bandwidths of the NCCL AllReduce (NVLS algorithm) tests.\n" + table, "azure-summary.log");
  REQUIRE(log.collective.has_value());
  CHECK(*log.collective == CollectiveKind::all_reduce);
  CHECK(log.collective_source == "summary's text");
  // Prose naming two collectives decides nothing.
  CHECK_FALSE(parse("AllReduce and AllGather results.\n" + table, "azure-summary.log").collective.has_value());
}

TEST_CASE("nccl log: one host written short and fully qualified is one host, an IP address is not shortened") {
  std::string text;
  for (int r = 0; r < 4; ++r)
    text += "#  Rank  " + std::to_string(r) + " Group  0 Pid   1 on " + (r % 2 ? "node01.cluster.local" : "node01") +
            " device  " + std::to_string(r) + " [0x1b] NVIDIA H100 80GB HBM3\n";
  text += "#  Rank  4 Group  0 Pid   1 on 10.0.0.1 device  0 [0x1b] NVIDIA H100 80GB HBM3\n"
          "#  Rank  5 Group  0 Pid   1 on 10.0.0.2 device  0 [0x1b] NVIDIA H100 80GB HBM3\n";
  text += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
          "           8             2     float     sum      -1    20.00    0.00    0.00      0    20.00    0.00    0.00      0\n";
  const NcclLog log = parse(text, "h100-6g-allreduce-1.log");
  CHECK(log.hosts == std::vector<std::string>{"node01", "10.0.0.1", "10.0.0.2"});
}

TEST_CASE("nccl log: a run whose large sizes repeat says so") {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  const std::string rows =
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n"
      "     2097152        524288     float     sum      -1    30.00   69.91  122.34      0    30.00   69.91  122.34      0\n";
  const NcclLog twice = parse(header + rows + header + rows, "h100-8g-allreduce-1.log");
  CHECK(twice.rows.size() == 4);
  CHECK(twice.notes == std::vector<std::string>{"2 of its rows repeat a size an earlier row has (nccl-tests -N, or two "
                                                "tables in one run): each is compared"});
  // Small sizes repeat in any sweep (nccl-tests rounds to whole elements per rank): nothing said.
  const std::string small = "           0             0     float     sum      -1     5.00    0.00    0.00      0     5.00    0.00    0.00      0\n";
  CHECK(parse(header + small + small + rows, "h100-8g-allreduce-1.log").notes.empty());
}
