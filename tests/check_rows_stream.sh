#!/usr/bin/env bash
# check_rows_stream.sh CCSIM FORMAT [OPTION...]: `ccsim perf` writes each size's row (table or CSV)
# as that size ends, as nccl-tests does, not the whole table at exit: with its output in a file, the
# first row of a two-size sweep is there while the second size, far larger, is still being
# simulated. The run is stopped once the row shows, so the large point costs nothing, and its
# simulation processes must stop with it. OPTIONs go to ccsim perf (-j 2: both sizes start at once,
# each in a worker process that forks its own simulations).
set -uo pipefail
source "$(dirname "$0")/proc_tree.sh"
ccsim=$1
format=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Each format its own sweep, so that the two tests, run at once, can tell their processes apart.
if [ "$format" = csv ]; then sweep=(-b 64M -e 32G -f 512); else sweep=(-b 64M -e 64G -f 1024); fi
"$ccsim" perf all_reduce --nodes 16 "${sweep[@]}" -c 0 --format "$format" "$@" >"$out" 2>/dev/null &
pid=$!
row='^ *67108864 |^all_reduce,dgx-h100 x16,128,67108864,'
for _ in $(seq 1 1200); do  # up to 2 minutes for the first point on a slow machine
  grep -Eq "$row" "$out" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
running=no
kill -0 "$pid" 2>/dev/null && running=yes
# The large point is simulated in a child process of ccsim's (sim/simulate.cpp), or a worker's
# (-j); wait until one is there (ccsim first plans the point), so that stopping ccsim shows whether
# they stop too.
child=""
if [ "$running" = yes ]; then
  for _ in $(seq 1 600); do  # up to a minute
    child=$(descendants "$pid")
    [ -n "$child" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if ! grep -Eq "$row" "$out"; then
  echo "FAIL: no 64 MiB row in the output (--format $format):"
  cat "$out"
  exit 1
fi
if [ "$running" != yes ]; then
  echo "FAIL: the 64 MiB row showed only after the run ended (the large point should still be running)"
  exit 1
fi
# Stopping ccsim must stop the simulation it had running, not leave it to finish alone.
if [ -z "$child" ]; then
  echo "FAIL: no simulation or worker process under ccsim within a minute of the 64 MiB row"
  exit 1
fi
if [ -n "$child" ]; then
  for _ in $(seq 1 10); do  # a second: the kernel ends a child whose parent died at once
    alive=$(alive $child)
    [ -z "$alive" ] && break
    sleep 0.1
  done
  if [ -n "$alive" ]; then
    echo "FAIL: the simulation or worker process (pid$alive) outlived the stopped ccsim"
    kill -9 $alive 2>/dev/null
    exit 1
  fi
fi
if grep -q "Avg bus bandwidth" "$out"; then
  echo "FAIL: the table's totals were written before its last row"
  exit 1
fi
echo "ok: the 64 MiB row ($format${*:+, $*}) was written while the large point still ran${child:+, and the processes under ccsim (pid$child) stopped with it}"
