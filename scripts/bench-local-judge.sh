#!/usr/bin/env bash
# The local judge's speed beside llama.cpp's own: gavel-local's judge_call bench
# (prompt and answer tok/s, peak RSS of a judge call) and llama-bench built from
# the very llama.cpp sources llama-cpp-sys-2 vendors, on the same GGUF and
# threads. Not part of the test run; builds llama-bench once in /tmp.
#
#   scripts/bench-local-judge.sh [MODEL.gguf]   (default: the installed gemma-3-270m-q4_k_m)
#   THREADS=2 (default)
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${THREADS:-2}"
MODEL="${1:-${GAVEL_MODELS:-$HOME/.cache/gavel/models}/gemma-3-270m-q4_k_m.gguf}"
[ -f "$MODEL" ] || { echo "no model at $MODEL (run scripts/setup, or pass a .gguf path)" >&2; exit 2; }

echo "== gavel-local (judge_call bench, release build) =="
GAVEL_BENCH_MODEL="$MODEL" GAVEL_BENCH_THREADS="$THREADS" \
  cargo bench -p gavel-local --bench judge_call

# The llama.cpp sources the build above used: the llama-cpp-sys-2 in Cargo.lock.
SYS_VERSION=$(awk '/^name = "llama-cpp-sys-2"/{getline; gsub(/[version ="]/, ""); print}' Cargo.lock)
SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/llama-cpp-sys-2-"$SYS_VERSION"/llama.cpp | head -n1)
BUILD="/tmp/gavel-llama-bench-$SYS_VERSION"
if [ ! -x "$BUILD/bin/llama-bench" ]; then
  echo "== building llama-bench from $SRC (once) ==" >&2
  # The same CPU features and no OpenMP, as gavel-local's build (.cargo/config.toml).
  cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=ON -DGGML_OPENMP=OFF -DGGML_NATIVE=OFF \
    -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON >/dev/null
  cmake --build "$BUILD" --target llama-bench -j "$(nproc)" >/dev/null
fi

echo "== llama.cpp $SYS_VERSION's llama-bench (-p 512 -n 128, $THREADS threads) =="
/usr/bin/time -f "peak RSS %M KiB" "$BUILD/bin/llama-bench" -m "$MODEL" -t "$THREADS" -p 512 -n 128 -r 3 -o md
