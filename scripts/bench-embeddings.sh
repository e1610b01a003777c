#!/usr/bin/env bash
# Embedding throughput, gavel vs sentence-transformers: all-MiniLM-L6-v2 over the
# same 1,000 sentences at batch 32 on the same number of threads (default 2).
# Prints both figures in sentences/s and their ratio.
#
#   scripts/bench-embeddings.sh [THREADS]
#
# Needs the model (`scripts/setup`) and a Python with sentence-transformers:
# PYTHON=/path/to/venv/bin/python (default: python3).
set -euo pipefail
cd "$(dirname "$0")/.."
threads="${1:-2}"
python="${PYTHON:-python3}"
model="${GAVEL_MODELS:-$HOME/.cache/gavel/models}/all-MiniLM-L6-v2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 1,000 sentences of 3 to ~80 words, the same on every run.
"$python" - "$work/sentences.txt" <<'PY'
import random, sys
rng = random.Random(7)
words = ("the agent booked a room for three nights near the beach and sent the "
         "guest a confirmation with the total price refund policy check-in time "
         "parking breakfast wifi cancellation weather forecast quarterly revenue "
         "grew while costs fell database query returned rows customers orders "
         "shipped delayed because warehouse inventory ran low please answer "
         "briefly explain why café Zürich 東京 🎉").split()
with open(sys.argv[1], "w") as f:
    for i in range(1000):
        n = rng.choice([3, 6, 10, 15, 20, 30, 45, 60, 80])
        f.write(" ".join(rng.choice(words) for _ in range(n)).capitalize() + ".\n")
PY

py_line="$(OMP_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads" "$python" - "$model" "$work/sentences.txt" "$threads" <<'PY'
import sys, time
import torch
from sentence_transformers import SentenceTransformer
model_dir, path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.set_num_threads(threads)
sentences = open(path).read().splitlines()
model = SentenceTransformer(model_dir, device="cpu")
model.encode(sentences[:32], batch_size=32)
start = time.perf_counter()
model.encode(sentences, batch_size=32)
seconds = time.perf_counter() - start
print(f"sentence-transformers {__import__('sentence_transformers').__version__} (torch {torch.__version__}): "
      f"{len(sentences)} sentences in {seconds:.2f} s = {len(sentences) / seconds:.1f} sentences/s")
PY
)"
echo "$py_line"

rs_line="$(RAYON_NUM_THREADS="$threads" cargo bench -q -p gavel-embed --bench embeddings -- "$work/sentences.txt" "$model" 2>/dev/null | grep 'sentences/s')"
echo "$rs_line"

rate() { sed -E 's/.*= ([0-9.]+) sentences\/s.*/\1/' <<<"$1"; }
py="$(rate "$py_line")"
rs="$(rate "$rs_line")"
awk -v rs="$rs" -v py="$py" -v t="$threads" \
  'BEGIN { printf "ratio gavel / sentence-transformers on %d threads: %.2f\n", t, rs / py }'
