#!/usr/bin/env bash
# maturin (PyPI, 1.x, a prebuilt wheel), which builds the `gavel-eval` Python
# wheel (crates/gavel/pyproject.toml), into the project-local virtualenv
# .gavel/maturin (git-ignored): crates/gavel/tests/wheel.rs builds the wheel with
# it, installs it into a fresh venv and runs the quickstart from it.
# Idempotent: does nothing once .gavel/maturin/bin/maturin exists. Without
# python3 or when pip fails, says so and the test skips and says why
# (.ci/run sets GAVEL_TEST_REQUIRE_MATURIN, so CI fails instead).
set -euo pipefail
cd "$(dirname "$0")/../.."
# maturin reads `cargo metadata` for every platform, offline in the wheel test:
# every package of Cargo.lock must be in the local registry, not only those a
# build for this machine downloads (android_system_properties, windows-sys…).
cargo fetch --locked --quiet
VENV=.gavel/maturin
if [ -x "$VENV/bin/maturin" ]; then
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "48-maturin: python3 not found; the wheel test will be skipped" >&2
  exit 0
fi
rm -rf "$VENV"
if ! { python3 -m venv "$VENV" \
  && "$VENV/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: "maturin>=1.7,<2"; }; then
  rm -rf "$VENV"
  echo "48-maturin: could not install maturin; the wheel test will be skipped" >&2
fi
