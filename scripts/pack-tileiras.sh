#!/usr/bin/env bash
# pack-tileiras.sh: packs the installed tileiras (scripts/install-tileiras.sh) with the ptxas and
# libNVVM it runs into DIR/tileiras.tar.xz (default .tileiras/, git-ignored) for a GPU machine that
# cannot install it but takes files carried to it. About 56 MB: xz with its x86 filter and a
# dictionary as large as the three files (5 minutes on 2 cores). There:
#   d=~/.cache/tessera/tileiras/nvidia/cu13; mkdir -p $d && tar xJf DIR/tileiras.tar.xz -C $d
# puts them where tessera looks (src/compiler/tileiras.h), tileirdisasm aside.
set -euo pipefail
out=${1:-.tileiras}
home=${TESSERA_TILEIRAS_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tileiras}/nvidia/cu13
for f in bin/tileiras bin/ptxas lib/libnvvm.so.4; do
  [ -f "$home/$f" ] || { echo "pack-tileiras: $home/$f is missing (scripts/install-tileiras.sh)" >&2; exit 1; }
done
mkdir -p "$out"
tar -C "$home" -cf - bin/tileiras bin/ptxas lib/libnvvm.so.4 | xz --x86 --lzma2=preset=9e,dict=256MiB -T1 > "$out/tileiras.tar.xz"
ls -la "$out/tileiras.tar.xz"
