#!/usr/bin/env bash
# expect_error.sh PATTERN CMD...: CMD must exit non-zero (not by a signal), print PATTERN on stderr
# as one "ccsim: error:" line, and print no crash report.
set -u
pattern=$1; shift
err=$("$@" 2>&1 >/dev/null); rc=$?
if [ $rc -eq 0 ]; then echo "FAIL: exit status 0, expected non-zero"; echo "$err"; exit 1; fi
if [ $rc -ge 128 ]; then echo "FAIL: killed by signal $((rc - 128))"; echo "$err"; exit 1; fi
if ! grep -qF -- "$pattern" <<<"$err"; then echo "FAIL: stderr lacks: $pattern"; echo "$err"; exit 1; fi
lines=$(grep -c . <<<"$err")
if [ "$lines" -ne 1 ]; then echo "FAIL: expected one line on stderr, got $lines"; echo "$err"; exit 1; fi
if [[ "$err" != "ccsim: error: "* ]]; then echo "FAIL: the line is not a \"ccsim: error:\" line"; echo "$err"; exit 1; fi
echo "ok (exit $rc): $err"
