#include "ccsim/parallel.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
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
  std::uint64_t peak_rss = 0;  // bytes, once it has ended
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// Until a worker has ended, how large one grows is read off the running ones: the next starts once
// the last started has had this long to show it.
constexpr std::chrono::milliseconds kFirstWorkersApart{1000};

// MemAvailable of /proc/meminfo in bytes: what the kernel can give without swapping. 0 where unread.
std::uint64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return kib << 10;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

std::optional<std::uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;  // also cgroup v2's "max": no limit
}

// A memory.stat entry ("inactive_file 123"), 0 where absent.
std::uint64_t stat_entry(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

// What this process's memory cgroup still allows (its limit less its usage), where it has a limit:
// a container's limit, which /proc/meminfo does not show. cgroup v2 (memory.max, memory.current)
// or v1 (memory.limit_in_bytes, memory.usage_in_bytes), at the group /proc/self/cgroup names and
// else at the mount's root (a cgroup namespace's own group). The usage counts the page cache,
// whose inactive part the kernel reclaims before it fails an allocation: that part counts as
// room (memory.stat inactive_file, v1 total_inactive_file), as container runtimes reckon a
// group's working set.
std::optional<std::uint64_t> cgroup_room() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  // A group's directory and its files' names, which differ between cgroup v2 and v1.
  struct Group {
    std::string dir;
    const char *limit, *usage, *inactive;
  };
  std::vector<Group> groups;
  while (std::getline(in, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers.empty()) {
      for (const std::string& dir : {"/sys/fs/cgroup" + path, std::string("/sys/fs/cgroup")})
        groups.push_back({dir, "/memory.max", "/memory.current", "inactive_file"});
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      for (const std::string& dir : {"/sys/fs/cgroup/memory" + path, std::string("/sys/fs/cgroup/memory")})
        groups.push_back({dir, "/memory.limit_in_bytes", "/memory.usage_in_bytes", "total_inactive_file"});
    }
  }
  std::optional<std::uint64_t> room;
  for (const auto& g : groups) {
    const auto limit = read_number(g.dir + g.limit), usage = read_number(g.dir + g.usage);
    if (!limit || !usage || *limit >= (std::uint64_t{1} << 60)) continue;  // v1 writes "no limit" as ~2^63
    const std::uint64_t reclaimable = stat_entry(g.dir + "/memory.stat", g.inactive);
    const std::uint64_t used = *usage - std::min(*usage, reclaimable);
    const std::uint64_t left = *limit - std::min(*limit, used);
    room = room ? std::min(*room, left) : left;
  }
  return room;
}

// What more this process's children may take: the lesser of the system's and the cgroup's. Never
// 0 where known (MemoryOutlook reads 0 as unknown): a full cgroup has 1 byte left.
std::uint64_t memory_available() {
  const std::uint64_t system = meminfo_available();
  const auto group = cgroup_room();
  if (!group) return system;
  return std::max<std::uint64_t>(1, system == 0 ? *group : std::min(system, *group));
}

// What a process holds in memory now (resident set, /proc/PID/statm), in bytes; 0 where unread.
std::uint64_t resident_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string gigabytes(std::uint64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / 1e9 << " GB";
  return out.str();
}

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
  rusage usage{};
  while (::wait4(w.pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  w.peak_rss = static_cast<std::uint64_t>(std::max(0L, usage.ru_maxrss)) << 10;  // Linux counts KiB
  // A worker that did not end normally may have been cut off in the middle of its reply.
  if (w.reply.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exited with status " + std::to_string(WEXITSTATUS(status));
    w.reply = "Ea worker process " + how + " before it had reported (out of memory?)";
  }
  return true;
}

}  // namespace

bool room_for_another(const MemoryOutlook& m) {
  if (m.running_rss.empty() || m.available == 0) return true;
  std::uint64_t need = m.worker_peak;
  for (const auto rss : m.running_rss) need = std::max(need, rss);
  if (need == 0) return true;
  std::uint64_t growth = 0;  // what the running ones may still take, each up to `need`
  for (const auto rss : m.running_rss) growth += need - std::min(need, rss);
  const std::uint64_t left = m.available - std::min(m.available, growth);
  return left >= need + need / 4;
}

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
  std::uint64_t worker_peak = 0;
  bool ended_one = false, said_held_back = false;
  // Whether the next item may start now; false leaves it for a later look (a worker's end, or the
  // poll's timeout below).
  auto room = [&] {
    if (running.empty()) return true;
    if (!ended_one && std::chrono::steady_clock::now() - running.back().started < kFirstWorkersApart) return false;
    MemoryOutlook m;
    m.worker_peak = worker_peak;
    for (const auto& w : running) m.running_rss.push_back(resident_bytes(w.pid));
    m.available = memory_available();
    if (room_for_another(m)) return true;
    if (!said_held_back) {
      said_held_back = true;
      std::uint64_t largest = worker_peak;
      for (const auto rss : m.running_rss) largest = std::max(largest, rss);
      std::cerr << "ccsim: note: --jobs " << jobs << ": " << running.size() << " at once for now, as the memory allows ("
                << gigabytes(m.available) << " available, a worker has taken up to " << gigabytes(largest) << ")\n";
    }
    return false;
  };
  while (next_emit < n) {
    bool held_back = false;
    while (running.size() < static_cast<std::size_t>(jobs) && next < last) {
      if (!room()) {
        held_back = true;
        break;
      }
      running.push_back(start(next++, compute));
    }
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
    // A held-back start is looked at again every quarter second: memory frees as much elsewhere.
    if (::poll(fds.data(), fds.size(), held_back ? 250 : -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(std::string("cannot wait for the workers: ") + std::strerror(errno));
    }
    for (std::size_t k = fds.size(); k-- > 0;) {
      if (fds[k].revents == 0) continue;
      if (!read_some(running[k])) continue;
      if (running[k].reply[0] != 'O') last = std::min(last, running[k].index + 1);
      worker_peak = std::max(worker_peak, running[k].peak_rss);
      ended_one = true;
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
