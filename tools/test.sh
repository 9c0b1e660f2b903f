#!/usr/bin/env bash
# Sets up ccsim on Debian 12, builds everything with warnings as errors, and runs the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCCSIM_WERROR=ON -DCCSIM_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j"$(nproc)"
