#!/usr/bin/env bash
# check_nccl_buffers.sh CCSIM: NCCL_BUFFSIZE sizes the Simple FIFO and so the chunks a tree
# pipelines: a 64 MiB two-node A100 tree all_reduce fills its pipeline later with 8 MiB FIFOs
# (4 MiB chunks) than with NCCL's 4 MiB, and sooner with 1 MiB; the model then says where its
# chunk came from, and a map entry's setting shows in the report's header.
set -euo pipefail
ccsim=$1
at() {  # at [--nccl-env ...] -> out-of-place time in us
  "$ccsim" perf all_reduce --topo dgx-a100 --nodes 2 --algo tree --proto simple -b 64M -e 64M -c 0 --format csv "$@" |
    awk -F, 'NR == 2 { print $12 }'
}
python3 - "$(at)" "$(at --nccl-env NCCL_BUFFSIZE=8388608)" "$(at --nccl-env NCCL_BUFFSIZE=4194304)" <<'PY'
import sys
default, big, same = map(float, sys.argv[1:])
assert big > 1.1 * default, f"8 MiB FIFOs: {big} us, expected well above the default's {default}"
assert same == default, f"NCCL_BUFFSIZE=4194304 is NCCL's default: {same} vs {default}"
print(f"ok: 64 MiB tree all_reduce {default:.1f} us, {big:.1f} with NCCL_BUFFSIZE=8388608")
PY
"$ccsim" accuracy --map "$(dirname "$0")/data/measured-map.json" --only aws-p4de |
  grep -q "#   NCCL settings: NCCL_BUFFSIZE=8388608 NCCL_P2P_NET_CHUNKSIZE=524288" ||
  { echo "the p4de entry's NCCL settings are not in its header"; exit 1; }
echo "ok: the map's p4de entry runs under its script's NCCL_BUFFSIZE"
