#!/usr/bin/env bash
# PostgreSQL on 127.0.0.1:5432 (this machine kind provides it with trust auth):
# start it when it is installed but down. .ci/run fails when it is still not
# reachable afterwards.
set -euo pipefail
if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
