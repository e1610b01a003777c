#!/usr/bin/env bash
# The official Python MCP SDK (PyPI `mcp`, 2.x): the real client that
# crates/gavel/tests/mcp_server.rs drives `gavel mcp` with. Idempotent: installs
# only when `import mcp` fails. Without python3/pip the test skips and says why
# (under CI it fails: .ci/run sets GAVEL_TEST_REQUIRE_PYTHON).
set -euo pipefail
if ! command -v python3 >/dev/null 2>&1; then
  echo "45-mcp-python: python3 not found; the gavel mcp end-to-end test will be skipped" >&2
  exit 0
fi
if python3 -c "import mcp" >/dev/null 2>&1; then
  exit 0
fi
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "mcp>=2,<3" \
  || echo "45-mcp-python: pip could not install mcp; the gavel mcp end-to-end test will be skipped" >&2
