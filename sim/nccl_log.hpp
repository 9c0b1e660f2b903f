#pragma once
// Reads nccl-tests output (the tables of all_reduce_perf and friends) the way it gets published:
// raw logs, logs behind srun or OpenMPI rank labels, copies that lost their '#' or were indented
// by markdown, the old (2019-2021) layout without a root column, and busbw-only markdown summaries.
// A line it cannot place is reported with its number instead of being dropped, so that a new
// format shows up as a problem rather than as quietly thinner data.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/collective.hpp"
#include "sim/units.hpp"

namespace ccsim {

// One placement (out-of-place or in-place) of one row.
struct MeasuredPoint {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::optional<long long> wrong;   // "#wrong" of current nccl-tests; empty when "N/A"
  std::optional<double> max_error;  // "error" of the old layout (e.g. 1e-07); empty when "N/A"
  bool has_time = true;             // false in summary tables, which give busbw only (time, algbw are 0)
};

struct MeasuredRow {
  int line = 0;  // 1-based, in the log
  Bytes size = 0;  // nccl-tests' zero-byte rows are kept, with size 0
  // Summary tables round sizes in decimal ("65K" for 65536, "134M" for 134217728); size is then
  // the label read with nccl-tests' 1024-based suffixes, a few percent off (134M reads 140509184).
  bool size_approximate = false;
  std::uint64_t count = 0;
  std::string type;   // "float", ...; empty in summary tables
  std::string redop;  // "sum", "none", ...; empty where the log printed none (old all_gather, alltoall)
  std::optional<int> root;  // as printed (-1: rootless collective); empty when the layout has no root column
  std::optional<MeasuredPoint> out_of_place, in_place;
};

struct LogProblem {
  int line = 0;       // 1-based
  std::string text;   // the line as read
  std::string why;
};

struct NcclLog {
  std::string origin;  // path or name, for messages
  // From the command line (xxx_perf), else nccl-tests' "Collective test starting: xxx_perf" banner,
  // else the file name (`<system>-8g-allreduce-1.log`).
  std::optional<CollectiveKind> collective;
  std::string collective_source;  // "command" | "test banner" | "file name" | ""
  // From the "#  Rank N ... device N [bus] GPU" lines when they list ranks 0..N-1 (ranks_source
  // "device lines"); when they list only some ranks, the highest one + 1 ("highest device rank")
  // unless busbw/algbw or the count column (below) proves a larger count; without device lines, the only rank count whose
  // busbw factor reproduces busbw from algbw, within print rounding, on every point with
  // algbw >= 1 GB/s ("busbw/algbw ratio"). Empty when none of these decides it.
  std::optional<int> ranks;
  // Without device lines and where the ratio leaves several counts: for all_gather, reduce_scatter
  // and alltoall size / (count x element size) ("count column"), else the file name's <ranks>g word
  // ("file name"), else the header's nThread x nGpus when above 1 ("header's nThread x nGpus, one
  // process"), if the ratio allows it.
  std::string ranks_source;  // "device lines" | "highest device rank" | "busbw/algbw ratio" | "count column" | "file name" | "header's ..." | ""
  std::string gpu;           // from the device lines, e.g. "NVIDIA H100 80GB HBM3"; distinct models joined by ", "
  // Hosts of the device lines ("... on <host> device ..."), in the order first listed, and the
  // ranks each lists when every host lists the same number and the lines cover every rank:
  // the run's nodes and GPUs per node.
  std::vector<std::string> hosts;
  std::optional<int> ranks_per_host;
  // The nodes and ranks of the file name's <nodes>n<ranks>g word, as the shared dataset names
  // multi-node runs ("...-2n16g-all_reduce-1.log"); empty without one. The machine's shape where
  // the device lines name no hosts.
  std::optional<int> file_nodes, file_ranks;
  std::string command;       // the command line, shell prompt removed and continuation lines joined
  // NCCL_* variables the command line sets, in any of the forms launchers pass them: "NCCL_X=v cmd",
  // mpirun's "-x NCCL_X=v", srun's "--export=ALL,NCCL_X=v,OTHER=w", docker's "-e NCCL_X=v" (quotes
  // removed; a value may be a list, "Ring,Tree"; the last setting of a name wins). NCCL's own debug
  // output ("NCCL INFO NCCL_ALGO set by environment to Ring") says what NCCL read, whatever launched
  // it: such a report wins over the command line, and its names are in nccl_env_reported. Shell
  // lines apart from the command ("export NCCL_X=v", a line of assignments as `env` lists them)
  // count too, under the command's own; their names are in nccl_env_exported.
  std::map<std::string, std::string> nccl_env;
  std::set<std::string> nccl_env_reported;
  std::set<std::string> nccl_env_exported;
  // Lines of NCCL's own debug output (NCCL_DEBUG: "host:pid:tid [dev] NCCL INFO|WARN|TRACE ..."):
  // recognised, so not problems, and read only for the release and the settings NCCL reports. Its
  // WARN lines are kept, as they may say why a run measured what it did.
  int nccl_debug_lines = 0;
  std::vector<LogProblem> nccl_warnings;
  // GPUs one host thread drives (nccl-tests -g): from the "nThread T nGpus G" header, else the
  // command's -g/--ngpus. One thread issues each call to its G GPUs in turn, so the host's issue
  // time can be what the run measures (Model::host_issue_s). Empty when the log says neither.
  std::optional<int> gpus_per_thread;
  std::string gpus_per_thread_source;  // "header" | "command" | ""
  // Host threads of each process (nccl-tests -t): the header's nThread, else the command's
  // -t/--nthreads. A process's threads drive its GPUs as ranks of one process, so NCCL connects
  // them by direct pointers (EngineOptions::ranks_per_process). Empty when the log says neither.
  std::optional<int> threads;
  // Calls in nccl-tests' timed loop (-n): from the header's "iters: N", else the command's -n/--iters.
  // The loop starts idle, so one call's fill and drain is spread over them (Timeline::per_call_s).
  std::optional<int> iters;
  std::string iters_source;  // "header" | "command" | ""
  // CUDA-graph launches of the timed loop (nccl-tests -G): the header's "graph: N", else the
  // command's -G/--cudagraph. Empty or 0: calls launched one by one.
  std::optional<int> graph_launches;
  // Calls each timed iteration aggregates in one NCCL group (nccl-tests -m): the header's "agg
  // iters: N", else the command's -m/--agg_iters. Empty or 1: one call per iteration.
  std::optional<int> agg_iters;
  // Buffer registration the command asks for (nccl-tests -R: 1 local, 2 symmetric, under which NCCL
  // 2.27+ may run its symmetric-memory kernels). Empty: none (the header does not say).
  std::optional<int> registration;
  bool summary_table = false;  // a markdown size | busbw table, not raw output
  // The system the summary table's busbw column names ("ND H100 V5" of "| ND H100 V5 (GB/s) |").
  std::string summary_system;
  // The table's check column is nccl-tests' old maximum error ("error"), which its releases of the
  // NCCL 2.9 era and before printed, not the later count of wrong elements ("#wrong").
  bool error_column = false;
  // What NCCL's INFO lines say of its network: the link layers of the NICs its "NET/IB : Using
  // [0]mlx5_0:1/RoCE ..." lines list ("IB", "RoCE"), and the network its "Using network X" line
  // names ("IB", "Socket", "AWS Libfabric", ...). Empty: the log does not say.
  std::set<std::string> net_link_layers;
  std::string nccl_network;
  // The transports NCCL's INFO lines say it connected peers by ("... 0[0] -> 1[1] via P2P/CUMEM"):
  // "P2P", "SHM", "NET", ... Empty: the log does not say.
  std::set<std::string> peer_transports;
  // The NCCL release that ran ("2.26.6"): NCCL's "NCCL version" line, else nccl-tests'
  // "nccl-library=" code; empty when the log says neither.
  std::string nccl_version;
  std::vector<MeasuredRow> rows;
  // Every non-empty line that is neither a data row nor recognised output around it (comments,
  // nccl-tests' headers and footers with or without '#', device lines, the command and shell lines).
  std::vector<LogProblem> problems;
  // The lines where a second, third, ... run begins, in a file holding several (each its command
  // line or nccl-tests header after the rows of the one before); empty for a file of one run.
  std::vector<int> run_starts;
  // The run read_nccl_log picked (1-based) of the file's `runs`; 0 where the file holds one.
  int run = 0, runs = 1;
  std::optional<double> avg_busbw_gbps;    // "# Avg bus bandwidth : X"
  std::optional<long long> out_of_bounds;  // "# Out of bounds values : N OK"
  // Doubts about the log as a whole, one sentence each: sources of the collective or of the rank
  // count that disagree (a device line pasted from another run, a mislabelled file).
  std::vector<std::string> notes;
};

// The file name's layout word as the dataset writes it ("2n16g"); empty when it has none.
std::string file_layout_word(const NcclLog& log);

// Lines outside [first_line, end_line) are passed over (numbers count every line): one run of a
// file that holds several.
NcclLog parse_nccl_log(std::istream& in, const std::string& origin, int first_line = 1, int end_line = 0);
// Throws Error "<path>: cannot open file". Of a file holding several runs, `run` (1-based) picks
// one; without it, such a file is an error naming them (one run's rows are not another's).
NcclLog read_nccl_log(const std::string& path, std::optional<int> run = std::nullopt);

}  // namespace ccsim
