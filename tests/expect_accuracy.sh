#!/bin/sh
# Runs `ccsim accuracy ...` and fails when its overall median busbw error is above MAX percent, or,
# with --beat-nccl, not below the median error of NCCL's own cost model on the same rows.
# usage: expect_accuracy.sh MAX [--beat-nccl] ccsim accuracy ARGS...
max=$1
shift
beat=0
if [ "$1" = "--beat-nccl" ]; then beat=1; shift; fi
out=$("$@" 2>&1)
status=$?
echo "$out"
[ $status -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
line=$(echo "$out" | grep '^overall: ')
sim=$(echo "$line" | sed -n 's/^overall: median_abs_err=\([0-9.]*\)%.*/\1/p')
[ -n "$sim" ] || { echo "FAIL: no overall line"; exit 1; }
awk -v m="$sim" -v x="$max" 'BEGIN { exit !(m <= x) }' || { echo "FAIL: median error $sim% above $max%"; exit 1; }
if [ $beat -eq 1 ]; then
  nccl=$(echo "$line" | sed -n 's/.*nccl-model: median_abs_err=\([0-9.]*\)%.*/\1/p')
  [ -n "$nccl" ] || { echo "FAIL: no nccl-model figures (pass --baseline nccl-model)"; exit 1; }
  awk -v m="$sim" -v n="$nccl" 'BEGIN { exit !(m < n) }' || { echo "FAIL: ccsim $sim% is not below nccl-model $nccl%"; exit 1; }
fi
echo "PASS: median error $sim% <= $max%"
