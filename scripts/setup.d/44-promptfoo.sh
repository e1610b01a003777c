#!/usr/bin/env bash
# promptfoo itself, from npm, into the project-local .gavel/npm: the promptfoo
# parity test (crates/gavel/tests/promptfoo_parity.rs) runs it and gavel on the
# same configs against one local fake provider and compares their verdicts.
# The version is pinned so the measured agreement stays comparable. Skipped,
# with a note, when npm is absent (.ci/run fails instead).
set -euo pipefail
cd "$(dirname "$0")/../.."
PREFIX=.gavel/npm
VERSION=0.120.27
if ! command -v npm >/dev/null 2>&1; then
  echo "44-promptfoo: npm not found; the promptfoo parity test will be skipped" >&2
  exit 0
fi
installed=$(node -p "require('./$PREFIX/node_modules/promptfoo/package.json').version" 2>/dev/null || true)
if [ "$installed" = "$VERSION" ]; then
  exit 0
fi
mkdir -p "$PREFIX"
# No telemetry or update checks while installing either.
PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 \
  npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "promptfoo@$VERSION"
