# Sourced by the tests that watch ccsim's processes. A bare Debian has no procps: this reads /proc.

# descendants PID: the processes below PID (its children, theirs, ...), space-separated.
descendants() {
  local root=$1 f stat p q ppid kids="" found=1
  declare -A parent_of
  for f in /proc/[0-9]*/stat; do
    stat=$(cat "$f" 2>/dev/null) || continue
    stat=${stat##*) }  # past "pid (comm) ": state, then the parent's pid
    read -r _ ppid _ <<<"$stat"
    parent_of[$(basename "$(dirname "$f")")]=$ppid
  done
  local tree=" $root "
  while [ "$found" = 1 ]; do
    found=0
    for p in "${!parent_of[@]}"; do
      q=${parent_of[$p]}
      if [[ "$tree" == *" $q "* && "$tree" != *" $p "* ]]; then
        tree+="$p "
        kids+=" $p"
        found=1
      fi
    done
  done
  echo "$kids"
}

# children PID: the processes whose parent is PID.
children() {
  local root=$1 f stat ppid kids=""
  for f in /proc/[0-9]*/stat; do
    stat=$(cat "$f" 2>/dev/null) || continue
    stat=${stat##*) }
    read -r _ ppid _ <<<"$stat"
    [ "$ppid" = "$root" ] && kids+=" $(basename "$(dirname "$f")")"
  done
  echo "$kids"
}

# alive PID...: those of the PIDs still running (a zombie has ended: only its reaping is left).
alive() {
  local c stat out=""
  for c in "$@"; do
    stat=$(cat "/proc/$c/stat" 2>/dev/null) || continue
    stat=${stat##*) }
    [ "${stat%% *}" != Z ] && out+=" $c"
  done
  echo "$out"
}
