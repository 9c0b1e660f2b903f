#pragma once
// Whole-file reads for the inputs users name (models, topologies, scenarios, dumps), with the one
// error message every command gives for a file it cannot open.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ccsim {

// The file's bytes; Error "<path>: cannot open file" when it cannot be read.
std::string read_text_file(const std::string& path);
// The file parsed as JSON; Error "<origin>: invalid JSON: ..." when it is not (origin: the path).
nlohmann::json parse_json(const std::string& text, const std::string& origin);
nlohmann::json read_json_file(const std::string& path);
// Error "<origin>: <path>.<key>: unknown key (expected one of ...)" ("<origin>: <key>: ..." at the
// top level, path empty) for the first key of the object not in `allowed`: a misspelt key must not
// leave its default in place unseen.
void require_known_keys(const nlohmann::json& object, const std::vector<std::string>& allowed, const std::string& origin,
                        const std::string& path);

}  // namespace ccsim
