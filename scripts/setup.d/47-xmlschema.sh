#!/usr/bin/env bash
# python3's `xmlschema`: the XML Schema validator the JUnit report is checked
# with (crates/gavel-report/tests/xsd, against Jenkins' junit-10.xsd).
# Idempotent: installs only when `import xmlschema` fails. Without python3/pip the
# test skips and says why (.ci/run sets GAVEL_TEST_REQUIRE_XMLSCHEMA, so CI fails).
set -euo pipefail
if ! command -v python3 >/dev/null 2>&1; then
  echo "47-xmlschema: python3 not found; the JUnit schema test will be skipped" >&2
  exit 0
fi
if python3 -c "import xmlschema" >/dev/null 2>&1; then
  exit 0
fi
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "xmlschema>=3,<5" \
  || echo "47-xmlschema: pip could not install xmlschema; the JUnit schema test will be skipped" >&2
