#pragma once
// The words of one line of an nccl-tests log as the parser (nccl_log.cpp) takes them apart: its
// tokens and numbers, the labels launchers, collectors and web pages put before it, the command
// lines and NCCL settings in it, and what the dataset's file names say. Kept apart from the parser,
// which decides what the lines mean together.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/collective.hpp"

namespace ccsim::log_words {

using Tokens = std::vector<std::string_view>;

// --- characters and tokens ---
bool is_space(char c);
bool is_letter(char c);
Tokens split(std::string_view s);
bool all_digits(std::string_view s);

// --- numbers ---
std::optional<std::uint64_t> parse_unsigned(std::string_view s);
std::optional<long long> parse_integer(std::string_view s);
// nan and inf parse too; no measurement is either.
std::optional<double> parse_real(std::string_view s);
// Half a unit in the last printed digit: how far the true value can be from what was printed.
double half_ulp(std::string_view printed);

// --- names and file names ---
std::optional<CollectiveKind> collective_named(std::string_view name);
// The dataset names files `<system>-<gpus>g-<collective>-<n>.log`; the collective is the last
// dash-separated word that names one.
std::optional<CollectiveKind> collective_from_file_name(std::string_view origin);
// The nodes and ranks of a multi-node run's <nodes>n<ranks>g word (...-2n16g-...: 2 and 16).
std::optional<std::pair<int, int>> layout_from_file_name(std::string_view origin);
// The ranks of the file name's <ranks>g word, the last of them (rtx5090-pcie-4g-allreduce-1.log: 4;
// a100-sxm4-40g-8g: 8; 2n16g: 16).
std::optional<int> ranks_in_file_name(std::string_view origin);

// --- command lines ---
// nccl-tests binaries are <collective>_perf, or <collective>_perf_mpi in some builds; a token may
// carry a path, quotes, or sit in an assignment (EXEC_CMD=/opt/nccl-tests/bin/all_reduce_perf).
std::optional<std::string_view> perf_binary(std::string_view token);
bool is_assignment(std::string_view token);
// NCCL_NAME=value settings anywhere in a command: as a word of their own or after a comma (srun's
// --export lists) or an '=' (--export=NCCL_...), values without their quotes.
std::map<std::string, std::string> nccl_settings(std::string_view command);
// The program a command runs: its first word after VAR=value assignments.
std::string_view program_of(std::string_view command);
bool is_launcher(std::string_view program);
// "$ cmd", "user@host:~/dir$ cmd", "root@host:/dir# cmd" and "[root@host dir]# cmd".
std::optional<std::string_view> after_shell_prompt(std::string_view line);

// --- what comes before a line ---
// Labels tools put before every line of a job's output: MPICH's "[0] ", kubectl's "[pod/x/c] ",
// pdsh's "host: ", a collector's timestamp. A timestamp, which no line of nccl-tests' own begins
// with, comes off whatever follows (a command line too); the others only where what follows
// starts as nccl-tests output does, so no text of the log's own is lost. srun's and OpenMPI's rank
// labels ("0: ", "[1,0]<stdout>:") always come off.
std::string_view strip_line_prefix(std::string_view line);
// A log copied out of a web page may keep the page's markup and typography: "[1,0]&lt;stdout&gt;:",
// "&nbsp;", no-break or thin spaces between the columns, a root of "−1" with a minus sign (U+2212),
// zero-width spaces. nccl-tests prints neither '&' nor non-ASCII bytes, so these are read back as
// the text they stand for. True where the line changed.
bool unescape_web_text(std::string& line);

}  // namespace ccsim::log_words
