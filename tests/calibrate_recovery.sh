#!/usr/bin/env bash
# calibrate_recovery.sh CCSIM WORKDIR: the simulator makes an all_reduce sweep with known parameters
# (nvlink_efficiency 0.70, launch latencies 1.5x hopper's), 2% multiplicative noise is added, and
# `ccsim calibrate` must recover each parameter within 3 of its reported standard errors, with
# standard errors small enough (under 5%) that the check means something.
set -euo pipefail
ccsim=$1
work=$2
mkdir -p "$work"
cd "$work"
cat >truth.json <<'JSON'
{"base": "hopper", "name": "truth", "description": "synthetic truth for the calibration recovery test",
 "parameters": {
  "nvlink_efficiency": {"value": 0.70, "unit": "fraction", "source": "synthetic truth"},
  "launch_latency_us.simple": {"value": 12.6, "unit": "us", "source": "synthetic truth: 1.5 x hopper"},
  "launch_latency_us.ll": {"value": 9.9, "unit": "us", "source": "synthetic truth: 1.5 x hopper"},
  "launch_latency_us.ll128": {"value": 21.0, "unit": "us", "source": "synthetic truth: 1.5 x hopper"},
  "launch_latency_us.nvls": {"value": 31.5, "unit": "us", "source": "synthetic truth: 1.5 x hopper"}}}
JSON
"$ccsim" perf all_reduce --topo dgx-h100 -b 4K -e 128M -f 8 -c 0 --model truth.json >perf.txt
# nccl-tests' columns only (ccsim perf adds algorithm, protocol, channels), times times 1 +- 2%.
awk 'BEGIN { s = 12345 }
     /^ *[0-9]/ { s = (s * 1103515245 + 12345) % 2147483648; u = 2 * s / 2147483648 - 1
                  $6 = sprintf("%.2f", $6 * (1 + 0.02 * u)); $10 = $6; NF = 13; print; next }
     { print }' perf.txt >synthetic-allreduce.log
"$ccsim" calibrate --topo dgx-h100 synthetic-allreduce.log --params nvlink_efficiency,launch_latency_us.* \
  --json report.json --out fitted.json
python3 - <<'PY'
import json, math, sys
report = json.load(open("report.json"))
truth = {"nvlink_efficiency": 0.70 / 0.8444, "launch_latency_us.*": 1.5}  # true scales of the hopper priors
names = sorted(u["name"] for u in report["unknowns"])
if names != sorted(truth):
    print(f"FAIL: the report fits {names}, expected {sorted(truth)}")
    sys.exit(1)
ok = True
for u in report["unknowns"]:
    want, got, sigma = truth[u["name"]], u["scale"], u["log_scale_sigma"]
    z = abs(math.log(got / want)) / sigma if sigma > 0 else float("inf")
    good = u["identifiable"] and 0 < sigma < 0.05 and z <= 3
    print(f"{u['name']}: true scale {want:.4f}, fitted {got:.4f} +- {sigma * got:.4f} ({z:.2f} sigma) {'ok' if good else 'FAIL'}")
    ok = ok and good
sys.exit(0 if ok else 1)
PY
