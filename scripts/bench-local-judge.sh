#!/usr/bin/env bash
# The local judge's speed beside llama.cpp's own: gavel-local's judge_call bench
# prints a judge call's prompt and answer tok/s and peak RSS, then llama.cpp alone
# on the same GGUF and threads, measured as llama-bench does (pp512, tg128: wall time
# of the decode calls). Not part of the test run (a release build).
#
#   scripts/bench-local-judge.sh [MODEL.gguf]   (default: the installed gemma-3-270m-q4_k_m)
#   THREADS=2 (default)
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${THREADS:-2}"
MODEL="${1:-${GAVEL_MODELS:-$HOME/.cache/gavel/models}/gemma-3-270m-q4_k_m.gguf}"
[ -f "$MODEL" ] || { echo "no model at $MODEL (run scripts/setup, or pass a .gguf path)" >&2; exit 2; }
GAVEL_BENCH_MODEL="$MODEL" GAVEL_BENCH_THREADS="$THREADS" \
  cargo bench -p gavel-local --bench judge_call
