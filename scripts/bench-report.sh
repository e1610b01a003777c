#!/usr/bin/env bash
# Memory and time of writing every report format of a large stored run: for
# each N (default 10000 50000) a SQLite store gets one finished run of N
# executions (gavel-store's report_pages example: one turn, one tool call and
# one verdict each; one in 20 fails, one in 97 errors); gavel-session's
# report_files example then writes run.json, run.xml, run.md and run.html
# `stream` (as `gavel run -o` / `gavel report -o` do) and `whole` (one report
# holding every execution, each file rendered from it: the way before), in
# alternating rounds (default 2; the order flips each round). Prints peak RSS
# and wall time (/usr/bin/time -v) and the files' sizes.
#
#   cargo test --workspace --features gavel-eval/local --no-run   # builds both examples
#   scripts/bench-report.sh [N ...]        # ROUNDS=3, FILL=…, REPORT=… to override
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
fill="${FILL:-$target/debug/examples/report_pages}"
report="${REPORT:-$target/debug/examples/report_files}"
rounds="${ROUNDS:-2}"
sizes=("$@")
[ $# -eq 0 ] && sizes=(10000 50000)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

measure() { # mode db
  local out="$work/out-$1"
  rm -rf "$out"
  mkdir -p "$out"
  /usr/bin/time -v "$report" "$2" latest "$1" "$out" > /dev/null 2> "$work/time"
  local rss wall
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.1f", $2 / 1024}' "$work/time")
  wall=$(awk -F': ' '/Elapsed \(wall/ {print $2}' "$work/time")
  printf '  %-6s peak %8s MiB  wall %8s  KiB:' "$1" "$rss" "$wall"
  for f in run.json run.xml run.md run.html; do
    printf ' %s %s' "$f" "$(( $(stat -c %s "$out/$f") / 1024 ))"
  done
  echo
}

for n in "${sizes[@]}"; do
  db="sqlite://$work/runs-$n.db"
  "$fill" "$db" "$n" | sed 's/^/  /'
  echo "N=$n"
  for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then
      measure whole "$db"; measure stream "$db"
    else
      measure stream "$db"; measure whole "$db"
    fi
  done
done
