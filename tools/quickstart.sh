#!/usr/bin/env bash
# Sets up ccsim on Debian 12, builds it (Release, into build/) and runs the default job:
# a simulated all_reduce_perf sweep on a DGX H100.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target ccsim
exec build/tools/ccsim perf all_reduce --topo dgx-h100 -b 8 -e 8G -f 2 "$@"
