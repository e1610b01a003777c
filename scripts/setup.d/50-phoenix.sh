#!/usr/bin/env bash
# Arize Phoenix (PyPI `arize-phoenix`, 20.x), the OTLP receiver the
# OpenTelemetry export is read back from (crates/gavel/tests/otel_phoenix.rs),
# installed into the project-local virtualenv .gavel/phoenix (git-ignored).
# Idempotent: does nothing once .gavel/phoenix/bin/phoenix exists. Without
# python3 or when pip fails, says so and the test skips and says why
# (.ci/run sets GAVEL_TEST_REQUIRE_PHOENIX, so CI fails instead).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.gavel/phoenix
if [ -x "$VENV/bin/phoenix" ]; then
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "50-phoenix: python3 not found; the Phoenix export test will be skipped" >&2
  exit 0
fi
rm -rf "$VENV"
if ! { python3 -m venv "$VENV" \
  && "$VENV/bin/pip" install --quiet --disable-pip-version-check "arize-phoenix>=20,<21"; }; then
  rm -rf "$VENV"
  echo "50-phoenix: could not install arize-phoenix; the Phoenix export test will be skipped" >&2
fi
