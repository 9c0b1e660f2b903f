#include "sim/nccl_log.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <istream>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include "sim/datatype.hpp"
#include "sim/error.hpp"
#include "sim/nccl_log_inference.hpp"
#include "sim/nccl_log_words.hpp"
#include "sim/text.hpp"
#include "sim/text_file.hpp"

namespace ccsim {

namespace {

using namespace log_words;

// --- nccl-tests lines --------------------------------------------------------------------------

// What the column header says about the rows under it.
enum class CheckColumn { unknown, wrong, error };
struct Layout {
  bool known = false;
  bool root = false;  // new layout, and old broadcast/reduce
  CheckColumn check = CheckColumn::unknown;
  int placements = 2;
  // Columns the header names after the last check column, which every row carries too: ccsim perf's
  // "algorithm proto ch".
  int trailing = 0;
  bool cputime = false;
  // nccl-tests' first layout ("bytes N type op time algbw busbw res", its releases of the NCCL
  // 2.0-2.4 era) printed times in milliseconds, with no units line; "size count type" came with
  // microseconds and the "(us)" line.
  bool milliseconds = false;
};

std::optional<Layout> column_header(const Tokens& t) {
  if (t.size() < 4 || t[2] != "type") return std::nullopt;
  const bool first_layout = t[0] == "bytes" && t[1] == "N";
  if (!first_layout && (t[0] != "size" || t[1] != "count")) return std::nullopt;
  Layout layout;
  layout.known = true;
  layout.milliseconds = first_layout;
  layout.root = std::find(t.begin(), t.end(), "root") != t.end();
  // nccl-tests -C 1 heads its time columns "cputime": the host's time per call, not the GPUs'.
  layout.cputime = std::find(t.begin(), t.end(), "cputime") != t.end();
  layout.placements = std::max<int>(1, static_cast<int>(std::count(t.begin(), t.end(), "time") +
                                                         std::count(t.begin(), t.end(), "cputime")));
  for (std::size_t k = 0; k < t.size(); ++k) {
    const bool wrong = t[k] == "#wrong" || t[k] == "wrong";
    if (wrong) layout.check = CheckColumn::wrong;
    // The first layout's "res" (earlier still "delta") is the same maximum difference as the later "error".
    const bool error = t[k] == "error" || (first_layout && (t[k] == "res" || t[k] == "delta"));
    if (error) layout.check = CheckColumn::error;
    if (wrong || error) layout.trailing = static_cast<int>(t.size() - k - 1);
  }
  return layout;
}

// "out-of-place   in-place" above the column header.
bool placement_banner(const Tokens& t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](std::string_view w) {
    return w == "out-of-place" || w == "in-place";
  });
}

struct DeviceLine {
  int rank = 0;
  std::string host;  // empty when the line names none
  std::string model;
};

