#!/usr/bin/env bash
# check_iters.sh CCSIM: `ccsim perf -n N` times nccl-tests' loop of N calls. A rooted call's calls
# overlap back to back, so the loop's first call (its whole makespan) is spread over N: fewer calls,
# more time per call, down to the steady state. A ring all_reduce, where every rank waits for every
# other, takes the same time per call whatever N.
set -euo pipefail
ccsim=$1
time_at() {  # time_at COLLECTIVE N -> out-of-place time in us
  "$ccsim" perf "$1" --topo dgx-a100 -b 8M -e 8M -c 0 -n "$2" --format csv | awk -F, 'NR == 2 { print $12 }'
}
python3 - "$(time_at broadcast 1)" "$(time_at broadcast 20)" "$(time_at broadcast 100000)" \
          "$(time_at all_reduce 1)" "$(time_at all_reduce 20)" <<'PY'
import sys
b1, b20, binf, a1, a20 = map(float, sys.argv[1:])
assert b1 > b20 > binf, f"broadcast per call with 1, 20, 100000 calls: {b1}, {b20}, {binf} us"
# per call = period + (first - period) / n: the three points lie on that line in 1/n.
period = binf
first = b1
expected20 = period + (first - period) / 20
assert abs(b20 - expected20) <= 0.011 * expected20, f"20 calls: {b20} us, expected {expected20:.2f}"
assert abs(a1 - a20) <= 0.01 * a20, f"all_reduce: {a1} us alone, {a20} us in a loop of 20"
print(f"ok: broadcast {b1:.1f} / {b20:.1f} / {binf:.1f} us per call for 1 / 20 / 100000 calls; all_reduce {a20:.1f} us")
PY
