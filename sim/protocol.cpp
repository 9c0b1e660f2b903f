#include "sim/protocol.hpp"

#include <string>

#include "sim/error.hpp"
#include "sim/text.hpp"

namespace ccsim {

std::string_view to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::simple: return "simple";
    case Protocol::ll: return "ll";
    case Protocol::ll128: return "ll128";
  }
  return "?";
}

Protocol parse_protocol(std::string_view name) {
  const std::string lower = ascii_lower(name);
  for (auto p : all_protocols())
    if (to_string(p) == lower) return p;
  throw Error("unknown protocol \"" + std::string(name) + "\" (expected one of: simple, ll, ll128)");
}

const std::vector<Protocol>& all_protocols() {
  static const std::vector<Protocol> all = {Protocol::simple, Protocol::ll, Protocol::ll128};
  return all;
}

double wire_bytes_per_data_byte(Protocol protocol) {
  switch (protocol) {
    case Protocol::simple: return 1.0;
    case Protocol::ll: return 2.0;            // 8-byte store = 4 B data + 4 B flag
    case Protocol::ll128: return 128.0 / 120.0;  // 128-byte line = 120 B data + 8 B flag
  }
  return 1.0;
}

}  // namespace ccsim
