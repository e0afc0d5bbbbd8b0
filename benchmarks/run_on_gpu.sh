#!/usr/bin/env bash
# run_on_gpu.sh: the whole GPU session in one command, on the GPU machine, from the repo root,
# with the binaries and their libraries bundled in .device/ (its unpack.sh unpacks them into
# /tmp/bundle; see benchmarks/README.md).
# Writes logs and JSON under $OUT (default ./out).
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
here=$PWD
bash .device/unpack.sh > /dev/null && export LD_LIBRARY_PATH=/tmp/bundle/lib:${LD_LIBRARY_PATH:-}
export TESSERA_CACHE_DIR=/tmp/tessera-cache
bin=/tmp/bundle/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
step() { echo "== $*"; }
if [ -x $bin/example_vector_add ]; then
  step examples; ($bin/example_vector_add; $bin/example_softmax; $bin/example_matmul) 2>&1 | tee "$OUT/examples.log"
fi
if [ -x $bin/tessera_unit_tests ] && [ "${TESTS:-1}" = 1 ]; then
  step "unit tests on the GPU"
  timeout 180 $bin/tessera_unit_tests "[gpu]" > "$OUT/gpu_tests.log" 2>&1; echo "rc=$?"; grep -E -A8 "FAILED|failed" "$OUT/gpu_tests.log" | head -60; tail -3 "$OUT/gpu_tests.log"
  # With tileir among BACKENDS: the same cases through the tileir backend (kernels Tile IR cannot
  # express take nvvm).
  if [[ " ${BACKENDS:-nvvm} " == *" tileir "* ]]; then
    step "unit tests on the GPU through the tileir backend"
    timeout 300 $bin/tessera_unit_tests --backend=tileir "[gpu]" > "$OUT/gpu_tests_tileir.log" 2>&1; echo "rc=$?"
    grep -E -A8 "FAILED|failed" "$OUT/gpu_tests_tileir.log" | head -60; tail -3 "$OUT/gpu_tests_tileir.log"
  fi
  if [ "${SANITIZE:-1}" = 1 ]; then
    step memcheck
    timeout 300 compute-sanitizer --tool memcheck --report-api-errors no $bin/tessera_unit_tests "*(gpu)" > "$OUT/memcheck.log" 2>&1; tail -2 "$OUT/memcheck.log"
    # racecheck loses track of launches made concurrently from several host threads ("Internal
    # Sanitizer Error: failed to track a kernel launch"): the [threads] tests run without it.
    step racecheck
    timeout 300 compute-sanitizer --tool racecheck $bin/tessera_unit_tests "*(gpu)" "~[threads]" > "$OUT/racecheck.log" 2>&1; tail -2 "$OUT/racecheck.log"
  fi
fi
[ "${BENCH:-1}" = 1 ] || exit 0
# The benchmarks with a PyTorch baseline run in ROUNDS rounds (default 2), in the order
# tessera, PyTorch, PyTorch, tessera, ...: a drift of the GPU's speed over the run (its clocks,
# its memory's temperature) then weighs on both sides alike. compare.py takes each side's median
# over the rounds. The JIT and pipeline benchmarks have no baseline and run once.
benches=${BENCHES:-bench_elementwise bench_rows bench_row_widths bench_transpose bench_matmul bench_jit_launch bench_pipeline_overhead}
: > "$OUT/tessera.jsonl"
: > "$OUT/torch.jsonl"
# BACKENDS="nvvm tileir" runs each benchmark through both GPU back ends (TESSERA_BACKEND; the
# tileir one needs tileiras: TESSERA_TILEIRAS or its install location); compare.py puts them side
# by side. The JIT benchmark (cold compiles by stage) runs once per back end; the pipeline one
# measures the launcher and runs through nvvm alone.
ours() {
  step "benchmarks, round $1"
  for backend in ${BACKENDS:-nvvm}; do
    for b in $benches; do
      case $b in
        bench_jit_launch) [ "$1" = 1 ] || continue ;;
        bench_pipeline_overhead) [ "$1" = 1 ] && [ $backend = nvvm ] || continue ;;
      esac
      limit=200; [ $b = bench_matmul ] && limit=500
      [ -x $bin/$b ] && TESSERA_BACKEND=$backend timeout $limit $bin/$b 2>&1 | sed "s/^{/{\"round\": $1, /" | tee -a "$OUT/tessera.jsonl"
    done
  done
}
theirs() {
  step "PyTorch baselines, round $1 (same run)"
  timeout 900 python3 "$here/benchmarks/torch_baselines.py" ${BASELINE_FAMILIES:-} 2>>"$OUT/torch.err" |
    sed "s/^{/{\"round\": $1, /" | tee -a "$OUT/torch.jsonl"
  # bench_matmul's sm_80 cases (BENCH_MATMUL_SM80=1 or only): Triton's Ampere lowering, which a
  # process gets only when it starts with DISABLE_MMA_V3=1.
  if [ -n "${BENCH_MATMUL_SM80:-}" ]; then
    DISABLE_MMA_V3=1 timeout 600 python3 "$here/benchmarks/torch_baselines.py" matmul_sm80 2>>"$OUT/torch.err" |
      sed "s/^{/{\"round\": $1, /" | tee -a "$OUT/torch.jsonl"
  fi
}
if [ "${BASELINES:-1}" != 1 ]; then
  ours 1
  exit 0
fi
for ((r = 1; r <= ${ROUNDS:-2}; r++)); do
  if ((r % 2)); then ours $r; theirs $r; else theirs $r; ours $r; fi
done
step ratios
python3 "$here/benchmarks/compare.py" "$OUT/tessera.jsonl" "$OUT/torch.jsonl" | tee "$OUT/ratios.jsonl"