// "Rank  3 Group  0 Pid 1234 on host device  3 [0x57] NVIDIA H100 80GB HBM3"; old nccl-tests
// printed no Group.
std::optional<DeviceLine> device_line(std::string_view body, const Tokens& t) {
  if (t.size() < 2 || t[0] != "Rank") return std::nullopt;
  const auto rank = parse_unsigned(t[1]);
  const auto device = std::find(t.begin(), t.end(), "device");
  if (!rank || *rank > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return std::nullopt;
  if (device == t.end() || t.end() - device < 3) return std::nullopt;
  const std::string_view bus = device[2];
  if (!parse_unsigned(device[1]) || !bus.starts_with('[') || !bus.ends_with(']')) return std::nullopt;
  const std::size_t model_at = static_cast<std::size_t>(bus.data() + bus.size() - body.data());
  const auto on = std::find(t.begin(), device, "on");
  std::string host = on != device && on + 2 == device ? std::string(on[1]) : std::string();
  std::string_view model = trim(body.substr(model_at));
  // A write-up's note after the name ("NVIDIA B200 (node 1)", where the lines name no host) is not
  // part of the GPU's name, which NVIDIA writes without parentheses; "(node N)" names the host.
  if (const auto open = model.rfind(" ("); open != std::string_view::npos && model.ends_with(')')) {
    const std::string_view note = model.substr(open + 2, model.size() - open - 3);
    if (host.empty() && note.starts_with("node ")) host = std::string(note);
    model = trim(model.substr(0, open));
  }
  return DeviceLine{static_cast<int>(*rank), host, std::string(model)};
}

// "2.26.6": digits, dot, digits, dot, digits; "2.3" too where the patch may be left out.
bool release_version(std::string_view v, bool patch_optional = false) {
  const auto a = v.find('.');
  if (a == std::string_view::npos) return false;
  const auto b = v.find('.', a + 1);
  if (b == std::string_view::npos) return patch_optional && all_digits(v.substr(0, a)) && all_digits(v.substr(a + 1));
  return all_digits(v.substr(0, a)) && all_digits(v.substr(a + 1, b - a - 1)) && all_digits(v.substr(b + 1));
}

// NCCL_VERSION_CODE as a release: X*10000 + Y*100 + Z from 2.9, X*1000 + Y*100 + Z before.
std::string version_of_code(std::uint64_t code) {
  const bool wide = code >= 10000;
  const std::uint64_t major = wide ? code / 10000 : code / 1000, minor = (wide ? code % 10000 : code % 1000) / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

// Lines nccl-tests (or NCCL, for its version) prints around the table that carry nothing we keep;
// they are recognised without their '#' too, as copies often lose it.
bool known_chatter(std::string_view body) {
  static constexpr std::string_view kPrefixes[] = {"nThread ", "Using devices", "nccl-tests version",
                                                    "Collective test concluded:", "NCCL version ",
                                                    "Reducing maxBytes", "(B)"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view p) { return body.starts_with(p); });
}

// The text after the colon of "Avg bus bandwidth    : 156.742".
std::string_view after_colon(std::string_view body) {
  const auto colon = body.find(':');
  return colon == std::string_view::npos ? std::string_view{} : trim(body.substr(colon + 1));
}

// --- data rows ---------------------------------------------------------------------------------

// Why a row that starts like a data row is not one.
struct RowError {
  std::string why;
};

double metric(std::string_view token, const char* column) {
  const auto value = parse_real(token);
  if (!value) throw RowError{std::string(column) + " \"" + std::string(token) + "\" is not a number"};
  if (*value < 0) throw RowError{std::string(column) + " " + std::string(token) + " is negative"};
  return *value;
}

// The last column of a placement: "#wrong" (a count) in current nccl-tests, "error" (a max
// difference like 1e-07) in the old layout; either may be N/A when validation is off.
void read_check(std::string_view token, CheckColumn check, MeasuredPoint& point) {
  if (token == "N/A") return;
  const bool as_count = check == CheckColumn::wrong || (check == CheckColumn::unknown && parse_integer(token));
  if (as_count) {
    point.wrong = parse_integer(token);
    if (!point.wrong || *point.wrong < 0)
      throw RowError{"#wrong \"" + std::string(token) + "\" is not a count"};
    return;
  }
  point.max_error = parse_real(token);
  if (!point.max_error) throw RowError{"error \"" + std::string(token) + "\" is not a number"};
}

// --- the parser --------------------------------------------------------------------------------

class LogParser {
 public:
  explicit LogParser(const std::string& origin) { log_.origin = origin; }

  void take(int number, std::string_view raw) {
    const std::string_view body = trim(strip_line_prefix(raw));
    if (body.empty() && continuing_) finish_command();
    if (body.empty()) return;
    take_text(number, raw, body);
    previous_line_ = number;
  }

 private:
  void take_text(int number, std::string_view raw, std::string_view body) {
    const Tokens tokens = split(body);
    // A command left open by a trailing backslash must not swallow the table that follows.
    if (continuing_ && (body.front() == '#' || all_digits(tokens.front()))) finish_command();
    if (continuing_) return add_command_part(body);
    if (body.front() == '#') return take_comment(number, raw, body);
    if (body.front() == '|') return take_markdown(number, raw, body);
    if (all_digits(tokens.front())) return take_data_row(number, raw, tokens);
    if (take_nccl_line(number, raw, body, tokens)) return;
    if (take_nccl_debug(number, raw, body, tokens)) return;
    if (take_command(number, body, false)) return;
    if (take_environment(number, body, tokens)) return;
    problem(number, raw, "not nccl-tests output, a data row or a command line");
  }

 public:
  NcclLog finish() {
    if (continuing_) finish_command();
    // A command line or header after the last rows, with none of its own (an echo of the command
    // at the end, a run that printed nothing): no run of its own.
    if (!log_.run_starts.empty() && data_lines_ == data_lines_at_run_start_) log_.run_starts.pop_back();
    if (!log_.gpus_per_thread) {
      if (const auto g = command_option(log_.command, "-g", "--ngpus", 1024, false)) {
        log_.gpus_per_thread = *g;
        log_.gpus_per_thread_source = "command";
      }
    }
    // After the binary only: srun's -t is a time limit.
    if (!log_.threads) log_.threads = command_option(log_.command, "-t", "--nthreads", 1024, true);
    if (!log_.iters) {
      if (const auto n = command_option(log_.command, "-n", "--iters", 1u << 30, true)) {
        log_.iters = *n;
        log_.iters_source = "command";
      }
    }
    if (!log_.graph_launches) log_.graph_launches = command_option(log_.command, "-G", "--cudagraph", 1u << 30, true);
    if (!log_.agg_iters) log_.agg_iters = command_option(log_.command, "-m", "--agg_iters", 1u << 30, true);
    log_.registration = command_option(log_.command, "-R", "--local_register", 2, true);
    log_.nccl_version = !banner_version_.empty() ? banner_version_ : !library_version_.empty() ? library_version_ : headers_version_;
    log_.nccl_env = exported_env_;
    for (const auto& [name, value] : exported_env_) log_.nccl_env_exported.insert(name);
    for (const auto& [name, value] : nccl_settings(log_.command)) {
      log_.nccl_env[name] = value;
      log_.nccl_env_exported.erase(name);
    }
    for (const auto& [name, value] : reported_env_) {
      log_.nccl_env[name] = value;
      log_.nccl_env_reported.insert(name);
      log_.nccl_env_exported.erase(name);
    }
    log_inference::decide(log_, evidence_);
    for (const auto& model : gpus_) log_.gpu += (log_.gpu.empty() ? "" : ", ") + model;
    return std::move(log_);
  }

 private:
  void problem(int number, std::string_view raw, std::string why) {
    log_.problems.push_back({number, printable(raw), std::move(why)});
  }

  // A line as a warning may show it: control bytes (a binary file's) as \xNN, not sent to the terminal.
  static std::string printable(std::string_view raw) {
    std::string out;
    for (const char ch : raw) {
      const auto c = static_cast<unsigned char>(ch);
      if (c >= 0x20 && c != 0x7f) {
        out += ch;
      } else if (ch == '\t') {
        out += ' ';
      } else {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
    return out;
  }

  // Comments are never problems; the ones nccl-tests writes still carry the layout, the devices,
  // the footer and sometimes the command.
  void take_comment(int number, std::string_view raw, std::string_view body) {
    while (!body.empty() && body.front() == '#') body.remove_prefix(1);
    body = trim(body);
    if (body.empty()) return;
    const Tokens tokens = split(body);
    if (take_commented_row(number, tokens)) return;
    if (!take_nccl_line(number, raw, body, tokens)) take_command(number, body, true);
  }

  // A data row behind '#', under a column header: a copy that commented the table out (pasted into
  // a shell script). Read where it has a row's shape; otherwise it stays a comment.
  bool take_commented_row(int number, const Tokens& tokens) {
    if (!layout_.known || tokens.size() < 7 || !all_digits(tokens.front())) return false;
    try {
      add_row(data_row(number, tokens));
    } catch (const RowError&) {
      return false;
    }
    ++data_lines_;
    if (!said_commented_rows_) {
      said_commented_rows_ = true;
      log_.notes.push_back("its data rows are commented out ('#' before each, from line " + std::to_string(number) +
                           "): read as rows");
    }
    return true;
  }

  bool take_nccl_line(int number, std::string_view raw, std::string_view body, const Tokens& tokens) {
    if (const auto layout = column_header(tokens)) {
      layout_ = *layout;
      log_.error_column = log_.error_column || layout_.check == CheckColumn::error;
      if (layout_.cputime && !said_cputime_) {
        said_cputime_ = true;
        log_.notes.push_back("its times are the host's (\"cputime\", nccl-tests -C 1): what a call costs the "
                             "calling thread, compared here with the simulated GPU time");
      }
      return true;
    }
    if (placement_banner(tokens)) {
      in_place_only_ = std::find(tokens.begin(), tokens.end(), "out-of-place") == tokens.end();
      return true;
    }
    if (const auto device = device_line(body, tokens)) {
      evidence_.device_ranks.insert(device->rank);
      if (!device->host.empty()) {
        auto& ranks = evidence_.host_ranks[device->host];
        if (ranks.empty()) log_.hosts.push_back(device->host);
        ranks.insert(device->rank);
      }
      if (std::find(gpus_.begin(), gpus_.end(), device->model) == gpus_.end()) gpus_.push_back(device->model);
      return true;
    }
    if (body.starts_with("Avg bus bandwidth")) {
      const auto words = split(after_colon(body));
      log_.avg_busbw_gbps = words.empty() ? std::nullopt : parse_real(words.front());
      if (!log_.avg_busbw_gbps) problem(number, raw, "average bus bandwidth is not a number");
      return true;
    }
    if (body.starts_with("Out of bounds values")) {
      const auto words = split(after_colon(body));
      log_.out_of_bounds = words.empty() ? std::nullopt : parse_integer(words.front());
      if (!log_.out_of_bounds) problem(number, raw, "out-of-bounds count is not a number");
      return true;
    }
    if (tokens.size() >= 4 && tokens[0] == "nThread" && tokens[2] == "nGpus") {
      run_starts(number);
      if (const auto threads = parse_unsigned(tokens[1]); threads && *threads >= 1 && *threads <= 1024) {
        evidence_.threads = static_cast<int>(*threads);
        log_.threads = static_cast<int>(*threads);
      }
      const auto gpus = parse_unsigned(tokens[3]);
      if (!gpus || *gpus < 1 || *gpus > 1024) {
        problem(number, raw, "nGpus \"" + std::string(tokens[3]) + "\" is not a GPU count");
      } else {
        log_.gpus_per_thread = static_cast<int>(*gpus);
        log_.gpus_per_thread_source = "header";
      }
      // "... warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0": the timed loop's
      // iterations, the calls each groups (nccl-tests -m) and its CUDA-graph launches (-G, 0: none).
      for (std::size_t i = 1; i + 1 < tokens.size(); ++i) {
        const auto n = parse_unsigned(tokens[i + 1]);
        const bool in_range = n && *n <= (1u << 30);
        if (tokens[i] == "graph:") {
          if (in_range) log_.graph_launches = static_cast<int>(*n);
        } else if (tokens[i] != "iters:" || tokens[i - 1] == "warmup") {
          continue;
        } else if (tokens[i - 1] == "agg") {
          if (in_range && *n >= 1) log_.agg_iters = static_cast<int>(*n);
        } else if (!in_range || *n < 1) {
          problem(number, raw, "iters \"" + std::string(tokens[i + 1]) + "\" is not an iteration count");
        } else {
          log_.iters = static_cast<int>(*n);
          log_.iters_source = "header";
        }
      }
      return true;
    }
    // ccsim perf's own table: "# ccsim perf all_gather: 8 ranks on dgx-h100, model hopper".
    if (tokens.size() >= 3 && tokens[0] == "ccsim" && tokens[1] == "perf") {
      run_starts(number);
      std::string_view name = tokens[2];
      if (name.ends_with(':')) name.remove_suffix(1);
      if (const auto kind = collective_named(name)) evidence_.banner_collective = kind;
      return true;
    }
    if (body.starts_with("Collective test starting:")) {
      run_starts(number);
      if (const auto binary = perf_binary(after_colon(body))) evidence_.banner_collective = collective_named(*binary);
      return true;
    }
    // The library that ran: NCCL prints "NCCL version 2.26.6+cuda12.8"; nccl-tests 2.14+ prints
    // "nccl-headers=... nccl-library=22602" (NCCL_VERSION_CODE). NCCL's own line wins (finish).
    // (also inside "host:pid:tid [0] NCCL INFO NCCL version ..." lines)
    for (std::size_t i = 0; i + 2 < tokens.size(); ++i)
      if (tokens[i] == "NCCL" && tokens[i + 1] == "version") {
        const std::string_view v = tokens[i + 2].substr(0, tokens[i + 2].find('+'));
        if (release_version(v)) banner_version_ = std::string(v);
      }
    // nccl-tests' first releases said only the headers they were built against: "NCCL Tests compiled
    // with NCCL 2.3". The library that ran is of that release unless swapped under them.
    if (tokens.size() == 6 && tokens[0] == "NCCL" && tokens[1] == "Tests" && tokens[2] == "compiled" &&
        release_version(tokens[5], true)) {
      headers_version_ = std::string(tokens[5]);
      return true;
    }
    for (const auto& t : tokens)
      if (t.starts_with("nccl-library="))
        if (const auto code = parse_unsigned(t.substr(13)); code && *code > 0) library_version_ = version_of_code(*code);
    return known_chatter(body);
  }

  // NCCL's own debug output, "host:pid:tid [dev] NCCL INFO ...": its prefix (one or two words) comes
  // before "NCCL <level>". An INFO line "NCCL_X set by environment to v" says what NCCL read.
  bool take_nccl_debug(int number, std::string_view raw, std::string_view body, const Tokens& tokens) {
    static constexpr std::string_view kLevels[] = {"INFO", "WARN", "TRACE"};
    std::size_t at = 0;
    while (at < 3 && at + 1 < tokens.size() &&
           !(tokens[at] == "NCCL" && std::find(std::begin(kLevels), std::end(kLevels), tokens[at + 1]) != std::end(kLevels)))
      ++at;
    if (at >= 3 || at + 1 >= tokens.size()) return false;
    ++log_.nccl_debug_lines;
    if (tokens[at + 1] == "WARN") log_.nccl_warnings.push_back({number, printable(raw), "NCCL warned"});
    const std::size_t name = at + 2;
    if (tokens[at + 1] == "INFO" && name + 5 < tokens.size() && tokens[name].starts_with("NCCL_") && tokens[name + 1] == "set" &&
        tokens[name + 2] == "by" && tokens[name + 3] == "environment" && tokens[name + 4] == "to") {
      // The value is the rest of the line (NCCL prints it as it read it); tokens are views of body.
      const auto value = static_cast<std::size_t>(tokens[name + 5].data() - body.data());
      std::string v(trim(body.substr(value)));
      // A number ends the sentence with a period (param.cc: "%s set by environment to %lld."); a
      // string (NCCL_ALGO's) is written as it is.
      if (v.size() > 1 && v.back() == '.' && parse_integer(std::string_view(v).substr(0, v.size() - 1))) v.pop_back();
      reported_env_[std::string(tokens[name])] = v;
    }
    if (tokens[at + 1] == "INFO") {
      take_network_report(body, tokens, name);
      take_transport_report(tokens, name);
    }
    return true;
  }

  // "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read" (NCCL 2.4: "Ring 00 : 0[0] -> 1[1] via P2P/IPC"):
  // how NCCL connected a rank to its peer, by the transport's name before the first '/': P2P (the
  // GPUs reach each other's memory), SHM (through host memory), NET.
  void take_transport_report(const Tokens& tokens, std::size_t first) {
    for (std::size_t i = first + 3; i + 1 < tokens.size(); ++i) {
      // "0[0] -> 1[1] via", or with the direction between: "1[1] -> 2[0] [send] via NET/IB/0".
      if (tokens[i] != "via" || (tokens[i - 2] != "->" && tokens[i - 3] != "->")) continue;
      const std::string_view transport = tokens[i + 1].substr(0, tokens[i + 1].find('/'));
      if (transport == "P2P" || transport == "SHM" || transport == "NET" || transport == "NVLS" || transport == "COLLNET")
        log_.peer_transports.insert(std::string(transport));
      return;
    }
  }

  // "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:..." lists the NICs NCCL's IB
  // transport drives with their link layer (InfiniBand or RoCE); "Using network IB" names the
  // network plugin or transport NCCL chose (src/transport/net_ib.cc, init.cc).
  void take_network_report(std::string_view body, const Tokens& tokens, std::size_t first) {
    if (first + 2 < tokens.size() && tokens[first] == "Using" && tokens[first + 1] == "network") {
      const auto from = static_cast<std::size_t>(tokens[first + 2].data() - body.data());
      log_.nccl_network = std::string(trim(body.substr(from)));
      return;
    }
    if (first + 2 >= tokens.size() || !tokens[first].starts_with("NET/IB")) return;
    for (std::size_t i = first + 1; i < tokens.size(); ++i) {
      std::string_view t = tokens[i];
      // "[0]mlx5_0:1/RoCE", possibly "[0]mlx5_0:1/IB/SHARP" or with a trailing ';' or ','.
      if (t.size() < 4 || t.front() != '[' || t.find(']') == std::string_view::npos) continue;
      const auto colon = t.find(':'), slash = t.find('/');
      if (colon == std::string_view::npos || slash == std::string_view::npos || slash < colon) continue;
      std::string_view layer = t.substr(slash + 1);
      layer = layer.substr(0, std::min(layer.find('/'), layer.find_first_of(";,")));
      if (layer == "IB" || layer == "RoCE") log_.net_link_layers.insert(std::string(layer));
    }
  }

  // A command line names an nccl-tests binary, starts with a launcher or follows a shell prompt
  // (which also makes "cd ~/nccl-tests" a recognised line). In a comment the binary has to be the
  // program run, so that prose mentioning all_reduce_perf is not taken for a command.
  bool take_command(int number, std::string_view body, bool commented) {
    const auto prompted = after_shell_prompt(body);
    std::string_view command = prompted ? *prompted : body;
    if (command.size() >= 2 && command.front() == '`' && command.back() == '`')
      command = trim(command.substr(1, command.size() - 2));
    const std::string_view program = program_of(command);
    bool names_binary = perf_binary(program).has_value();
    if (!commented)
      for (const auto token : split(command)) names_binary = names_binary || perf_binary(token).has_value();
    if (!prompted && !names_binary && !is_launcher(program)) return false;
    if (names_binary) run_starts(number);
    add_command_part(command);
    return true;
  }

  // The value of an nccl-tests option ("-g 8", "-g8", "--ngpus 8", "--ngpus=8") on the command
  // line when it is a whole number in [1, max]: after the binary when the command names one (a
  // launcher's own options come before it), else anywhere unless `needs_binary` (mpirun's and
  // srun's -n is not nccl-tests' -n).
  static std::optional<int> command_option(std::string_view command, std::string_view short_name,
                                           std::string_view long_name, unsigned long long max, bool needs_binary) {
    const Tokens t = split(command);
    std::size_t first = 0;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (perf_binary(t[i])) {
        first = i + 1;
        break;
      }
    if (first == 0 && needs_binary) return std::nullopt;
    const std::string long_eq = std::string(long_name) + "=";
    for (std::size_t i = first; i < t.size(); ++i) {
      std::string_view value;
      if ((t[i] == short_name || t[i] == long_name) && i + 1 < t.size()) value = t[i + 1];
      else if (t[i].starts_with(long_eq)) value = t[i].substr(long_eq.size());
      else if (t[i].starts_with(short_name) && t[i].size() > short_name.size() && !t[i].starts_with("--"))
        value = t[i].substr(short_name.size());
      else continue;
      const auto v = parse_unsigned(value);
      if (v && *v >= 1 && *v <= max) return static_cast<int>(*v);
    }
    return std::nullopt;
  }

  void add_command_part(std::string_view part) {
    continuing_ = part.ends_with('\\');
    if (continuing_) part = trim(part.substr(0, part.size() - 1));
    if (!pending_command_.empty() && !part.empty()) pending_command_ += ' ';
    pending_command_ += part;
    if (!continuing_) finish_command();
  }

  // The environment a run was given apart from its command: "export NCCL_ALGO=Tree", or a line
  // of assignments only (as `env` lists them). The command's own assignments, and what NCCL
  // reports it read, come over these.
  bool take_environment(int number, std::string_view body, const Tokens& tokens) {
    const bool exported = tokens.front() == "export" && tokens.size() > 1;
    if (!exported && !std::all_of(tokens.begin(), tokens.end(), is_assignment)) return false;
    if (exported && !std::all_of(tokens.begin() + 1, tokens.end(), is_assignment)) return false;
    for (auto& [name, value] : nccl_settings(body)) exported_env_[name] = std::move(value);
    if (env_lines_end_ != previous_line_) env_lines_start_ = number;
    env_lines_end_ = number;
    return true;
  }

  // Keeps the first command that runs an nccl-tests binary, else the first command seen.
  void finish_command() {
    continuing_ = false;
    std::optional<std::string_view> binary;
    for (const auto token : split(pending_command_))
      if (!binary) binary = perf_binary(token);
    if (log_.command.empty() || (binary && !command_names_binary_)) {
      log_.command = pending_command_;
      command_names_binary_ = binary.has_value();
      evidence_.command_collective = binary ? collective_named(*binary) : std::nullopt;
    }
    pending_command_.clear();
  }

  // Azure's guide: "| 1K | 0.07 |", size against in-place busbw, under a header and a rule.
  void take_markdown(int number, std::string_view raw, std::string_view body) {
    std::vector<std::string_view> cells;
    std::size_t start = 1;
    while (start <= body.size()) {
      const auto bar = body.find('|', start);
      const std::size_t end = bar == std::string_view::npos ? body.size() : bar;
      cells.push_back(trim(body.substr(start, end - start)));
      start = end + 1;
    }
    if (!cells.empty() && cells.back().empty()) cells.pop_back();
    const bool rule = !cells.empty() && std::all_of(cells.begin(), cells.end(), [](std::string_view c) {
      return !c.empty() && c.find_first_not_of("-: ") == std::string_view::npos;
    });
    if (rule) return;
    // A whole nccl-tests table set in markdown (a write-up's): its header cells name the columns
    // with their units ("size (B)", "time (us)"), its rows carry every value. Read as the text table:
    // the header by each cell's first word, a row by its values.
    if (cells.size() >= 6) {
      std::string words;
      for (const auto cell : cells) {
        const Tokens w = split(cell);
        if (!w.empty()) words += std::string(words.empty() ? "" : " ") + std::string(w.front());
      }
      const Tokens values = split(words);
      if (!values.empty() && all_digits(values.front())) return take_data_row(number, raw, values);
      const std::string header = ascii_lower(words);  // "Size (B) | Count | ..." as well
      if (const Tokens names = split(header); column_header(names)) {
        take_nccl_line(number, raw, header, names);
        return;
      }
    }
    if (cells.size() == 2) {
      const auto size = size_label(cells[0]);
      const auto busbw = parse_real(cells[1]);
      if (size && busbw && *busbw >= 0) return add_summary_row(number, *size, *busbw);
      if (ascii_lower(cells[0]).find("size") != std::string::npos) {  // the header
        std::string_view system = cells[1];
        if (const auto unit = system.rfind('('); unit != std::string_view::npos) system = trim(system.substr(0, unit));
        log_.summary_system = std::string(system);
        return;
      }
    }
    problem(number, raw, "markdown row is neither \"| size | busbw |\" nor a row or header of nccl-tests' table");
  }

  // A summary's size label is nccl-tests' power-of-two size written short, in thousands as often
  // as in 1024s (Azure's "65K", "33M", "536M" for 64 KiB, 32 MiB, 512 MiB): the power of two it
  // is within 10% of, else the label as written.
  static std::optional<Bytes> size_label(std::string_view text) {
    std::optional<Bytes> size;
    std::string label;  // "1 KB", "1KiB": as "1K"
    for (const char ch : text)
      if (!is_space(ch)) label += ch;
    if (label.size() > 2 && (label.ends_with("iB") || label.ends_with("ib"))) label.resize(label.size() - 2);
    else if (label.size() > 1 && label.back() == 'B') label.pop_back();
    try {
      size = parse_bytes(label);
    } catch (const Error&) {
      return std::nullopt;
    }
    if (*size == 0) return size;
    const Bytes below = std::bit_floor(*size), above = below << 1;
    const Bytes nearest = (*size - below <= above - *size) ? below : above;
    const double off = std::abs(static_cast<double>(*size) - static_cast<double>(nearest)) / static_cast<double>(nearest);
    return off <= 0.10 ? nearest : *size;
  }

  void add_summary_row(int number, Bytes size, double busbw) {
    MeasuredRow row;
    row.line = number;
    row.size = size;
    row.size_approximate = true;
    MeasuredPoint point;
    point.busbw_gbps = busbw;
    point.has_time = false;
    row.in_place = point;
    log_.rows.push_back(row);
    evidence_.row_units.push_back(log_inference::TimeUnits::not_gpu);  // no time to read in either unit
    log_.summary_table = true;
  }

  // A run's header (its command line, nccl-tests' banner or "nThread" line) after another run's
  // data rows: the file holds several runs, each of which is a log of its own.
  // A run begins at its header, or at the shell lines that set its environment right above it.
  void run_starts(int number) {
    const int first = env_lines_end_ == previous_line_ && env_lines_start_ > 0 ? env_lines_start_ : number;
    if (data_lines_ > data_lines_at_run_start_) log_.run_starts.push_back(first);
    data_lines_at_run_start_ = data_lines_;
  }

  // size count type [redop] [root] then time algbw busbw check, once or twice.
  void take_data_row(int number, std::string_view raw, const Tokens& t) {
    ++data_lines_;
    try {
      add_row(data_row(number, t));
    } catch (const RowError& e) {
      problem(number, raw, e.why);
    }
  }

  // A row read whole: its bandwidth samples join the rank-count evidence, and the header it was read
  // under says in which unit its times may be.
  void add_row(MeasuredRow row) {
    log_.rows.push_back(std::move(row));
    using log_inference::TimeUnits;
    evidence_.row_units.push_back(!layout_.known        ? TimeUnits::unstated
                                  : layout_.cputime      ? TimeUnits::not_gpu
                                  : layout_.milliseconds ? TimeUnits::milliseconds
                                                         : TimeUnits::microseconds);
    evidence_.samples.insert(evidence_.samples.end(), pending_samples_.begin(), pending_samples_.end());
  }

  MeasuredRow data_row(int number, const Tokens& t) {
    pending_samples_.clear();
    MeasuredRow row;
    row.line = number;
    const auto size = parse_unsigned(t[0]);
    if (!size) throw RowError{"size \"" + std::string(t[0]) + "\" is out of range"};
    row.size = *size;
    if (t.size() < 3) throw RowError{"truncated row: no count and type"};
    const auto count = parse_unsigned(t[1]);
    if (!count) throw RowError{"count \"" + std::string(t[1]) + "\" is not a number"};
    row.count = *count;
    if (!is_letter(t[2].front())) throw RowError{"type \"" + std::string(t[2]) + "\" is not a type name"};
    row.type = t[2];
    std::size_t i = 3;
    if (i < t.size() && is_letter(t[i].front()) && t[i] != "N/A") row.redop = t[i++];
    // Without a header, a root column shows as one value more than whole placements.
    const bool has_root = layout_.known ? layout_.root : (t.size() - i) % 4 == 1;
    if (has_root) {
      if (i >= t.size()) throw RowError{"truncated row: no root"};
      const auto root = parse_integer(t[i]);
      if (!root || *root < -1 || *root > std::numeric_limits<int>::max())
        throw RowError{"root \"" + std::string(t[i]) + "\" is not a rank"};
      row.root = static_cast<int>(*root);
      ++i;
    }
    // A row without the header's trailing columns (cut off, as tools that keep nccl-tests' own
    // columns cut them) reads as well.
    const auto trailing = static_cast<std::size_t>(layout_.trailing);
    std::size_t values = t.size() - i;
    if (trailing > 0 && values >= 4 + trailing && (values - trailing == 4 || values - trailing == 8)) values -= trailing;
    // A column header that names no check column ("time algbw busbw" alone, as a write-up that
    // trimmed nccl-tests' table prints it) heads rows of three values a placement; rows with the
    // check column read under it too.
    const bool header_unchecked = layout_.known && layout_.check == CheckColumn::unknown;
    const std::size_t width = header_unchecked && (values == 3 || (values == 6 && layout_.placements >= 2)) ? 3 : 4;
    const bool both = values == 2 * width && layout_.placements >= 2;
    if (values != width && !both)
      throw RowError{"expected " + std::string(header_unchecked ? "3 or 6 values (time algbw busbw per placement, as the column header names them), or " : "") +
                     "4 or 8 values (time algbw busbw " + std::string(layout_.check == CheckColumn::error ? "error" : "#wrong") +
                     " per placement), found " + std::to_string(values) + (values < 8 ? " (truncated row?)" : "")};
    // Columns get cut from the right, so a lone placement is out-of-place unless the banner
    // above named in-place alone.
    // A placement nccl-tests did not time (N/A throughout, as some wrappers print the in-place
    // side) is absent; the other is read as usual.
    auto timed = [&](std::size_t at) { return t[at] != "N/A"; };
    auto& first = (both || !in_place_only_) ? row.out_of_place : row.in_place;
    if (timed(i)) first = point(t, i, width == 4);
    if (both && timed(i + width)) row.in_place = point(t, i + width, width == 4);
    if (!row.out_of_place && !row.in_place) throw RowError{"time \"N/A\": no placement was timed"};
    return row;
  }

  MeasuredPoint point(const Tokens& t, std::size_t i, bool checked) {
    MeasuredPoint p;
    p.time_us = metric(t[i], "time");
    p.algbw_gbps = metric(t[i + 1], "algbw");
    p.busbw_gbps = metric(t[i + 2], "busbw");
    if (checked) read_check(t[i + 3], layout_.check, p);
    // Below 1 GB/s two printed decimals say too little about the ratio. The first layout's rows give
    // none: its all_gather and reduce_scatter printed busbw as algbw (both (n-1)/n of the data per
    // second), and which collective a row is may not be known yet; its device lines give the ranks.
    if (p.algbw_gbps >= 1.0 && !layout_.milliseconds)
      pending_samples_.push_back({p.algbw_gbps, half_ulp(t[i + 1]), p.busbw_gbps, half_ulp(t[i + 2])});
    return p;
  }


  NcclLog log_;
  Layout layout_;
  bool in_place_only_ = false;
  bool said_commented_rows_ = false;
  log_inference::Evidence evidence_;  // what the lines say together (nccl_log_inference)
  std::vector<log_inference::BandwidthSample> pending_samples_;  // of the row being read, kept once it reads whole
  std::string headers_version_;  // "NCCL Tests compiled with NCCL 2.3"
  std::string banner_version_, library_version_;  // NCCL's "NCCL version" line; nccl-tests' nccl-library=
  bool said_cputime_ = false;
  // The shell lines setting an environment last seen (first and last line numbers), and the line
  // before the current one that held anything: a run's command right under them starts with them.
  int env_lines_start_ = 0, env_lines_end_ = -1, previous_line_ = 0;
  std::map<std::string, std::string> exported_env_;  // "export NCCL_X=v" lines
  std::map<std::string, std::string> reported_env_;  // NCCL's "NCCL_X set by environment to v" lines
  bool continuing_ = false;  // the last command line ended with '\'
  std::size_t data_lines_ = 0, data_lines_at_run_start_ = 0;  // data rows seen, read or not
  std::string pending_command_;
  bool command_names_binary_ = false;
  std::vector<std::string> gpus_;
};

}  // namespace

std::string file_layout_word(const NcclLog& log) {
  if (!log.file_nodes || !log.file_ranks) return "";
  return std::to_string(*log.file_nodes) + "n" + std::to_string(*log.file_ranks) + "g";
}

NcclLog parse_nccl_log(std::istream& in, const std::string& origin, int first_line, int end_line) {
  LogParser parser(origin);
  std::string line;
  int web_lines = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    if (number < first_line || (end_line > 0 && number >= end_line)) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    web_lines += unescape_web_text(line) ? 1 : 0;
    std::string_view text = line;
    if (number == 1 && text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
    parser.take(number, text);
  }
  NcclLog log = parser.finish();
  if (web_lines > 0)
    log.notes.push_back(std::to_string(web_lines) + " of its lines carry a web page's escapes or typography (&lt;, &gt;, &amp;, " +
                        "&nbsp;, no-break spaces, a minus sign for '-'): read as the text they stand for");
  return log;
}

NcclLog read_nccl_log(const std::string& path, std::optional<int> run) {
  // Read once; a run of a file of several is parsed again from the same text.
  const std::string text = read_text_file(path);
  auto parse = [&](int first_line, int end_line) {
    std::istringstream in(text);
    return parse_nccl_log(in, path, first_line, end_line);
  };
  NcclLog whole = parse(1, 0);
  const int runs = static_cast<int>(whole.run_starts.size()) + 1;
  if (run && (*run < 1 || *run > runs))
    throw Error(path + ": run " + std::to_string(*run) + " asked for, but the file holds " +
                (runs == 1 ? std::string("one run") : std::to_string(runs) + " runs"));
  if (runs == 1) return whole;
  auto part = [&](int k) {  // 1-based
    return parse(k == 1 ? 1 : whole.run_starts[static_cast<std::size_t>(k - 2)],
                 k == runs ? 0 : whole.run_starts[static_cast<std::size_t>(k - 1)]);
  };
  if (run) {
    NcclLog one = part(*run);
    one.run = *run;
    one.runs = runs;
    return one;
  }
  std::string list;
  for (int k = 1; k <= runs; ++k) {
    const NcclLog p = part(k);
    list += std::string(k > 1 ? "; " : "") + std::to_string(k) + " from line " +
            std::to_string(k == 1 ? 1 : whole.run_starts[static_cast<std::size_t>(k - 2)]) + ": " +
            (p.collective ? std::string(to_string(*p.collective)) : std::string("collective not said")) + ", " +
            std::to_string(p.rows.size()) + (p.rows.size() == 1 ? " row" : " rows");
  }
  throw Error(path + ": the file holds " + std::to_string(runs) + " nccl-tests runs (" + list +
              "): name one with --run N (a map entry's \"run\"), or give each its own file");
}

}  // namespace ccsim
