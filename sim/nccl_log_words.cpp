#include "sim/nccl_log_words.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <system_error>

#include "sim/error.hpp"
#include "sim/text.hpp"

namespace ccsim::log_words {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

template <typename T>
std::optional<T> parse_whole(std::string_view s) {
  T value{};
  const char* end = s.data() + s.size();
  const auto [stop, ec] = std::from_chars(s.data(), end, value);
  if (s.empty() || ec != std::errc() || stop != end) return std::nullopt;
  return value;
}

std::string_view basename(std::string_view path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The dataset names its runs' files with a <ranks>g word ("...-8g-all_reduce-1.log"), or for a
// multi-node run <nodes>n<ranks>g ("...-2n16g-all_reduce-1.log"), which wins over a plain one.
struct FileNameLayout {
  std::optional<int> nodes;
  int ranks = 0;
};

std::optional<FileNameLayout> file_name_layout(std::string_view origin) {
  std::string_view name = basename(origin);
  auto number = [](std::string_view& text) -> std::optional<int> {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data() || value <= 0) return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return value;
  };
  std::optional<FileNameLayout> plain;
  while (!name.empty()) {
    const auto cut = name.find_first_of("-._");
    std::string_view word = name.substr(0, cut);
    name = cut == std::string_view::npos ? std::string_view() : name.substr(cut + 1);
    const auto first = number(word);
    if (!first) continue;
    if (word == "g") {
      // The last such word: a memory size comes earlier, in the system's name
      // (superbench-a100-sxm4-40g-8g-allreduce-1: 8 GPUs, not 40).
      plain = FileNameLayout{std::nullopt, *first};
      continue;
    }
    if (!word.starts_with('n')) continue;
    word.remove_prefix(1);
    const auto ranks = number(word);
    if (ranks && word == "g") return FileNameLayout{*first, *ranks};
  }
  return plain;
}

// srun --label writes "0: " or " 12: " before each line, OpenMPI --tag-output "[1,0]<stdout>:".
std::string_view strip_rank_label(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  std::size_t j = i;
  while (j < line.size() && is_digit(line[j])) ++j;
  if (j > i && j < line.size() && line[j] == ':' && (j + 1 == line.size() || is_space(line[j + 1])))
    return line.substr(j + 1);
  if (line.starts_with('[')) {
    const auto close = line.find("]<");
    const auto end = line.find(">:");
    if (close != std::string_view::npos && end != std::string_view::npos && close < end) return line.substr(end + 2);
  }
  return line;
}

// What nccl-tests (or NCCL, in its debug output) writes at the start of a line: a comment, a
// number (a data row) or a debug line's "host:pid:tid [dev] NCCL INFO".
bool starts_like_output(std::string_view rest) {
  if (rest.empty()) return false;
  if (rest.front() == '#') return true;
  // A data row: size and count, then the type's name ("Nodes: 1" or an MPI notice's "[host:pid] 7
  // more processes" are neither).
  const Tokens t = split(rest);
  if (t.size() >= 3 && all_digits(t[0]) && all_digits(t[1]) && is_letter(t[2].front())) return true;
  const auto nccl = rest.find(" NCCL ");
  return nccl != std::string_view::npos && nccl < 80;
}

// A date and time a log collector writes first ("2025-03-04T10:11:12.123456+00:00", or
// "2025-03-04 10:11:12,345"): how many characters they take, with the space after; 0 if none.
std::size_t timestamp_length(std::string_view line) {
  auto digits = [&](std::size_t at, std::size_t n) {
    if (at + n > line.size()) return false;
    for (std::size_t k = at; k < at + n; ++k)
      if (!is_digit(line[k])) return false;
    return true;
  };
  if (!(digits(0, 4) && line.size() > 10 && line[4] == '-' && digits(5, 2) && line[7] == '-' && digits(8, 2))) return 0;
  std::size_t end = 10;
  if (end < line.size() && (line[end] == 'T' || line[end] == ' ') && digits(end + 1, 2) && end + 3 < line.size() &&
      line[end + 3] == ':')
    end = line.find_first_of(" \t", end + 1);
  if (end == std::string_view::npos || end >= line.size() || !is_space(line[end])) return 0;
  return end + 1;
}

}  // namespace

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

