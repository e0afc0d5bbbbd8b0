#!/usr/bin/env bash
# test.sh: README command 2. Installs what is missing, builds everything and runs every test
# with ctest. GPU tests ([gpu]) skip with a message where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
ctest --test-dir build --output-on-failure -j2
