#!/usr/bin/env bash
# gpu-check.sh [OUTDIR]: the CUDA backend's checks on a machine with an NVIDIA GPU, in one go and
# without the network. Builds ccsim with CUDA (for the GPU's own architecture), runs the GPU tests,
# `ccsim gpu bench`, and for ring all_reduce and ring all_gather with 8 virtual ranks at 1 MiB..1 GiB
# `ccsim gpu run` then `ccsim validate` on what it measured; prints a short table at the end.
#
# Dependencies: a bare GPU machine has CUDA and CMake but not this project's Debian packages. Fetch
# them here with tools/gpu-deps.sh (into .gpu-deps/) and carry that folder: this script unpacks it
# with dpkg -x. Where SimGrid cannot be built or linked there, it builds without it (kernels,
# executor and GPU commands still work), skips validate, and says so; the measured sweeps it writes
# can be validated later elsewhere: ccsim validate COLL --bench OUTDIR/bench-model.json --measured
# OUTDIR/run-COLL.json.
#
# Carried programs: where .gpu-prebuilt/ holds ccsim and ccsim_gpu_tests (tools/gpu-prebuild.sh
# builds them elsewhere for the GPU's compute capability), the script runs those and builds nothing.
#
# The outcome is in the summary (and summary.txt), not the exit status: every step runs, each under
# a time limit, and says whether it failed. OUTDIR gets at most 8 files: summary.txt, build.log, gpu-tests.log, gpu-bench.txt, bench-model.json,
# run-all_reduce.json, run-all_gather.json, validate.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=$(mkdir -p "${1:-gpu-check-out}" && cd "${1:-gpu-check-out}" && pwd)
build=${CCSIM_GPU_BUILD_DIR:-build-gpu}
t0=$(date +%s)
summary="$out/summary.txt"
: >"$summary"
say() { echo "gpu-check: $*" | tee -a "$summary"; }
elapsed() { echo "$(( $(date +%s) - t0 )) s"; }

