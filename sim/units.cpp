#include "sim/units.hpp"

#include <cctype>
#include <charconv>
#include <limits>

#include "sim/error.hpp"

namespace ccsim {

Bytes parse_bytes(std::string_view text) {
  const std::string original(text);
  auto fail = [&](const std::string& why) -> Error {
    return Error("invalid size \"" + original + "\": " + why +
                 " (expected a positive integer with an optional K, M, G or T suffix)");
  };
  if (text.empty()) throw fail("empty");
  if (text.front() == '-') throw fail("negative");
  std::size_t i = 0;
  Bytes value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const Bytes digit = static_cast<Bytes>(text[i] - '0');
    if (value > (std::numeric_limits<Bytes>::max() - digit) / 10) throw fail("too large");
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) throw fail("not a number");
  std::string suffix;
  for (; i < text.size(); ++i) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") shift = 30;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB") shift = 40;
  else throw fail("unknown suffix \"" + suffix + "\"");
  if (value == 0) throw fail("zero");
  if (shift > 0 && value > (std::numeric_limits<Bytes>::max() >> shift)) throw fail("too large");
  return value << shift;
}

std::string format_bytes(Bytes bytes) {
  static const char* suffixes[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + suffixes[unit];
}

std::string format_number(double value) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc{} ? std::string(buf, end) : std::to_string(value);
}

}  // namespace ccsim
