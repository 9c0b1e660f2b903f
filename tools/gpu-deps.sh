#!/usr/bin/env bash
# Fetches (here, where Debian's package mirror is reachable) the Debian 12 packages a bare GPU
# machine lacks to build ccsim, into .gpu-deps/ (ignored by git). tools/gpu-check.sh unpacks them
# there with dpkg -x; carry the folder along (about 25 MB). Nothing is installed here.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-deps
cd .gpu-deps
packages=(
  # header-only or small libraries the build needs
  libboost1.74-dev nlohmann-json3-dev libcli11-dev doctest-dev libpugixml-dev libpugixml1v5
  # SimGrid (validate simulates) and what libsimgrid.so needs at link and run time
  libsimgrid-dev libsimgrid3.32 libboost-context1.74.0 libboost-stacktrace1.74.0 libns3.37
  libgsl27 libgslcblas0 libgfortran5 libquadmath0 libsqlite3-0
  # tcmalloc, which a ccsim built here by tools/gpu-prebuild.sh links
  libtcmalloc-minimal4
  # pkg-config, which finds SimGrid
  pkgconf-bin libpkgconf3
)
apt-get download "${packages[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
ls -1 *.deb | wc -l | xargs echo "gpu-deps: packages in .gpu-deps:"
du -sh . | cut -f1 | xargs echo "gpu-deps: size:"
