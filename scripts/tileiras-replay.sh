#!/usr/bin/env bash
# tileiras-replay.sh: stands in for NVIDIA's tileiras (TESSERA_TILEIRAS=<this script>) so that the
# tileir backend can run on a GPU machine that cannot hold tileiras itself (our H200's upload limit
# is below the size of tileiras and the ptxas and libNVVM it needs). It is a test aid, not part of
# the library.
#
#   TILEIRAS_REPLAY=record:DIR  runs the real tileiras (TILEIRAS_REAL, default
#                               ~/.cache/tessera/tileiras/nvidia/cu13/bin/tileiras) and keeps each
#                               cubin as DIR/<sha256 of the bytecode>-<gpu name>.cubin, and its
#                               version line as DIR/version.txt;
#   TILEIRAS_REPLAY=replay:DIR  answers --version from DIR/version.txt and each compile with the
#                               cubin recorded for the same bytecode and GPU, or fails naming the
#                               bytecode's hash (copied to DIR/missing/) when none was recorded.
#
# It accepts the command lines tessera runs (src/compiler/tileiras.cpp): `--version`, and
# `--gpu-name=ARCH -o OUT IN`.
set -euo pipefail
mode=${TILEIRAS_REPLAY%%:*}
dir=${TILEIRAS_REPLAY#*:}
if [[ -z "${TILEIRAS_REPLAY:-}" || "$mode" == "$TILEIRAS_REPLAY" || -z "$dir" ]]; then
  echo "tileiras-replay: set TILEIRAS_REPLAY=record:DIR or replay:DIR" >&2
  exit 2
fi
real=${TILEIRAS_REAL:-$HOME/.cache/tessera/tileiras/nvidia/cu13/bin/tileiras}
mkdir -p "$dir"

if [[ "${1:-}" == "--version" ]]; then
  case "$mode" in
    record) CUDA_HOME=$(dirname "$(dirname "$real")") "$real" --version | tee "$dir/version.txt" ;;
    replay) cat "$dir/version.txt" ;;
    *) echo "tileiras-replay: unknown mode '$mode'" >&2; exit 2 ;;
  esac
  exit 0
fi

gpu="" out="" in=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --gpu-name=*) gpu=${1#--gpu-name=} ;;
    -o) out=$2; shift ;;
    -*) echo "tileiras-replay: unexpected option '$1'" >&2; exit 2 ;;
    *) in=$1 ;;
  esac
  shift
done
if [[ -z "$gpu" || -z "$out" || -z "$in" ]]; then
  echo "tileiras-replay: expected --gpu-name=ARCH -o OUT IN" >&2
  exit 2
fi
key=$(sha256sum "$in" | cut -d' ' -f1)-$gpu
case "$mode" in
  record)
    CUDA_HOME=$(dirname "$(dirname "$real")") "$real" "--gpu-name=$gpu" -o "$out" "$in"
    cp "$out" "$dir/$key.cubin" ;;
  replay)
    if [[ ! -f "$dir/$key.cubin" ]]; then
      mkdir -p "$dir/missing" && cp "$in" "$dir/missing/$key.tileirbc"
      echo "tileiras-replay: no cubin recorded for bytecode $key (kept in $dir/missing)" >&2
      exit 1
    fi
    cp "$dir/$key.cubin" "$out" ;;
  *) echo "tileiras-replay: unknown mode '$mode'" >&2; exit 2 ;;
esac
