#!/usr/bin/env bash
# check_repeatability.sh CCSIM: accuracy says where a log's out-of-place and in-place times (the
# same collective, timed twice) differ by more than 1.5x, in its report and its JSON, and says
# nothing for a run whose two columns agree.
set -euo pipefail
ccsim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
header='#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong'
cat > "$dir/h100-8g-allreduce-noisy.log" <<LOG
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
$header
     1048576        262144     float     sum      -1    100.0   10.49   18.35      0    210.0    4.99    8.74      0
     2097152        524288     float     sum      -1    150.0   13.98   24.47      0    152.0   13.80   24.15      0
LOG
cat > "$dir/h100-8g-allreduce-steady.log" <<LOG
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
$header
     1048576        262144     float     sum      -1    100.0   10.49   18.35      0    104.0   10.08   17.64      0
     2097152        524288     float     sum      -1    150.0   13.98   24.47      0    147.0   14.27   24.97      0
LOG
noisy=$("$ccsim" accuracy --topo dgx-h100 "$dir/h100-8g-allreduce-noisy.log" --json "$dir/noisy.json")
want='differ by more than 1.5x at 1 of 2 sizes (2.10x at 1048576 B: 100.0 and 210.0 us)'
grep -qF "$want" <<<"$noisy" || { echo "expected '$want' in:"; echo "$noisy"; exit 1; }
steady=$("$ccsim" accuracy --topo dgx-h100 "$dir/h100-8g-allreduce-steady.log" --json "$dir/steady.json")
if grep -q "repeatability" <<<"$steady"; then echo "a steady run's report names its repeatability:"; echo "$steady"; exit 1; fi
python3 - "$dir/noisy.json" "$dir/steady.json" <<'PY'
import json, sys
noisy, steady = (json.load(open(f))[0]["columns"] for f in sys.argv[1:])
assert noisy["rows"] == 2 and noisy["disagree"] == 1 and noisy["max_ratio_bytes"] == 1048576, noisy
assert abs(noisy["max_ratio"] - 2.1) < 1e-9, noisy
assert steady["disagree"] == 0 and abs(steady["max_ratio"] - 1.04) < 1e-9, steady
print("ok:", noisy, steady)
PY
