#!/usr/bin/env bash
# Optional (not run by scripts/setup: its gRPC export check does not finish yet):
# Arize Phoenix, the OTLP receiver of the OpenTelemetry export test
# (crates/gavel/tests/otel_phoenix.rs), installed from PyPI into the
# project-local virtualenv .gavel/phoenix (git-ignored). Skipped, with a note,
# when python3 is absent: the test then skips and says why.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.gavel/phoenix
if ! command -v python3 >/dev/null 2>&1; then
  echo "50-phoenix: python3 not found; the Phoenix export test will be skipped" >&2
  exit 0
fi
if [ -x "$VENV/bin/phoenix" ]; then
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check arize-phoenix
