#pragma once
// One exception type for everything a user can get wrong: the CLI prints what() as one line.
#include <stdexcept>
#include <string>

namespace ccsim {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace ccsim
