#!/usr/bin/env bash
# check_nccl_buffers.sh CCSIM: NCCL_BUFFSIZE sizes the Simple FIFO and so the steps a tree
# pipelines: a 64 MiB two-node A100 tree all_reduce fills its pipeline later with 8 MiB FIFOs
# (1 MiB steps) than with NCCL's 4 MiB; NCCL_P2P_NET_CHUNKSIZE sizes a point-to-point step across
# nodes, whose first copy in and last copy out its blocks pay. The map's and a log's command line's
# settings are followed and said; a value outside ccsim's bounds is said as not followed, with why.
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
# A log whose command line sets it runs under it too, and says so.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/a100-2n16g-allreduce-1.log" <<'LOG'
mpirun -np 16 -x NCCL_BUFFSIZE=8388608 ./build/all_reduce_perf -b 64M -e 64M -g 1
# nThread 1 nGpus 1 minBytes 67108864 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
    67108864      16777216     float     sum      -1    900.0   74.57  139.81      0    900.0   74.57  139.81      0
LOG
out=$("$ccsim" accuracy --topo dgx-a100 --nodes 2 --algo tree --proto simple "$dir/a100-2n16g-allreduce-1.log")
grep -q "#   from its command line: NCCL_BUFFSIZE=8388608" <<<"$out" || { echo "no NCCL_BUFFSIZE in:"; echo "$out"; exit 1; }
grep -qE "67108864 +900.00 +853.7" <<<"$out" || { echo "expected the 8 MiB FIFOs' 853.7 us in:"; echo "$out"; exit 1; }
echo "ok: a log's command line NCCL_BUFFSIZE is followed"
sed -i 's/NCCL_BUFFSIZE=8388608/NCCL_BUFFSIZE=32768/' "$dir/a100-2n16g-allreduce-1.log"
out=$("$ccsim" accuracy --topo dgx-a100 --nodes 2 --algo tree --proto simple "$dir/a100-2n16g-allreduce-1.log")
grep -q "NCCL_BUFFSIZE=32768 not followed (NCCL_BUFFSIZE=32768: expected a whole number from 65536" <<<"$out" ||
  { echo "a value outside the bounds is not said as such in:"; echo "$out"; exit 1; }
echo "ok: NCCL_BUFFSIZE=32768 said as not followed"
sr() {  # sr [--nccl-env ...] -> out-of-place time in us of a 32 MiB two-node B200 sendrecv
  "$ccsim" perf sendrecv --topo hgx-b200 --nodes 2 -b 32M -e 32M -c 0 --format csv "$@" | awk -F, 'NR == 2 { print $12 }'
}
python3 - "$(sr)" "$(sr --nccl-env NCCL_P2P_NET_CHUNKSIZE=524288)" <<'PY'
import sys
default, big = map(float, sys.argv[1:])
assert big > 1.02 * default, f"512 KiB point-to-point steps: {big} us, expected above the default's {default}"
print(f"ok: 32 MiB two-node sendrecv {default:.1f} us, {big:.1f} with NCCL_P2P_NET_CHUNKSIZE=524288")
PY
