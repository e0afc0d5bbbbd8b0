#!/usr/bin/env bash
# install-deps.sh: installs what tessera needs to build on Debian 12 (run as root, or with sudo):
# LLVM/MLIR 22, fmt, Catch2 v2, ninja, ccache, python3 (lit) and clang-tidy (the use-after-move
# check of the tests), and nlohmann-json, PCRE2, utf8proc and cpp-httplib (with pkg-config) for
# apps/qwen3. The CUDA 13.0 toolkit (nvJitLink) is expected in /usr/local/cuda. Then NVIDIA's
# tileiras for the tileir backend, from PyPI into the user's cache (scripts/install-tileiras.sh).
# Does nothing for packages that are already installed.
set -euo pipefail
pkgs=(libmlir-22-dev llvm-22-dev llvm-22-tools llvm-22 mlir-22-tools libfmt-dev catch2 ninja-build ccache cmake g++ libzstd-dev
      python3 clang-tidy libpcre2-dev nlohmann-json3-dev libutf8proc-dev libcpp-httplib-dev pkg-config python3-pip)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
[ -f /usr/local/cuda/include/nvJitLink.h ] || { echo "install-deps: the CUDA 13.0 toolkit is expected in /usr/local/cuda" >&2; exit 1; }
bash "$(dirname "$0")/install-tileiras.sh"
echo "install-deps: all dependencies present"
