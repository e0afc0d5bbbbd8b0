#!/usr/bin/env bash
# run_decode.sh: tessera's Qwen3 decode rate beside its baselines, shape by shape, in one run (on
# the GPU machine; see docs/performance.md, "How to run the decode baselines").
#
#   benchmarks/qwen3/run_decode.sh TESSERA_QWEN3 TOKENIZER_DIR [SHAPE ...]   (default: 0.6B 4B 8B 32B)
#
# For each shape: the engine with the synthetic weights made in GPU memory, a prompt of exactly
# PROMPT_TOKENS tokens (tessera-qwen3's --prompt-tokens) and NEW_TOKENS new tokens, greedy, writing
# --stats-json; then baselines.py on the same weights (same seed) and the same prompt ids (read
# from that JSON); then, unless TTFT=0, the engine again with a TTFT_TOKENS-token prompt (its time
# to first token); then compare_decode.py prints one JSON line per shape (tessera's tokens/s, each
# baseline's, the ratios, the fractions of the roofline measured by baselines.py), also appended
# to $OUT/decode.jsonl. Logs and JSON files go to $OUT (default ./out/qwen3-decode). The engine
# must be runnable as given (from the bundle: after .device/unpack.sh, with LD_LIBRARY_PATH
# holding /tmp/bundle/lib, as run_on_gpu.sh sets it).
# Knobs (environment): OUT, PROMPT_TOKENS (32), NEW_TOKENS (128), TTFT (1), TTFT_TOKENS (1024),
# WEIGHTS_SEED (0), DEVICE (cuda; cpu with TARGET=cpu for a smoke test on the tiny shape),
# TARGET (the engine's --target; default its own choice), PYTHON (python3), BASELINE_ARGS (more
# baselines.py options, e.g. "--skip hf_compile --runs 1"), LIMIT (seconds per step, 900).
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 TESSERA_QWEN3 TOKENIZER_DIR [SHAPE ...]" >&2
  exit 2
fi
engine=$1 tokdir=$2
shift 2
shapes=${*:-0.6B 4B 8B 32B}
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/out/qwen3-decode}
PYTHON=${PYTHON:-python3}
P=${PROMPT_TOKENS:-32} N=${NEW_TOKENS:-128} seed=${WEIGHTS_SEED:-0} limit=${LIMIT:-900}
die() { echo "run_decode.sh: $*" >&2; exit 2; }
[ -x "$engine" ] || die "$engine is not an executable (the tessera-qwen3 binary)"
[ -f "$tokdir/tokenizer.json" ] || die "$tokdir has no tokenizer.json"
mkdir -p "$OUT"
target=()
[ -n "${TARGET:-}" ] && target=(--target "$TARGET")
status=0
for shape in $shapes; do
  echo "== $shape: tessera-qwen3" >&2
  stats=$OUT/tessera-$shape.json
  rm -f "$stats" "$OUT/tessera-ttft-$shape.json" "$OUT/baselines-$shape.json"
  timeout "$limit" "$engine" --model "$tokdir" --synthetic "$shape" --weights-seed "$seed" --prompt-tokens "$P" \
    --max-new-tokens "$N" --stats-json "$stats" "${target[@]}" > "$OUT/tessera-$shape.log" 2>&1 ||
    { echo "tessera-qwen3 failed on $shape (exit $?): $(tail -3 "$OUT/tessera-$shape.log")" >&2; status=1; }
  echo "== $shape: baselines.py" >&2
  prompt=(--prompt-tokens "$P")
  [ -f "$stats" ] && prompt=(--prompt-ids-json "$stats")
  # shellcheck disable=SC2086 # BASELINE_ARGS is a list of options
  timeout "$limit" "$PYTHON" "$here/baselines.py" --shape "$shape" --device "${DEVICE:-cuda}" --weights-seed "$seed" \
    --new-tokens "$N" "${prompt[@]}" --out "$OUT/baselines-$shape.json" ${BASELINE_ARGS:-} \
    > "$OUT/baselines-$shape.log" 2>&1 ||
    { echo "baselines.py failed on $shape (exit $?): $(tail -3 "$OUT/baselines-$shape.log")" >&2; status=1; }
  if [ "${TTFT:-1}" = 1 ]; then
    echo "== $shape: tessera-qwen3, time to first token" >&2
    timeout "$limit" "$engine" --model "$tokdir" --synthetic "$shape" --weights-seed "$seed" \
      --prompt-tokens "${TTFT_TOKENS:-1024}" --max-new-tokens 2 --stats-json "$OUT/tessera-ttft-$shape.json" \
      "${target[@]}" > "$OUT/tessera-ttft-$shape.log" 2>&1 ||
      { echo "tessera-qwen3 (time to first token) failed on $shape (exit $?)" >&2; status=1; }
  fi
  "$PYTHON" "$here/compare_decode.py" --shape "$shape" --tessera "$stats" --baselines "$OUT/baselines-$shape.json" \
    --tessera-ttft "$OUT/tessera-ttft-$shape.json" | tee -a "$OUT/decode.jsonl"
done
exit $status
