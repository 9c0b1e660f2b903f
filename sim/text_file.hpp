#pragma once
// Whole-file reads for the inputs users name (models, topologies, scenarios, dumps), with the one
// error message every command gives for a file it cannot open.
#include <string>

namespace ccsim {

// The file's bytes; Error "<path>: cannot open file" when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace ccsim
