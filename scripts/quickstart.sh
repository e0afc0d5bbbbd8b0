#!/usr/bin/env bash
# quickstart.sh: README command 1. Installs what is missing, builds tessera and runs the main
# example (on the GPU if one is present, else on the CPU target).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target example_vector_add
./build/examples/example_vector_add
