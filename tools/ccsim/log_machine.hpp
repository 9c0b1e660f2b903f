#pragma once
// What a measured log says of the machine and the settings it ran under: the preset its GPUs come in
// (from its device lines, else its file name), its nodes and GPUs per node, its network (NCCL's INFO
// lines, the command's NCCL_IB_HCA, the file name's "roce"/"efa"/"gib"), and the NCCL settings of its
// command line. What the command or the map names always wins; what is taken from the log is said in
// the output's header (PreparedLog::machine_from_log, from_command).
#include "ccsim/measured_logs.hpp"

namespace ccsim::cli {

// The command line's NCCL_ALGO, NCCL_PROTO, NCCL_NET_GDR_LEVEL, NCCL_P2P_LEVEL and NCCL_P2P_DISABLE
// where the map or the command did not choose: the run measured what they forced.
void apply_command_settings(PreparedLog& p);

// Sets p.topology (and p.c.topology, the options that built it) from the case's machine and what
// the log says; errors name what to pass where the log does not tell.
void decide_machine(PreparedLog& p);

// A summary table of Azure's benchmarking guide, whose VM size names the machine.
bool is_azure_summary(const NcclLog& log);

}  // namespace ccsim::cli
