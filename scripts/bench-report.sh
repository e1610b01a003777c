#!/usr/bin/env bash
# Time and memory of `gavel report` writing every format of a large stored run:
# for each N (default 10000 50000) a SQLite store gets one finished run of N
# executions (`gavel-store`'s report_pages example: one turn, one tool call
# and one verdict each; one in 20 fails, one in 97 errors), then each gavel
# binary given reports it with `-o run.json -o run.xml -o run.md -o run.html`,
# in alternating rounds (default 2; the order flips each round). Prints peak
# RSS and wall time (from /usr/bin/time -v) and the files' sizes.
#
#   FILL=target/debug/examples/report_pages scripts/bench-report.sh BEFORE_GAVEL AFTER_GAVEL [N ...]
#   ROUNDS=3 …
set -euo pipefail
cd "$(dirname "$0")/.."
before="$1"
after="$2"
shift 2
sizes=("${@:-10000 50000}")
[ $# -eq 0 ] && sizes=(10000 50000)
rounds="${ROUNDS:-2}"
fill="${FILL:-target/debug/examples/report_pages}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

measure() { # label binary db
  local out="$work/out-$1"
  rm -rf "$out"
  mkdir -p "$out"
  /usr/bin/time -v "$2" report latest --db "$3" --color never \
    -o "$out/run.json" -o "$out/run.xml" -o "$out/run.md" -o "$out/run.html" \
    > /dev/null 2> "$work/time" || true
  local rss wall
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.1f", $2 / 1024}' "$work/time")
  wall=$(awk -F': ' '/Elapsed \(wall/ {print $2}' "$work/time")
  printf '  %-6s peak %8s MiB  wall %8s  sizes:' "$1" "$rss" "$wall"
  for f in run.json run.xml run.md run.html; do
    [ -f "$out/$f" ] && printf ' %s %s KiB' "$f" "$(( $(stat -c %s "$out/$f") / 1024 ))"
  done
  echo
}

for n in "${sizes[@]}"; do
  db="sqlite://$work/runs-$n.db"
  "$fill" "$db" "$n" | sed 's/^/  /'
  echo "N=$n"
  for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then
      measure before "$before" "$db"
      measure after "$after" "$db"
    else
      measure after "$after" "$db"
      measure before "$before" "$db"
    fi
  done
done
