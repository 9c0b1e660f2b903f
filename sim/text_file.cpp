#include "sim/text_file.hpp"

#include <fstream>
#include <sstream>

#include "sim/error.hpp"

namespace ccsim {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ccsim
