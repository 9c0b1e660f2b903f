#!/usr/bin/env bash
# check_plot.sh CCSIM SCENARIO DIR: `ccsim run SCENARIO --out DIR --plot` must write PNG plots that
# are real pictures (over 10 KB, larger than 300x200). Exit 77 (ctest: skipped) without matplotlib.
set -u
ccsim=$1 scenario=$2 dir=$3
rm -rf "$dir"
err=$("$ccsim" run "$scenario" --out "$dir" --plot 2>&1 >/dev/null); rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: exit status $rc"; echo "$err"; exit 1; fi
if grep -q "no plots: they need python3 with matplotlib" <<<"$err"; then echo "SKIP: $err"; exit 77; fi
pngs=("$dir"/busbw-all_reduce.png "$dir"/time-vs-nodes-all_reduce.png)
for f in "${pngs[@]}" "${pngs[@]/%.png/.svg}"; do
  [ -f "$f" ] || { echo "FAIL: $f missing"; echo "$err"; exit 1; }
done
for f in "${pngs[@]}"; do
  size=$(stat -c %s "$f")
  [ "$size" -gt 10240 ] || { echo "FAIL: $f is only $size bytes"; exit 1; }
  # PNG: 8-byte signature, then the IHDR chunk: width and height as big-endian 32-bit integers.
  read -r w h < <(od -An -tu1 -j16 -N8 "$f" | awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')
  [ "$(od -An -c -j1 -N3 "$f" | tr -d ' ')" = "PNG" ] || { echo "FAIL: $f is not a PNG"; exit 1; }
  [ "$w" -gt 300 ] && [ "$h" -gt 200 ] || { echo "FAIL: $f is ${w}x${h}"; exit 1; }
  echo "ok: $f ${w}x${h}, $size bytes"
done
