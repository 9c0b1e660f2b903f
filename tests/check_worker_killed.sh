#!/usr/bin/env bash
# check_worker_killed.sh CCSIM: a worker process of `ccsim perf -j 2` that dies (the kernel's
# out-of-memory killer, say) ends the run with one error line and status 1, after the rows of the
# sizes before it; the simulation that worker had started stops with it.
set -uo pipefail
source "$(dirname "$0")/proc_tree.sh"
ccsim=$1
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; kill -9 "$pid" 2>/dev/null; exit 1; }
"$ccsim" perf all_reduce --nodes 16 -b 64M -e 64G -f 1024 -c 0 -j 2 >"$out" 2>"$err" &
pid=$!
# The 64 MiB row goes out once its worker has ended; the 64 GiB point's worker is then the only
# child left, and it has a simulation of its own under it once it has compiled the point.
for _ in $(seq 1 1200); do
  grep -Eq '^ *67108864 ' "$out" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
grep -Eq '^ *67108864 ' "$out" || fail "no 64 MiB row: $(cat "$out" "$err")"
worker="" below=""
for _ in $(seq 1 600); do  # up to a minute
  worker=$(children "$pid")
  [ -n "$worker" ] && below=$(descendants $worker)
  [ -n "$below" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$below" ] || fail "no worker with a simulation under it (workers:${worker:- none})"
kill -9 $worker
wait "$pid"
status=$?
[ "$status" -eq 1 ] || fail "ccsim exited $status after its worker was killed, expected 1"
expected="ccsim: error: a worker process was killed by signal 9 before it had reported (out of memory?)"
[ "$(cat "$err")" = "$expected" ] || fail "expected one line '$expected', got: $(cat "$err")"
grep -q "Avg bus bandwidth" "$out" && fail "the table's totals were written although a point failed"
for _ in $(seq 1 10); do
  left=$(alive $below)
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || { kill -9 $left; fail "the killed worker's simulation (pid$left) outlived it"; }
echo "ok: a killed worker ends ccsim with '$expected' after the 64 MiB row, and its simulation (pid$below) stopped with it"
