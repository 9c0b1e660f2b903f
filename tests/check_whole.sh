#!/usr/bin/env bash
# check_whole.sh CCSIM: a size past 16 pipeline loops is timed on the line through three smaller
# simulations (fewer messages simulated) and comes out as `--whole`, which simulates all of it,
# within 0.1%.
set -euo pipefail
ccsim=$1
run() {  # run [--whole] -> "time_us messages" of a 16 GiB ring all_reduce on one DGX A100
  "$ccsim" perf all_reduce --topo dgx-a100 --algo ring -b 16G -e 16G -c 0 --column out-of-place --format json "$@" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print(r["out_of_place"]["time_us"], r["messages"])'
}
python3 - $(run) $(run --whole) <<'PY'
import sys
t_line, m_line, t_whole, m_whole = map(float, sys.argv[1:])
assert m_line < m_whole / 4, f"default simulated {m_line:.0f} messages, --whole {m_whole:.0f}: no extrapolation"
assert abs(t_line - t_whole) <= 1e-3 * t_whole, f"{t_line} us on the line, {t_whole} us whole"
print(f"ok: {t_line:.1f} us from {m_line:.0f} messages, {t_whole:.1f} us whole from {m_whole:.0f}")
PY
