#pragma once
// Whole reads and writes on a file descriptor (a pipe from a forked process), retried across
// signals and short transfers.
#include <cstddef>
#include <string>

namespace ccsim {

// Writes all `size` bytes; stops quietly if the other end is gone (the reader decides what a short
// reply means).
void write_all(int fd, const void* data, std::size_t size);

// Reads until end of file.
std::string read_all(int fd);

}  // namespace ccsim
