#include "ccsim/parallel.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/error.hpp"
#include "sim/fd_io.hpp"

namespace ccsim::cli {

namespace {

struct Worker {
  std::size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string reply;  // status byte ('O' result, 'E' ccsim Error, 'I' other exception), then the payload
};

// Workers still running when the caller leaves (an error, a signal's unwinding) are stopped: a
// point of a thousand GPUs would otherwise go on for minutes and gigabytes after its sweep ended.
class Workers {
 public:
  ~Workers() {
    for (auto& w : running) {
      ::kill(w.pid, SIGKILL);
      ::close(w.fd);
      while (::waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
  std::vector<Worker> running;
};

Worker start(std::size_t index, const std::function<nlohmann::json(std::size_t)>& compute) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  // Output this process has buffered would otherwise be written again by the worker (its own
  // simulations flush before they fork).
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("cannot fork a worker: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker does not outlive its sweep
    if (::getppid() != parent) ::_exit(1);
    ::close(fds[0]);
    std::string reply;
    try {
      const std::vector<std::uint8_t> packed = nlohmann::json::to_msgpack(compute(index));
      reply.reserve(packed.size() + 1);
      reply.push_back('O');
      reply.append(packed.begin(), packed.end());
    } catch (const Error& e) {
      reply = std::string("E") + e.what();  // the user's error, as one process would give it
    } catch (const std::exception& e) {
      reply = std::string("I") + e.what();  // anything else stays an internal error
    } catch (...) {
      reply = "Iunknown exception";
    }
    write_all(fds[1], reply.data(), reply.size());
    ::close(fds[1]);
    ::_exit(0);  // no atexit handlers, no second flush of the parent's streams
  }
  ::close(fds[1]);
  return Worker{index, pid, fds[0], {}};
}

// Reads what a worker has written; true once it has closed its end and been reaped.
bool read_some(Worker& w) {
  char buf[1 << 16];
  const ssize_t n = ::read(w.fd, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return false;
  if (n > 0) {
    w.reply.append(buf, static_cast<std::size_t>(n));
    return false;
  }
  ::close(w.fd);
  int status = 0;
  while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A worker that did not end normally may have been cut off in the middle of its reply.
  if (w.reply.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exited with status " + std::to_string(WEXITSTATUS(status));
    w.reply = "Ea worker process " + how + " before it had reported (out of memory?)";
  }
  return true;
}

}  // namespace

void for_each_ordered(std::size_t n, int jobs, const std::function<nlohmann::json(std::size_t)>& compute,
                      const std::function<void(std::size_t, const nlohmann::json&)>& emit,
                      const std::function<void(std::size_t, std::size_t)>& done) {
  if (jobs <= 1 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) {
      const nlohmann::json r = compute(i);
      if (done) done(i + 1, 0);
      emit(i, r);
    }
    return;
  }
  Workers workers;
  auto& running = workers.running;
  std::map<std::size_t, std::string> finished;  // replies not yet emitted, by index
  std::size_t next = 0, next_emit = 0, ended = 0;
  std::size_t last = n;  // once an item has failed, none after it is started: its error ends the run
  while (next_emit < n) {
    while (running.size() < static_cast<std::size_t>(jobs) && next < last) running.push_back(start(next++, compute));
    if (auto it = finished.find(next_emit); it != finished.end()) {
      const std::string reply = std::move(it->second);
      finished.erase(it);
      if (reply[0] == 'E') throw Error(reply.substr(1));
      if (reply[0] != 'O') throw std::runtime_error(reply.substr(1));
      nlohmann::json result;
      try {
        result = nlohmann::json::from_msgpack(reply.begin() + 1, reply.end());
      } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("a worker's reply does not decode: ") + e.what());
      }
      emit(next_emit, result);
      ++next_emit;
      continue;
    }
    std::vector<pollfd> fds;
    for (const auto& w : running) fds.push_back({w.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(std::string("cannot wait for the workers: ") + std::strerror(errno));
    }
    for (std::size_t k = fds.size(); k-- > 0;) {
      if (fds[k].revents == 0) continue;
      if (!read_some(running[k])) continue;
      if (running[k].reply[0] != 'O') last = std::min(last, running[k].index + 1);
      finished.emplace(running[k].index, std::move(running[k].reply));
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      ++ended;
      if (done) done(ended, running.size());
    }
  }
}

std::function<void(std::size_t, std::size_t)> workers_progress(bool show, int jobs, std::size_t total, std::string what) {
  if (!show || jobs <= 1) return {};
  return [total, what = std::move(what)](std::size_t done, std::size_t running) {
    std::cerr << "\r\033[K[" << done << "/" << total << "] " << what << " simulated, " << running << " running" << std::flush;
  };
}

}  // namespace ccsim::cli
