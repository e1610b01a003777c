#!/usr/bin/env bash
# Published MCP servers for the mcp-agent tests, installed from npm into the
# project-local .gavel/npm (git-ignored). Skipped, with a note, when node/npm are
# absent: the tests that need them then skip and say why (.ci/run fails instead).
set -euo pipefail
cd "$(dirname "$0")/../.."
PREFIX=.gavel/npm
PKG=@modelcontextprotocol/server-everything
if ! command -v npm >/dev/null 2>&1; then
  echo "40-mcp-servers: npm not found; MCP server tests will be skipped" >&2
  exit 0
fi
if [ -f "$PREFIX/node_modules/$PKG/package.json" ]; then
  exit 0
fi
mkdir -p "$PREFIX"
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "$PKG"
