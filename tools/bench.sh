#!/usr/bin/env bash
# Engine speed: wall time and peak memory of a 1 GiB ring all_reduce on 64, 512 and 1024 GPUs and
# of a direct alltoall on 2, 4 and 8 DGX H100 nodes.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target ccsim
exec build/tools/ccsim bench "$@"
