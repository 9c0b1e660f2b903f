#!/usr/bin/env bash
# Installs the Debian 12 packages ccsim needs, only those missing (apt-get update at most once).
# Run as root (or with sudo available). Safe to run again: it does nothing when all are present.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libsimgrid-dev           # event engine (SimGrid 3.32, pkg-config)
  libboost-graph-dev       # topology graph
  nlohmann-json3-dev       # configs and outputs
  doctest-dev              # unit tests
  libcli11-dev             # command line
  libpugixml-dev           # NCCL topology XML import
  libceres-dev             # ccsim calibrate: robust least squares and covariance (Ceres)
  libgoogle-perftools-dev  # tcmalloc: SimGrid allocates per simulated message
  python3-matplotlib       # plots of `ccsim run --plot` (tools/plot.py); optional at run time
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "ccsim: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "ccsim: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}"
