#include "ccsim/validators.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/units.hpp"

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

CLI::Validator finite_number(double low, bool strict) {
  return CLI::Validator(
      [low, strict](std::string& v) {
        double x = 0;
        try {
          x = std::stod(v);
        } catch (const std::exception&) {
          return "expected a number, got " + v;
        }
        const bool ok = std::isfinite(x) && (strict ? x > low : x >= low);
        return ok ? std::string() : "expected a finite number " + std::string(strict ? "> " : ">= ") + format_number(low) + ", got " + v;
      },
      "FLOAT");
}

}  // namespace ccsim::cli
