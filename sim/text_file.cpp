#include "sim/text_file.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"

namespace ccsim {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json parse_json(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(origin + ": invalid JSON: " + e.what());
  }
}

nlohmann::json read_json_file(const std::string& path) { return parse_json(read_text_file(path), path); }

}  // namespace ccsim
