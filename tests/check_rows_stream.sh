#!/usr/bin/env bash
# check_rows_stream.sh CCSIM FORMAT: `ccsim perf` writes each size's row (table or CSV) as that size
# ends, as nccl-tests does, not the whole table at exit: with its output in a file, the first row of
# a two-size sweep is there while the second size, far larger, is still being simulated. The run is
# stopped once the row shows, so the large point costs nothing.
set -uo pipefail
ccsim=$1
format=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$ccsim" perf all_reduce --nodes 16 -b 64M -e 64G -f 1024 -c 0 --format "$format" >"$out" 2>/dev/null &
pid=$!
row='^ *67108864 |^all_reduce,dgx-h100 x16,128,67108864,'
for _ in $(seq 1 1200); do  # up to 2 minutes for the first point on a slow machine
  grep -Eq "$row" "$out" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
running=no
kill -0 "$pid" 2>/dev/null && running=yes
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if ! grep -Eq "$row" "$out"; then
  echo "FAIL: no 64 MiB row in the output (--format $format):"
  cat "$out"
  exit 1
fi
if [ "$running" != yes ]; then
  echo "FAIL: the 64 MiB row showed only after the run ended (the 64 GiB point should still be running)"
  exit 1
fi
if grep -q "Avg bus bandwidth" "$out"; then
  echo "FAIL: the table's totals were written before its last row"
  exit 1
fi
echo "ok: the 64 MiB row ($format) was written while the 64 GiB point still ran"
