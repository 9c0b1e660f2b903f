#!/usr/bin/env bash
# expect_output.sh GOLDEN CMD...: CMD must exit 0 and print exactly GOLDEN.
# To accept a deliberate change: CCSIM_UPDATE_GOLDEN=1 ctest -R golden
set -u
golden=$1; shift
out=$("$@"); rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: exit status $rc"; exit 1; fi
if [ "${CCSIM_UPDATE_GOLDEN:-0}" = 1 ]; then
  # Accepting output is a person's act: under CI (which sets CI) it would pass any output.
  if [ -n "${CI:-}" ]; then echo "FAIL: CCSIM_UPDATE_GOLDEN=1 under CI"; exit 1; fi
  printf '%s\n' "$out" >"$golden"; echo "updated $golden"; exit 0
fi
if ! diff -u "$golden" <(printf '%s\n' "$out"); then echo "FAIL: output differs from $golden"; exit 1; fi
echo ok
