#!/usr/bin/env bash
# gpu-prebuild.sh [ARCH]: builds, here, the two programs tools/gpu-check.sh runs on a GPU machine
# (ccsim and the GPU tests) for compute capability ARCH (default 90: H100/H200), into .gpu-prebuilt/
# (ignored by git). Carry that folder with .gpu-deps/ and gpu-check.sh runs them instead of building
# there: on a lent GPU machine the build took 100 s of a session's 15 device minutes.
#
# Built without Ceres (calibrate is not needed there), and linked against the Debian 12 libraries that
# tools/gpu-deps.sh fetches (SimGrid, pugixml, tcmalloc), which gpu-check.sh unpacks and puts on
# LD_LIBRARY_PATH. Needs nvcc here (CUDA 12 or later).
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-90}
build="build-gpu-prebuilt"
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCCSIM_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DCMAKE_DISABLE_FIND_PACKAGE_Ceres=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target ccsim ccsim_gpu_tests
mkdir -p .gpu-prebuilt
cp "$build/tools/ccsim" "$build/tests/ccsim_gpu_tests" .gpu-prebuilt/
strip .gpu-prebuilt/ccsim .gpu-prebuilt/ccsim_gpu_tests
echo "$arch" >.gpu-prebuilt/arch
git rev-parse --short HEAD >.gpu-prebuilt/commit 2>/dev/null || true
du -sh .gpu-prebuilt | cut -f1 | xargs echo "gpu-prebuild: .gpu-prebuilt/ for sm_$arch:"
