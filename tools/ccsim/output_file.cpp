#include "ccsim/output_file.hpp"

#include <filesystem>
#include <fstream>

namespace ccsim::cli {

CLI::Validator writable_file() {
  return CLI::Validator(
      [](std::string& path) {
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) return path + ": is a directory (expected a file to write)";
        const bool existed = std::filesystem::exists(path, ec);
        {
          std::ofstream probe(path, std::ios::app);  // append: an existing file is not truncated yet
          if (!probe) return path + ": cannot open for writing";
        }
        if (!existed) std::filesystem::remove(path, ec);
        return std::string();
      },
      "FILE");
}

}  // namespace ccsim::cli
