#!/usr/bin/env bash
# A large run end to end: N cases (default 100,000) written as a directory of
# YAML files (1,000 cases each), or with SHAPE=csv as one CSV dataset of N rows,
# validated (`gavel validate`: peak RSS) and run against examples/mock-openai as a chat
# target with deterministic checks (one in 20 cases fails), at default settings,
# writing every report format (`-o run.json -o run.md -o run.html -o run.xml`).
# Prints the peak RSS (/usr/bin/time), the wall time, and the time from the last
# model call to exit: the mock stamps each request's arrival; one request sent
# right after gavel exits stamps the exit on the same clock.
#
# With WEB=1, the run's page is then fetched from `gavel serve` on the store five
# times: each load's time (curl's total) and size; and, where Chromium is
# installed, loaded five times in headless Chromium, then filtered to failures
# and searched (scripts/bench-run-page.mjs: the page's own navigation timing;
# SHOT=PATH keeps a screenshot).
#
#   STORE=sqlite (default) or STORE=postgres (a fresh database `gavel_bench` on
#   127.0.0.1:5432, dropped first), ROUNDS=1, GAVEL=…, MOCK=… to override:
#   GAVEL=target/release/gavel MOCK=target/release/mock-openai scripts/bench-end-of-run.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100000}"
rounds="${ROUNDS:-1}"
store="${STORE:-sqlite}"
gavel="${GAVEL:-target/release/gavel}"
mock="${MOCK:-target/release/mock-openai}"
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

"$mock" --addr 127.0.0.1:0 --reply "Your 3 listings: Beach House, Mountain Cabin, City Apartment." > "$work/mock.out" &
pids+=($!)
until [ -s "$work/mock.out" ]; do sleep 0.1; done
url="$(head -1 "$work/mock.out" | awk '{print $NF}')"

mkdir -p "$work/suite"
cat > "$work/suite/suite.yaml" <<YAML
name: bench-end-of-run
targets:
  agent:
    type: chat
    model: openai-compatible:agent@$url/v1
YAML
python3 - "$work/suite" "$n" "${SHAPE:-yaml}" <<'PY'
import sys
out, n, shape = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if shape == "csv":
    with open(f"{out}/suite.yaml", "a") as fh:
        fh.write("datasets:\n  - file: rows.csv\n    case:\n      id: 'case-{{ row }}'\n"
                 "      input: '{{ question }}'\n      checks:\n"
                 "        - {type: contains, value: '{{ answer }}'}\n"
                 "        - {type: regex, pattern: '\\b3 listings\\b'}\n")
    with open(f"{out}/rows.csv", "w") as fh:
        fh.write("row,question,answer\n")
        for i in range(n):
            want = "Lake House" if i % 20 == 0 else "Beach House"
            fh.write(f"{i:06},\"What are my listings? ({i}), a question padded to a realistic length\",{want}\n")
    sys.exit(0)
for f in range(0, n, 1000):
    with open(f"{out}/cases-{f // 1000:04}.yaml", "w") as fh:
        fh.write("cases:\n")
        for i in range(f, min(f + 1000, n)):
            # One case in 20 asks for what the answer lacks: a failure.
            want = "Lake House" if i % 20 == 0 else "Beach House"
            fh.write(f"  - id: case-{i:06}\n    input: What are my listings? ({i})\n"
                     f"    checks:\n      - {{type: contains, value: {want}}}\n"
                     f"      - {{type: regex, pattern: '\\b3 listings\\b'}}\n")
PY

db() {
  if [ "$store" = postgres ]; then
    psql -q -h 127.0.0.1 -U postgres -d test -c 'DROP DATABASE IF EXISTS gavel_bench' \
      -c 'CREATE DATABASE gavel_bench' > /dev/null
    echo "postgres://postgres@127.0.0.1:5432/gavel_bench"
  else
    rm -f "$work"/g.db*
    echo "sqlite://$work/g.db"
  fi
}

/usr/bin/time -f '%M %e' -o "$work/vtime" "$gavel" validate "$work/suite" > "$work/vout" 2>&1 || {
  cat "$work/vout" >&2; exit 1; }
awk -v n="$n" '{printf "validate N=%s: peak %.1f MiB, wall %s s\n", n, $1 / 1024, $2}' "$work/vtime"

for round in $(seq 1 "$rounds"); do
  url_db="$(db)"
  out="$work/out"
  rm -rf "$out" && mkdir -p "$out"
  /usr/bin/time -v "$gavel" run "$work/suite" --db "$url_db" --quiet \
    -o "$out/run.json" -o "$out/run.md" -o "$out/run.html" -o "$out/run.xml" \
    > /dev/null 2> "$work/time" || true
  curl -s -o /dev/null "$url/v1/chat/completions" -H 'content-type: application/json' \
    -d '{"model":"stamp","messages":[{"role":"user","content":"exit"}]}'
  curl -s "$url/arrivals" > "$work/arrivals.json"
  python3 - "$work/arrivals.json" "$work/time" "$out" "$n" "$store" <<'PY'
import json, os, re, sys
arrivals = json.load(open(sys.argv[1]))["arrivals_us"]
time = open(sys.argv[2]).read()
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", time).group(1)) / 1024
wall = re.search(r"Elapsed \(wall clock\) time .*: (\S+)", time).group(1)
status = re.search(r"Exit status: (\d+)", time).group(1)
n = int(sys.argv[4])
# The stamp is the last arrival; the run's last model call the one before it.
end = (arrivals[-1] - arrivals[-2]) / 1e6
sizes = " ".join(f"{f} {os.path.getsize(os.path.join(sys.argv[3], f)) // 1024} KiB"
                 for f in ("run.json", "run.md", "run.html", "run.xml")
                 if os.path.exists(os.path.join(sys.argv[3], f)))
print(f"{sys.argv[5]} N={n}: exit {status}, peak {rss:.1f} MiB, wall {wall}, "
      f"last model call to exit {end:.2f} s; {sizes}")
PY
  if [ "${WEB:-0}" = 1 ]; then
    run_id="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["id"])' "$out/run.json")"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    "$gavel" serve --bind "127.0.0.1:$port" --db "$url_db" > "$work/serve.log" 2>&1 &
    pids+=($!)
    until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.2; done
    for _ in 1 2 3 4 5; do
      curl -s -o /dev/null -w "run page: HTTP %{http_code}, %{time_total} s, %{size_download} bytes\n" \
        "http://127.0.0.1:$port/runs/$run_id"
    done
    if command -v "${CHROMIUM:-chromium}" > /dev/null 2>&1; then
      node scripts/bench-run-page.mjs "http://127.0.0.1:$port/runs/$run_id"
    fi
    kill "${pids[-1]}"
  fi
done
