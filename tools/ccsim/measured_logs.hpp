#pragma once
// Measured nccl-tests logs as ccsim simulates them: which machine each describes (the map file),
// and each row turned into the collective call it timed. Shared by `accuracy` and `calibrate`.
#include <optional>
#include <string>
#include <vector>

#include "ccsim/planner.hpp"
#include "ccsim/topology_args.hpp"
#include "sim/error.hpp"
#include "sim/model.hpp"
#include "sim/nccl_log.hpp"
#include "sim/nccl_tuning.hpp"
#include "sim/topology/topology.hpp"

namespace ccsim::cli {

struct LogCase {
  std::string log;  // path
  TopologyArgs topology;
  std::string system_class;  // e.g. "8-GPU NVSwitch H100"
  std::string set = "fit";   // fit | holdout: logs kept aside while the model's parameters were chosen
  bool healthy = true;
  bool slow = false;  // minutes per size (e.g. 72-GPU NVLS): skipped by a plain --map run
  std::string algorithm = "auto";  // what the run forced (NCCL_ALGO / NCCL_PROTO), as its log states
  std::string protocol = "auto";
  // GPUs one host thread drives (nccl-tests -g), for logs that state it nowhere (summary tables):
  // the source's command line, as the map cites it. A log that states it too must agree.
  std::optional<int> gpus_per_thread;
  // The built-in timing model of the system's NCCL where it differs from its GPU family's (e.g.
  // "ampere-nccl2.8"); empty: the family's.
  std::string model;
  // The NCCL release the source states where the log does not (summary tables): its cost model
  // decides `auto` (nccl::System::release); empty: the log's own, else 2.30's.
  std::string nccl;
  std::string note;
  // The collective the run measured, as the command line names it (--collective), for logs that
  // do not say (no nccl-tests command, banner or telling file name); empty: the log's own.
  std::string collective;
  // Of a file holding several nccl-tests runs, the one to compare (1-based; --run, a map entry's
  // "run"); empty: the file must hold one.
  std::optional<int> run;
  // The command's NCCL channel settings (--nccl-env), over the log's own.
  nccl::EnvSettings nccl_env_settings;
  // The map entry the case comes from ("map.json: logs[3]"), where an error about its machine
  // should point; empty for a LOG on the command line.
  std::string map_entry;
};

// A log named on the command line: the machine and the algorithm/protocol the run used are the
// command's options; its class is the topology's name.
LogCase log_case(const std::string& log, const TopologyArgs& topology, const std::string& algorithm,
                 const std::string& protocol);
// The command line's --algo and --proto, where it names them, over a map entry's run (a what-if
// for every entry, as overlay_given is for the machine); returns what it applied ("" if neither).
std::string overlay_run_choice(const CLI::App& cmd, const std::string& algorithm, const std::string& protocol,
                               LogCase& entry);
// Refuses --only and --all when no --map names entries for them to pick (they would do nothing).
void refuse_map_choices_without_map(const CLI::App& cmd);

// The --algo and --proto options of a command that simulates logs (accuracy, calibrate).
void add_run_choice_options(CLI::App* cmd, std::string& algorithm, std::string& protocol);
// Their --collective and --run options, for the LOG files they name.
void add_collective_option(CLI::App* cmd, std::string& collective, std::string& run);
// The LOG files a command names, each with its machine, run choice and --collective (refused when
// it names none: a --map entry's log says its collective itself).
std::vector<LogCase> command_line_cases(const CLI::App& cmd, const std::vector<std::string>& logs,
                                        const TopologyArgs& topology, const std::string& algorithm,
                                        const std::string& protocol, const std::string& collective,
                                        const std::string& run);

// Entries of a map file (tests/data/measured-map.json); errors name the file and JSON path.
std::vector<LogCase> read_map(const std::string& file);
// The error for `--only TEXT` when no entry of the map FILE names a log whose path contains TEXT.
Error only_names_nothing(const std::string& only, const std::string& file);

struct MeasuredTime {
  double us = 0;
  bool in_place = false;  // the column it was read from (the chosen one, or the only one the log has)
};
// Measured time of a row, from the chosen column; summary tables carry only busbw.
std::optional<MeasuredTime> measured_time(const MeasuredRow& row, const std::string& column, CollectiveKind kind, int ranks);

struct MeasuredCall {
  CollectiveSpec spec;
  Bytes size = 0;
  double measured_us = 0;
  bool in_place = false;  // measured in place: simulate the steps an in-place call runs
};

// A log read and matched to its machine: problem lines are printed as warnings; a log whose rank
// count the topology cannot hold is an error.
struct PreparedLog {
  LogCase c;
  NcclLog log;
  topo::Topology topology;
  // What the log's device lines decided of the machine (the preset, its nodes, GPUs per node) where
  // the command or map did not; empty when they decided nothing.
  std::string machine_from_log;
  // The NCCL settings of the log's command line, or of NCCL's own report of them in its debug
  // output, that the run follows (NCCL_ALGO, NCCL_PROTO, NCCL_NET_GDR_LEVEL, NCCL_P2P_LEVEL,
  // NCCL_P2P_DISABLE) where the command or map did not set them, and those it cannot follow.
  std::string from_command;
  bool from_report = false;  // some of from_command's settings are NCCL's report, not the command's
  // The NCCL settings the run follows (channels, NVLS, NCCL_ALGO / NCCL_PROTO): the command's, and
  // the log's that the command did not set.
  nccl::EnvSettings nccl_env_settings;
  int ranks = 0;
  int gpus_per_thread = 1;  // the log's (nccl-tests -g); 1 when it does not say
  int threads = 1;  // the log's host threads a process (nccl-tests -t); 1 when it does not say
  int iters = kNcclTestsIters;  // the log's timed calls (nccl-tests -n); nccl-tests' default when it does not say
  int graph_launches = 0;  // the log's CUDA-graph launches (nccl-tests -G), which ccsim does not model; 0: none
  int agg_iters = 1;  // calls the log groups per timed iteration (nccl-tests -m), which ccsim does not model
  int registration = 0;  // buffer registration the command asks for (nccl-tests -R), which ccsim does not model
  std::vector<MeasuredCall> calls;  // rows inside [min_size, max_size] with a time
  // How far the run's two columns disagree inside [min_size, max_size]. nccl-tests times the same
  // collective out of place and in place back to back, so a steady run gives about the same time
  // in both (the shared logs' median row: 1%); where one is over kNoisyColumns x the other, the
  // run's own repeatability, not the model, bounds how close any simulation can come.
  struct ColumnAgreement {
    int rows = 0;        // rows with a time in both columns
    int disagree = 0;    // of them, rows whose columns differ by more than kNoisyColumns x
    double ratio = 1;    // the largest ratio, slower column over faster
    Bytes at = 0;        // ... and its size
    double out_of_place_us = 0, in_place_us = 0;  // ... and its times
  } column_agreement;
};
// The ratio of a row's two times past which the run is too noisy to score tightly.
inline constexpr double kNoisyColumns = 1.5;
PreparedLog prepare_log(const LogCase& c, const std::string& column, Bytes min_size, Bytes max_size);

// The built-in model a log's system runs under unless the command names one: the map's model for
// its NCCL, else the one for the NCCL release the log states (Model::builtin_name_for), else its
// GPU family's.
std::string default_model_name(const PreparedLog& p);
// The NCCL release a log's model follows: the one it states, else, for a table in nccl-tests' old
// layout (a maximum "error" column, not "#wrong"), "2.8" for its era; empty when neither says.
std::string model_release(const PreparedLog& p);
// The NCCL release (2.x minor) whose cost model decides for the log: the map's, else the log's; 0:
// neither states one (2.30's then).
int nccl_release(const PreparedLog& p);

}  // namespace ccsim::cli
