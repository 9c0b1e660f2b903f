#!/usr/bin/env bash
# check_trace.sh FILE CMD...: CMD must exit 0 and write FILE, a Chrome trace with complete events
# ("ph":"X") and link counters ("ph":"C"); CMD's output must hold a link table.
set -u
file=$1; shift
rm -f "$file"
out=$("$@" 2>&1); rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: exit status $rc"; echo "$out"; exit 1; fi
[ -s "$file" ] || { echo "FAIL: no trace written to $file"; exit 1; }
for pattern in '"traceEvents":\[' '"ph":"X"' '"ph":"C"' '"ph":"M"'; do
  grep -q "$pattern" "$file" || { echo "FAIL: $file lacks $pattern"; exit 1; }
done
grep -q "busiest first" <<<"$out" || { echo "FAIL: no link table in the output"; echo "$out"; exit 1; }
echo "ok: $(stat -c %s "$file") bytes"