# --- dependencies carried as Debian packages --------------------------------------------------
prefix=/tmp/ccsim-gpu-deps
cmake_extra=()
unpack() {  # a .deb is an ar archive holding data.tar.*: dpkg -x where there is dpkg
  if command -v dpkg >/dev/null; then
    dpkg -x "$1" "$prefix"
  else
    local t
    t=$(mktemp -d)
    (cd "$t" && ar x "$OLDPWD/$1" && tar -xf data.tar.* -C "$prefix")
    rm -rf "$t"
  fi
}
if compgen -G ".gpu-deps/*.deb" >/dev/null; then
  mkdir -p "$prefix"
  for f in .gpu-deps/*.deb; do unpack "$f" || say "could not unpack $f"; done
  lib="$prefix/usr/lib/x86_64-linux-gnu"
  # Debian keeps Boost's and pugixml's CMake files under the multiarch directory, which CMake
  # searches only when it knows the library architecture: name it.
  export CMAKE_PREFIX_PATH="$prefix/usr:$lib/cmake${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The carried .pc files say prefix=/usr: the sysroot puts them where they were unpacked.
  export PKG_CONFIG_LIBDIR="$lib/pkgconfig:$prefix/usr/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$prefix"
  pkgconf="$(command -v pkg-config || true)"
  [ -x "$prefix/usr/bin/pkgconf" ] && pkgconf="$prefix/usr/bin/pkgconf"
  [ -n "$pkgconf" ] && cmake_extra+=("-DPKG_CONFIG_EXECUTABLE=$pkgconf")
  say "unpacked $(ls .gpu-deps/*.deb | wc -l) carried packages into $prefix"
else
  say "no .gpu-deps/ carried: using what is installed (tools/gpu-deps.sh fetches the packages)"
fi

# --- build --------------------------------------------------------------------------------------
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
export CMAKE_POLICY_VERSION_MINIMUM=3.5  # a CMake 4 reading Boost 1.74's older config files
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
[ -n "$arch" ] || arch=90
if command -v nvidia-smi >/dev/null; then nvidia-smi -L 2>&1 | tee -a "$summary"; else say "nvidia-smi not found"; fi
prebuilt=0
if [ -x .gpu-prebuilt/ccsim ] && [ -x .gpu-prebuilt/ccsim_gpu_tests ]; then
  built_for=$(cat .gpu-prebuilt/arch 2>/dev/null || echo unknown)
  [ "$built_for" = "$arch" ] || say "warning: .gpu-prebuilt/ was built for sm_$built_for, this GPU is sm_$arch"
  missing=$(ldd .gpu-prebuilt/ccsim 2>/dev/null | grep "not found" | awk '{print $1}' | tr '\n' ' ')
  if [ -n "$missing" ]; then
    say "carried .gpu-prebuilt/ccsim lacks libraries here ($missing): building instead"
  else
    prebuilt=1
  fi
fi
build_here() {
  configure() {
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCCSIM_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      ${cmake_extra[@]+"${cmake_extra[@]}"} "$@" >>"$out/build.log" 2>&1
  }
  simgrid=1
  if [ "${CCSIM_GPU_SIMGRID:-ON}" = OFF ]; then
    say "CCSIM_GPU_SIMGRID=OFF: building without SimGrid; validate is skipped"
    simgrid=0
    configure -DCCSIM_WITH_SIMGRID=OFF || { say "FAILED: configure (see build.log)"; exit 1; }
  elif ! configure -DCCSIM_WITH_SIMGRID=ON; then
    say "configure with SimGrid failed (see build.log): building without it; validate is skipped"
    simgrid=0
    rm -rf "$build"
    configure -DCCSIM_WITH_SIMGRID=OFF || { say "FAILED: configure (see build.log)"; exit 1; }
  fi
  grep -q 'CMAKE_CUDA_COMPILER:.*nvcc' "$build/CMakeCache.txt" || { say "FAILED: CMake found no nvcc"; exit 1; }
  if ! cmake --build "$build" -j"$(nproc)" --target ccsim ccsim_gpu_tests >>"$out/build.log" 2>&1; then
    if [ $simgrid = 1 ]; then
      say "build with SimGrid failed (see build.log): building without it; validate is skipped"
      simgrid=0
      rm -rf "$build"
      configure -DCCSIM_WITH_SIMGRID=OFF && cmake --build "$build" -j"$(nproc)" --target ccsim ccsim_gpu_tests \
        >>"$out/build.log" 2>&1 || { say "FAILED: build (see build.log)"; exit 1; }
    else
      say "FAILED: build (see build.log)"; exit 1
    fi
  fi
  say "built for sm_$arch with$([ $simgrid = 1 ] || echo out) SimGrid in $(elapsed)"
  ccsim="$build/tools/ccsim"
  gpu_tests="$build/tests/ccsim_gpu_tests"
}
if [ $prebuilt = 1 ]; then
  simgrid=1
  say "running the carried programs in .gpu-prebuilt/ (built for sm_$built_for at commit $(cat .gpu-prebuilt/commit 2>/dev/null || echo unknown)), no build"
  ccsim=.gpu-prebuilt/ccsim
  gpu_tests=.gpu-prebuilt/ccsim_gpu_tests
else
  build_here
fi

# --- GPU tests, bench, run, validate ------------------------------------------------------------
# Each step has a time limit (with a build of about 2.5 min they add up to 8 min), so that a hang
# cannot eat the machine's whole lease.
timeout 120 stdbuf -oL "$gpu_tests" >"$out/gpu-tests.log" 2>&1
rc=$?
case $rc in
  0) tests="passed" ;;
  77) tests="SKIPPED ($(head -1 "$out/gpu-tests.log"))" ;;
  124) tests="TIMED OUT after 120 s (see gpu-tests.log)" ;;
  *) tests="FAILED (exit $rc, see gpu-tests.log)" ;;
esac
say "GPU tests: $tests ($(grep -E '^\[doctest\] (test cases|assertions)' "$out/gpu-tests.log" | tr '\n' ' '))"

{ "$ccsim" gpu info; timeout 60 stdbuf -oL "$ccsim" gpu bench --out "$out/bench-model.json"; } >"$out/gpu-bench.txt" 2>&1 ||
  say "FAILED: gpu bench (see gpu-bench.txt)"
export CUDA_DEVICE_MAX_CONNECTIONS=32  # one hardware queue per stream: no false dependencies
: >"$out/validate.txt"
for coll in all_reduce all_gather; do
  if ! timeout 60 "$ccsim" gpu run "$coll" --algo ring --ranks 8 -b 1M -e 1G -f 2 --check-limit 64M --json "$out/run-$coll.json" \
      >>"$out/validate.txt" 2>&1; then
    say "FAILED: gpu run $coll (see validate.txt)"
    continue
  fi
  if [ $simgrid = 1 ] && [ -f "$out/bench-model.json" ]; then
    timeout 30 "$ccsim" validate "$coll" --bench "$out/bench-model.json" --measured "$out/run-$coll.json" >>"$out/validate.txt" 2>&1 ||
      say "FAILED: validate $coll (see validate.txt)"
  fi
done

# --- the short table ----------------------------------------------------------------------------
{
  echo "== gpu-check summary ($(elapsed)) =="
  grep -E '(cudaMemcpy D2D|copy kernel|reduce-copy sum) +(268435456|1073741824) B' "$out/gpu-bench.txt" | sed 's/^ */  /'
  if [ -f "$out/bench-model.json" ]; then
    python3 - "$out/bench-model.json" <<'PY' || true
import json, sys
b = json.load(open(sys.argv[1]))["bench"]
copy = max(p["gbps"] for p in b["copy"] if p["bytes"] >= 256 << 20)
for r in b["reduce_copy"]:
    for p in r["points"]:
        if p["bytes"] >= 256 << 20:
            print(f"  reduce-copy {r['type']:9} {p['bytes'] >> 20:5} MiB: {p['gbps']:7.1f} GB/s = {100 * p['gbps'] / copy:5.1f}% of D2D copy {copy:.1f} GB/s (target >= 90%)")
print(f"  launch {b['launch_us']:.2f} us, dependent step {b['step_us']:.2f} us, event hand-off {b['event_us']:.2f} us")
PY
  fi
  grep -E '^# validate|^# steps issued|#wrong|out-of-place' "$out/validate.txt" | sed 's/^/  /' | sort -u
} | tee -a "$summary"
