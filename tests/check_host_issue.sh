#!/usr/bin/env bash
# check_host_issue.sh CCSIM: one host thread driving G GPUs (nccl-tests -g G) cannot issue a call
# faster than G x the model's host_issue_us; where the GPUs take longer, their time stands.
set -euo pipefail
ccsim=$1
issue_us=$("$ccsim" model hopper | python3 -c 'import json,sys; print(json.load(sys.stdin)["parameters"]["host_issue_us"]["value"])')
time_at() {  # time_at SIZE G -> out-of-place time in us
  "$ccsim" perf broadcast --topo dgx-h100 -b "$1" -e "$1" -g "$2" --format csv | awk -F, 'NR == 2 { print $12 }'
}
python3 - "$issue_us" "$(time_at 8 1)" "$(time_at 8 8)" "$(time_at 64M 1)" "$(time_at 64M 8)" <<'PY'
import sys
issue, small1, small8, big1, big8 = map(float, sys.argv[1:])
assert small1 > issue, f"one GPU per thread: 8 B takes {small1} us, more than the {issue} us issue time"
assert abs(small8 - 8 * issue) < 1e-6, f"8 GPUs per thread: 8 B should take 8 x {issue} us, got {small8}"
# -g 8 is one process, whose ranks reach each other by NCCL's direct pointers: a call's last
# receive has no slice to copy out of a FIFO, which a process per GPU pays (at most 1% here).
assert big1 >= big8 > 8 * issue and big1 - big8 < 0.01 * big1, f"64 MiB is GPU-bound either way: {big1} vs {big8} us"
print(f"ok: 8 B {small1:.2f} -> {small8:.2f} us with -g 8; 64 MiB {big1:.1f} us either way")
PY
# nccl-tests issues an alltoall as a send and a receive per peer on each GPU: a thread driving 8 of
# 8 ranks enqueues 128 operations per call, each host_p2p_op_us on top of the 8 launches.
op_us=$("$ccsim" model hopper | python3 -c 'import json,sys; print(json.load(sys.stdin)["parameters"]["host_p2p_op_us"]["value"])')
a2a8=$("$ccsim" perf alltoall --topo dgx-h100 -b 1K -e 1K -g 8 -c 0 --format csv | awk -F, 'NR == 2 { print $12 }')
a2a1=$("$ccsim" perf alltoall --topo dgx-h100 -b 1K -e 1K -g 1 -c 0 --format csv | awk -F, 'NR == 2 { print $12 }')
python3 - "$issue_us" "$op_us" "$a2a8" "$a2a1" <<'PY'
import sys
issue, op, t8, t1 = map(float, sys.argv[1:])
assert op > 0 and abs(t8 - (8 * issue + 128 * op)) < 0.01, f"alltoall -g 8: {t8} us, expected 8 x {issue} + 128 x {op}"
assert t1 < t8, f"one GPU per thread enqueues 16 operations, not 128: {t1} us vs {t8}"
print(f"ok: 1 KiB alltoall {t1:.2f} us with -g 1, {t8:.2f} us with -g 8 (8 launches, 128 operations)")
PY
# The JSON says which rows the host's issue time decided.
"$ccsim" perf broadcast --topo dgx-h100 -b 8 -e 64M -f 8388608 -g 8 --format json | python3 -c '
import json, sys
rows = json.load(sys.stdin)["rows"]
flags = [(r["size_bytes"], r["host_bound"]) for r in rows]
assert flags == [(8, True), (67108864, False)], flags
print("ok: host_bound", flags)'
