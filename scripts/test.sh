#!/usr/bin/env bash
# test.sh: README command 2. Installs what is missing, builds everything and runs every test
# with ctest. GPU tests ([gpu]) skip with a message where there is no GPU.
#   bash scripts/test.sh                  the Release build in build/ (what CI runs)
#   bash scripts/test.sh --asan [ARGS]    AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/
#   bash scripts/test.sh --tsan [ARGS]    ThreadSanitizer, in build-tsan/
# The sanitizer builds (cmake/TesseraSanitizers.cmake) are -O1 with line tables and leave out the
# benchmarks (no test runs them); ARGS go to ctest (e.g. -R fuzz, -E tidy). Every test then runs
# with the options below: a sanitizer report fails it. Suppressions of reports in third-party code
# live in tests/sanitizers/, each with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "")
    bash scripts/install-deps.sh
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
    cmake --build build
    ctest --test-dir build --output-on-failure -j2
    exit ;;
  --asan) dir=build-asan sanitize=address ;;
  --tsan) dir=build-tsan sanitize=thread ;;
  *) echo "usage: bash scripts/test.sh [--asan | --tsan] [ctest arguments]" >&2; exit 2 ;;
esac
shift
supp=$PWD/tests/sanitizers
bash scripts/install-deps.sh
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DTESSERA_SANITIZE=$sanitize -DTESSERA_BUILD_BENCHMARKS=OFF
cmake --build "$dir" -j2
symbolizer=$(command -v llvm-symbolizer || echo /usr/lib/llvm-22/bin/llvm-symbolizer)
export ASAN_SYMBOLIZER_PATH=$symbolizer TSAN_SYMBOLIZER_PATH=$symbolizer
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:check_initialization_order=1
export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp
export TSAN_OPTIONS=suppressions=$supp/tsan.supp:print_suppressions=0:second_deadlock_stack=1:halt_on_error=1
ctest --test-dir "$dir" --output-on-failure -j2 "$@"
