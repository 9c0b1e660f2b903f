// The CUDA backend's entry points in a build without nvcc: each says so instead of running.
#include "kernels/gpu.hpp"

namespace ccsim::kernels::gpu {

namespace {
[[noreturn]] void unavailable() {
  throw GpuUnavailable("built without CUDA: nvcc was not found when ccsim was configured (reconfigure with the CUDA "
                       "toolkit on PATH and CCSIM_WITH_CUDA=ON)");
}
}  // namespace

bool built_with_cuda() { return false; }

Inventory inventory() {
  Inventory inv;
  inv.problem = "built without CUDA";
  return inv;
}

std::vector<std::vector<std::byte>> reduce_copy_on_device(int, DataType, ReduceOp, const std::vector<std::vector<std::byte>>&,
                                                          int, std::uint64_t, std::uint64_t, std::uint64_t, bool, int) {
  unavailable();
}
std::vector<std::byte> copy_on_device(int, const std::vector<std::byte>&, std::uint64_t, std::uint64_t) { unavailable(); }
GpuRunResult run_schedule(const Schedule&, const ExecutorOptions&) { unavailable(); }
BenchResult bench(const BenchOptions&, const std::function<void(const std::string&)>&) { unavailable(); }

}  // namespace ccsim::kernels::gpu
