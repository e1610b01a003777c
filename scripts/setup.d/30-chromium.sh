#!/usr/bin/env bash
# The web UI's browser tests: Debian's headless Chromium (and its driver), and
# playwright-core to drive it, installed next to the test in
# crates/gavel/tests/browser/node_modules. Idempotent: installs only what is missing.
# .ci/run fails when either is still missing afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi
if command -v npm >/dev/null 2>&1 && [ ! -d crates/gavel/tests/browser/node_modules/playwright-core ]; then
  npm install --prefix crates/gavel/tests/browser --no-audit --no-fund --silent
fi
