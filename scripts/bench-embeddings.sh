#!/usr/bin/env bash
# Embedding throughput, gavel vs sentence-transformers: all-MiniLM-L6-v2 over the
# same 1,000 sentences at batch 32 on the same number of threads (default 2).
# Shared cloud machines change speed from minute to minute, so the two run in
# alternating rounds (default 5; the order flips each round): each round prints
# both rates and their ratio, and the summary gives the medians.
#
#   scripts/bench-embeddings.sh [THREADS] [ROUNDS]
#
# Needs the model (`scripts/setup`) and a Python with sentence-transformers:
# PYTHON=/path/to/venv/bin/python (default: python3).
set -euo pipefail
cd "$(dirname "$0")/.."
threads="${1:-2}"
rounds="${2:-5}"
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

python_rate() {
  OMP_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads" "$python" - "$model" "$work/sentences.txt" "$threads" <<'PY'
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
}

gavel_rate() {
  RAYON_NUM_THREADS="$threads" cargo bench -q -p gavel-embed --bench embeddings -- \
    "$work/sentences.txt" "$model" 2>/dev/null | grep 'sentences/s'
}

rate() { sed -E 's/.*= ([0-9.]+) sentences\/s.*/\1/' <<<"$1"; }

# Build the bench before the first round, so that no round times a compile.
cargo bench -q -p gavel-embed --bench embeddings --no-run 2>/dev/null

: >"$work/rates"
for round in $(seq 1 "$rounds"); do
  if (( round % 2 )); then
    py_line="$(python_rate)"; rs_line="$(gavel_rate)"
  else
    rs_line="$(gavel_rate)"; py_line="$(python_rate)"
  fi
  py="$(rate "$py_line")"; rs="$(rate "$rs_line")"
  echo "round $round: $py_line"
  echo "round $round: $rs_line"
  echo "$py $rs" >>"$work/rates"
done

"$python" - "$work/rates" "$threads" <<'PY'
import statistics, sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
py = statistics.median(r[0] for r in rows)
rs = statistics.median(r[1] for r in rows)
ratios = sorted(r[1] / r[0] for r in rows)
print(f"median over {len(rows)} rounds on {sys.argv[2]} threads: sentence-transformers {py:.1f} "
      f"sentences/s, gavel {rs:.1f} sentences/s")
print(f"ratio gavel / sentence-transformers: median {statistics.median(ratios):.2f} "
      f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})")
PY
