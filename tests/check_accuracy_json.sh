#!/usr/bin/env bash
# check_accuracy_json.sh CCSIM DATA_DIR: `ccsim accuracy --json` carries what the table shows: each
# row's data type and reduction (a log of several), and at the log level the nccl-tests options
# ccsim does not model (-G CUDA-graph launches, -m calls per iteration, -R buffer registration),
# and how the run compares with the model in its two regimes (bandwidth_ratio, latency_ratio).
set -euo pipefail
ccsim=$1 data=$2
out=$(mktemp) && trap 'rm -f "$out"' EXIT
"$ccsim" accuracy -q --json "$out" "$data/synthetic-mixed-types-2g-allreduce-1.log" \
  "$data/synthetic-graph-2g-allreduce-1.log" > /dev/null
python3 - "$out" <<'PY'
import json, sys
mixed, graph = json.load(open(sys.argv[1]))
assert [(r["type"], r["op"]) for r in mixed["rows"]] == [("float", "sum")] * 2 + [("half", "max")] * 2, mixed["rows"]
assert (mixed["cuda_graph_launches"], mixed["agg_iters"], mixed["registration"]) == (0, 1, 0), mixed
assert (graph["cuda_graph_launches"], graph["agg_iters"], graph["registration"]) == (10, 4, 2), graph
assert mixed["bandwidth_ratio"] is None and mixed["latency_ratio"] is None, mixed  # 1-2 MiB: neither regime
assert mixed["machine_options"] == "", mixed  # the machine as its device lines name it
print("ok: row types and unmodelled options in --json")
PY
# The regimes: the median of measured over simulated busbw from 64 MiB, of time to 64 KiB.
"$ccsim" accuracy -q --topo hgx-b200 --json "$out" "$data/synthetic-hostless-allreduce-1.log" > /dev/null
python3 - "$out" <<'PY'
import json, statistics, sys
(log,) = json.load(open(sys.argv[1]))
ratios = [r["measured_busbw_gbps"] / r["simulated_busbw_gbps"] for r in log["rows"] if r["size_bytes"] >= 64 << 20]
assert len(ratios) == 2 and abs(log["bandwidth_ratio"] - statistics.median(ratios)) < 1e-9, log
assert log["latency_ratio"] is None, log
print("ok: bandwidth_ratio", round(log["bandwidth_ratio"], 3))
PY
# What adjusts the machine beyond its name is in the header and the JSON as a command line writes it.
"$ccsim" accuracy --topo dgx-h100 --no-pcie-p2p --gpus-per-node 2 --json "$out" "$data/synthetic-mixed-types-2g-allreduce-1.log" \
  | grep -q "ranks on dgx-h100 with --gpus-per-node 2 --no-pcie-p2p (model"
python3 - "$out" <<'PY'
import json, sys
(log,) = json.load(open(sys.argv[1]))
assert log["machine_options"] == "--gpus-per-node 2 --no-pcie-p2p", log["machine_options"]
print("ok: machine_options")
PY