Tokens split(std::string_view s) {
  Tokens out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

std::optional<std::uint64_t> parse_unsigned(std::string_view s) {
  return all_digits(s) ? parse_whole<std::uint64_t>(s) : std::nullopt;
}

std::optional<long long> parse_integer(std::string_view s) { return parse_whole<long long>(s); }

std::optional<double> parse_real(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto value = parse_whole<double>(s);
  return value && std::isfinite(*value) ? value : std::nullopt;
}

double half_ulp(std::string_view printed) {
  int exponent = 0;
  const auto e = printed.find_first_of("eE");
  if (e != std::string_view::npos) {
    std::string_view exp_text = printed.substr(e + 1);
    if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
    exponent = static_cast<int>(parse_integer(exp_text).value_or(0));
    printed = printed.substr(0, e);
  }
  const auto dot = printed.find('.');
  const int decimals = dot == std::string_view::npos ? 0 : static_cast<int>(printed.size() - dot - 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

std::optional<CollectiveKind> collective_named(std::string_view name) {
  try {
    return parse_collective(name);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<CollectiveKind> collective_from_file_name(std::string_view origin) {
  const std::string_view name = basename(origin);
  std::size_t end = name.size();
  while (end > 0) {
    const auto start = name.find_last_of("-.", end - 1);
    const std::size_t from = start == std::string_view::npos ? 0 : start + 1;
    if (const auto kind = collective_named(name.substr(from, end - from))) return kind;
    if (start == std::string_view::npos) break;
    end = start;
  }
  return std::nullopt;
}

std::optional<std::pair<int, int>> layout_from_file_name(std::string_view origin) {
  const auto layout = file_name_layout(origin);
  if (!layout || !layout->nodes) return std::nullopt;
  return std::pair{*layout->nodes, layout->ranks};
}

std::optional<int> ranks_in_file_name(std::string_view origin) {
  const auto layout = file_name_layout(origin);
  return layout ? std::optional<int>(layout->ranks) : std::nullopt;
}

std::optional<std::string_view> perf_binary(std::string_view token) {
  while (!token.empty() && (token.front() == '`' || token.front() == '"' || token.front() == '\''))
    token.remove_prefix(1);
  while (!token.empty() && (token.back() == '`' || token.back() == '"' || token.back() == '\''))
    token.remove_suffix(1);
  const auto eq = token.find_last_of('=');
  if (eq != std::string_view::npos) token = token.substr(eq + 1);
  token = basename(token);
  if (token.ends_with("_perf_mpi")) token.remove_suffix(4);
  if (token.size() > 5 && token.ends_with("_perf")) return token;
  return std::nullopt;
}

bool is_assignment(std::string_view token) {
  const auto eq = token.find('=');
  return eq != std::string_view::npos && eq > 0 && is_letter(token.front());
}

std::map<std::string, std::string> nccl_settings(std::string_view command) {
  std::map<std::string, std::string> out;
  // Where a run of name characters (A-Z, 0-9, _) starting at `from` ends.
  auto name_end = [&](std::size_t from) {
    while (from < command.size() && (std::isupper(static_cast<unsigned char>(command[from])) ||
                                     std::isdigit(static_cast<unsigned char>(command[from])) || command[from] == '_'))
      ++from;
    return from;
  };
  for (std::size_t at = command.find("NCCL_"); at != std::string_view::npos; at = command.find("NCCL_", at + 1)) {
    if (at > 0) {
      const char before = command[at - 1];
      if (!std::isspace(static_cast<unsigned char>(before)) && before != ',' && before != '=' && before != '"' &&
          before != '\'')
        continue;
    }
    const std::size_t end = name_end(at + 5);
    if (end >= command.size() || command[end] != '=' || end == at + 5) continue;
    std::size_t stop = end + 1;
    char quote = 0;
    if (stop < command.size() && (command[stop] == '"' || command[stop] == '\'')) quote = command[stop++];
    const std::size_t value_start = stop;
    // A comma ends the value only where another NAME= follows (srun's --export list); otherwise it
    // is the value's own list (NCCL_ALGO=Ring,Tree, NCCL_IB_HCA=mlx5_0,mlx5_1).
    auto next_setting = [&](std::size_t comma) {
      const std::size_t k = name_end(comma + 1);
      return k > comma + 1 && k < command.size() && command[k] == '=';
    };
    while (stop < command.size() &&
           (quote ? command[stop] != quote
                  : !std::isspace(static_cast<unsigned char>(command[stop])) && !(command[stop] == ',' && next_setting(stop))))
      ++stop;
    std::string value(command.substr(value_start, stop - value_start));
    while (!value.empty() && (value.back() == '"' || value.back() == '\'')) value.pop_back();
    out[std::string(command.substr(at, end - at))] = value;
  }
  return out;
}

std::string_view program_of(std::string_view command) {
  for (const auto token : split(command))
    if (!is_assignment(token)) return token;
  return {};
}

bool is_launcher(std::string_view program) {
  const std::string_view name = basename(program);
  return name == "mpirun" || name == "mpiexec" || name == "srun" || name == "kubectl" || name == "docker";
}

std::optional<std::string_view> after_shell_prompt(std::string_view line) {
  auto rest_after = [&](std::size_t mark) -> std::optional<std::string_view> {
    if (mark + 1 < line.size() && !is_space(line[mark + 1])) return std::nullopt;
    return trim(line.substr(mark + 1));
  };
  if (line.starts_with('$')) return rest_after(0);
  if (line.starts_with('[')) {
    const auto close = line.find(']');
    if (close == std::string_view::npos || close + 1 >= line.size()) return std::nullopt;
    if (line.substr(0, close).find('@') == std::string_view::npos) return std::nullopt;
    if (line[close + 1] != '$' && line[close + 1] != '#') return std::nullopt;
    return rest_after(close + 1);
  }
  const auto space = line.find_first_of(" \t");
  const std::string_view first = line.substr(0, space);
  if (first.size() < 4 || first.find('@') == std::string_view::npos || first.find(':') == std::string_view::npos)
    return std::nullopt;
  if (first.back() != '$' && first.back() != '#') return std::nullopt;
  return rest_after(first.size() - 1);
}

std::string_view strip_line_prefix(std::string_view line) {
  for (int pass = 0; pass < 3; ++pass) {
    std::string_view stripped = strip_rank_label(line);
    if (stripped.size() == line.size()) {
      std::size_t i = 0;
      while (i < line.size() && is_space(line[i])) ++i;
      const std::string_view text = line.substr(i);
      if (const std::size_t n = timestamp_length(text); n > 0) {
        stripped = text.substr(n);
      } else {
        const auto space = text.find_first_of(" \t");
        const std::string_view first = text.substr(0, space);
        std::string_view rest = space == std::string_view::npos ? std::string_view{} : trim(text.substr(space));
        bool bracket = first.size() > 2 && first.front() == '[' && first.back() == ']';
        // A bracketed date and time with a space in it ("[2025-06-12 08:15:32,123]", Python's
        // logging and many wrappers): the bracket as a whole.
        if (!bracket && text.starts_with('[')) {
          const auto close = text.find(']');
          const std::string_view inside = close == std::string_view::npos ? std::string_view{} : text.substr(1, close - 1);
          if (timestamp_length(std::string(inside) + " ") == inside.size() + 1) {
            bracket = true;
            rest = trim(text.substr(close + 1));
          }
        }
        const bool host = first.size() > 1 && first.back() == ':' &&
                          std::all_of(first.begin(), first.end() - 1, [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
                          });
        if ((bracket || host) && starts_like_output(rest)) stripped = rest;
      }
    }
    if (stripped.size() == line.size()) return line;
    line = stripped;
  }
  return line;
}

bool unescape_web_text(std::string& line) {
  if (line.find('&') == std::string::npos && std::all_of(line.begin(), line.end(), [](char c) { return (c & 0x80) == 0; }))
    return false;
  static constexpr std::pair<std::string_view, std::string_view> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&#x27;", "'"},
      {"&nbsp;", " "}, {"&#160;", " "}, {"\xC2\xA0", " "}, {"\xE2\x80\x89", " "}, {"\xE2\x80\xAF", " "},
      {"\xE2\x88\x92", "-"}, {"\xE2\x80\x93", "-"}, {"\xE2\x80\x8B", ""}, {"&amp;", "&"}};
  std::string out;
  bool changed = false;
  for (std::size_t i = 0; i < line.size();) {
    const auto hit = std::find_if(std::begin(kEntities), std::end(kEntities),
                                  [&](const auto& e) { return std::string_view(line).substr(i).starts_with(e.first); });
    if (hit == std::end(kEntities)) {
      out += line[i++];
      continue;
    }
    out += hit->second;
    i += hit->first.size();
    changed = true;
  }
  if (changed) line = std::move(out);
  return changed;
}

}  // namespace ccsim::log_words
