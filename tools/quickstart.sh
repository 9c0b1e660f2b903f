#!/usr/bin/env bash
# Sets up ccsim on Debian 12, builds it (Release, into build/) and runs the default job: the
# ring-vs-tree scenario on DGX H100 nodes (1, 2 and 4 nodes), with tables on stdout and results and
# PNG/SVG plots in results/ring-vs-tree-dgx-h100/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target ccsim
# One point per core at once (ccsim run --jobs), unless the arguments say how many.
jobs=(--jobs "$(nproc)")
for arg in "$@"; do
  case "$arg" in -j*|--jobs*) jobs=() ;; esac
done
exec build/tools/ccsim run scenarios/ring-vs-tree-dgx-h100.json --out results/ring-vs-tree-dgx-h100 --plot "${jobs[@]}" "$@"
