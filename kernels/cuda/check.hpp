#pragma once
// CUDA runtime errors become ccsim errors that name the call and where it was made.
#include <cuda_runtime.h>

#include <string>

#include "kernels/gpu.hpp"

namespace ccsim::kernels::gpu {

[[noreturn]] inline void cuda_failed(cudaError_t err, const char* call, const char* file, int line) {
  const std::string what = std::string(call) + ": " + cudaGetErrorString(err) + " (" + file + ":" + std::to_string(line) + ")";
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) throw GpuUnavailable("no usable GPU: " + what);
  throw Error("CUDA: " + what);
}

}  // namespace ccsim::kernels::gpu

#define CCSIM_CUDA(call)                                                                  \
  do {                                                                                    \
    const cudaError_t ccsim_err_ = (call);                                                \
    if (ccsim_err_ != cudaSuccess) ::ccsim::kernels::gpu::cuda_failed(ccsim_err_, #call, __FILE__, __LINE__); \
  } while (0)
