#!/usr/bin/env bash
# check_jobs.sh CCSIM MAP SCENARIO: points simulated side by side (--jobs, each in a worker process)
# give the same output, in the same order, as one at a time (perf, accuracy, run); an error inside a
# worker reaches the user as the one-line error it is without workers.
set -uo pipefail
ccsim=$1
map=$2
scenario=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A sweep over several algorithms and protocols (ring LL to NVLS tree) on two nodes.
sweep=(perf all_reduce --topo dgx-h100 --nodes 2 -b 1K -e 64M -f 16)
"$ccsim" "${sweep[@]}" -j 1 >"$dir/one.txt" 2>"$dir/one.err" || fail "perf -j 1: $(cat "$dir/one.err")"
"$ccsim" "${sweep[@]}" -j 3 >"$dir/three.txt" 2>"$dir/three.err" || fail "perf -j 3: $(cat "$dir/three.err")"
rows=$(grep -c '^ *[0-9]' "$dir/one.txt")
[ "$rows" -eq 5 ] || fail "perf -j 1 printed $rows rows, expected 5"
diff "$dir/one.txt" "$dir/three.txt" >/dev/null || fail "perf -j 3 differs from -j 1: $(diff "$dir/one.txt" "$dir/three.txt")"
"$ccsim" "${sweep[@]}" -j 3 --format json >"$dir/three.json" 2>/dev/null || fail "perf -j 3 --format json"
"$ccsim" "${sweep[@]}" -j 1 --format json >"$dir/one.json" 2>/dev/null || fail "perf -j 1 --format json"
diff "$dir/one.json" "$dir/three.json" >/dev/null || fail "perf -j 3 --format json differs from -j 1"

# accuracy: rows of several logs at once, each log printed whole and in the map's order.
acc=(accuracy --map "$map" --only abci-a100 --baseline nccl-model)
"$ccsim" "${acc[@]}" -j 1 >"$dir/acc1.txt" 2>"$dir/acc1.err" || fail "accuracy -j 1: $(cat "$dir/acc1.err")"
"$ccsim" "${acc[@]}" -j 4 >"$dir/acc4.txt" 2>"$dir/acc4.err" || fail "accuracy -j 4: $(cat "$dir/acc4.err")"
logs=$(grep -c '^# .*\.log$' "$dir/acc1.txt")
[ "$logs" -ge 4 ] || fail "accuracy --only abci-a100 ran $logs logs, expected at least 4"
diff "$dir/acc1.txt" "$dir/acc4.txt" >/dev/null || fail "accuracy -j 4 differs from -j 1: $(diff "$dir/acc1.txt" "$dir/acc4.txt" | head)"

# run: points that run, points NCCL's cost model rules out and points an algorithm refuses when
# compiled (n/a, with the reason), in every variant's table and in results.csv.
"$ccsim" run "$scenario" --out "$dir/run1" -j 1 >"$dir/run1.txt" 2>"$dir/run1.err" || fail "run -j 1: $(cat "$dir/run1.err")"
"$ccsim" run "$scenario" --out "$dir/run3" -j 3 >"$dir/run3.txt" 2>"$dir/run3.err" || fail "run -j 3: $(cat "$dir/run3.err")"
grep -q '^# n/a bruck: algorithm bruck does not implement all_reduce' "$dir/run1.txt" || fail "run -j 1: no n/a line for bruck"
diff "$dir/run1.txt" "$dir/run3.txt" >/dev/null || fail "run -j 3 differs from -j 1: $(diff "$dir/run1.txt" "$dir/run3.txt" | head)"
diff "$dir/run1/results.csv" "$dir/run3/results.csv" >/dev/null || fail "run -j 3 wrote another results.csv than -j 1"

# An error raised while a worker simulates a point (bruck has no all_reduce): one line, status 1.
"$ccsim" perf all_reduce --topo dgx-h100 -b 8 -e 64M -f 8 -j 2 --algo bruck >/dev/null 2>"$dir/err.txt"
status=$?
[ "$status" -eq 1 ] || fail "perf -j 2 --algo bruck exited $status, expected 1"
grep -q '^ccsim: error: algorithm bruck does not implement all_reduce' "$dir/err.txt" || fail "unexpected error text: $(cat "$dir/err.txt")"
[ "$(wc -l <"$dir/err.txt")" -eq 1 ] || fail "expected one error line, got: $(cat "$dir/err.txt")"
echo "ok: perf ($rows sizes, table and JSON), accuracy ($logs logs) and run (n/a points too) print the same with --jobs; a worker's error is one line"
