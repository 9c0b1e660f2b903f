#include "ccsim/plot.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#ifndef CCSIM_PLOT_SCRIPT
#define CCSIM_PLOT_SCRIPT "tools/plot.py"
#endif

namespace ccsim::cli {

namespace {

// Runs argv (PATH lookup) and returns its exit status; -1 when it cannot start. Output goes to
// /dev/null when `quiet`. No shell: paths with spaces need no quoting.
int run(const std::vector<std::string>& argv, bool quiet) {
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (quiet) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) {
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
      }
    } else {
      ::dup2(STDERR_FILENO, STDOUT_FILENO);  // what it says joins ccsim's notes, not the tables
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The first Python that has matplotlib: $CCSIM_PYTHON, python3 on the PATH, then Debian's own
// /usr/bin/python3 (python3-matplotlib installs there, while a pyenv or venv python3 may come
// first on the PATH without it).
std::optional<std::string> python_with_matplotlib() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("CCSIM_PYTHON"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back("python3");
  candidates.emplace_back("/usr/bin/python3");
  for (const auto& py : candidates)
    if (run({py, "-c", "import matplotlib"}, true) == 0) return py;
  return std::nullopt;
}

}  // namespace

bool plot_results(const std::string& directory) {
  const std::string script = CCSIM_PLOT_SCRIPT;
  if (!std::filesystem::exists(script)) {
    std::cerr << "ccsim: note: no plots: the plot script " << script << " is missing\n";
    return false;
  }
  const auto python = python_with_matplotlib();
  if (!python) {
    std::cerr << "ccsim: note: no plots: they need python3 with matplotlib (Debian: apt-get install python3-matplotlib)\n";
    return false;
  }
  const int rc = run({*python, script, (std::filesystem::path(directory) / "results.csv").string(), "--out", directory}, false);
  if (rc != 0) {
    std::cerr << "ccsim: note: the plot script failed (exit status " << rc << ")\n";
    return false;
  }
  return true;
}

}  // namespace ccsim::cli
