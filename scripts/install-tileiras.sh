#!/usr/bin/env bash
# install-tileiras.sh: installs NVIDIA's tileiras (the CUDA Tile IR compiler the tileir backend runs)
# with the ptxas and libNVVM of its own version, from PyPI, into the default location tessera looks
# in (src/compiler/tileiras.h): $TESSERA_TILEIRAS_HOME, else ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tileiras.
# tileiras is then <that>/nvidia/cu13/bin/tileiras (with tileirdisasm beside it). No root needed:
# `pip install --target` into that directory only (never into a Python environment). Does nothing
# when that version is already there. TESSERA_TILEIRAS_VERSION picks another version (all three
# wheels must exist in it).
set -euo pipefail
version=${TESSERA_TILEIRAS_VERSION:-13.5.37}
home=${TESSERA_TILEIRAS_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tileiras}
if [ -x "$home/nvidia/cu13/bin/tileiras" ] && [ -d "$home/nvidia_cuda_tileiras-$version.dist-info" ]; then
  echo "install-tileiras: tileiras $version present in $home"
  exit 0
fi
python3 -m pip --version >/dev/null 2>&1 || { echo "install-tileiras: python3 -m pip is needed (python3-pip)" >&2; exit 1; }
rm -rf "$home.partial"
# PIP_BREAK_SYSTEM_PACKAGES: Debian marks its Python externally managed; --target writes only to
# our directory, so the marker does not apply (older pips ignore the variable).
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --no-deps --target "$home.partial" \
  "nvidia-cuda-tileiras==$version" "nvidia-cuda-nvcc==$version" "nvidia-nvvm==$version"
rm -rf "$home"
mkdir -p "$(dirname "$home")"
mv "$home.partial" "$home"
"$home/nvidia/cu13/bin/tileiras" --version | tail -n 2
echo "install-tileiras: tileiras $version installed in $home"
