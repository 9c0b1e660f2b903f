#include "sim/text_file.hpp"

#include <algorithm>
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
  } catch (const nlohmann::json::out_of_range& e) {  // a number beyond a double, 1e400
    throw Error(origin + ": invalid JSON: " + e.what());
  }
}

nlohmann::json read_json_file(const std::string& path) { return parse_json(read_text_file(path), path); }

void require_known_keys(const nlohmann::json& object, const std::vector<std::string>& allowed, const std::string& origin,
                        const std::string& path) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw Error(origin + ": " + (path.empty() ? key : path + "." + key) + ": unknown key (expected one of " + list + ")");
  }
}

}  // namespace ccsim
