#!/usr/bin/env bash
# check_threads.sh CCSIM: a log's "nThread T nGpus G" header makes T x G ranks one process, as
# perf's -t T -g G does: NCCL joins them by direct pointers, so a collective's last Simple receive
# copies nothing out of a FIFO, and the log simulates faster than the same log with nThread 1.
set -euo pipefail
ccsim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for t in 1 8; do
  cat > "$dir/h100-8g-allgather-t$t.log" <<LOG
# nThread $t nGpus 1 minBytes 67108864 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
    67108864       2097152     float    none      -1    200.0  335.54  293.60      0    200.0  335.54  293.60      0
LOG
done
out=$("$ccsim" accuracy --topo dgx-h100 "$dir/h100-8g-allgather-t1.log" "$dir/h100-8g-allgather-t8.log" --json "$dir/a.json")
grep -q "8 host threads a process" <<<"$out" || { echo "no '8 host threads a process' in the report:"; echo "$out"; exit 1; }
perf_t8=$("$ccsim" perf all_gather --topo dgx-h100 -b 64M -e 64M -t 8 -g 1 -c 0 --format csv | awk -F, 'NR == 2 { print $12 }')
python3 - "$dir/a.json" "$perf_t8" <<'PY'
import json, sys
logs = json.load(open(sys.argv[1]))
t = {l["threads"]: l["rows"][0]["simulated_us"] for l in logs}
perf_t8 = float(sys.argv[2])
assert set(t) == {1, 8}, t
assert t[8] < t[1], f"one process of 8 ranks should skip the FIFO copy: {t[8]} us vs {t[1]} us"
assert abs(t[8] - perf_t8) < 0.01 * perf_t8, f"accuracy's nThread 8 ({t[8]} us) should be perf -t 8 -g 1's ({perf_t8} us)"
print(f"ok: 64 MiB all_gather {t[1]:.1f} us as 8 processes, {t[8]:.1f} us as one (perf -t 8: {perf_t8:.1f})")
PY
