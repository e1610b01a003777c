#!/usr/bin/env bash
# CPU cost of `--otel` per judged case: the same judged suite (one case run
# CASES times, default 1,000, answer cache off) against examples/mock-openai, in
# alternating rounds (default 3; the order flips each round) with and without
# `--otel` sending to a local OTLP/HTTP receiver that answers 200. Prints gavel's
# own CPU (user + system, from /usr/bin/time) per case and its peak RSS for each
# run, the medians, and the export's cost as ratios (otel / plain).
#
#   GAVEL=target/debug/gavel MOCK=target/debug/mock-openai scripts/bench-otel.sh [CASES] [ROUNDS]
#
# With BASE=PATH NEW=PATH (two gavel binaries, e.g. the previous commit's
# release build and this one's) instead of GAVEL, each round runs the four
# combinations (base and new, plain and otel; the order flips each round) and
# the summary adds each binary's otel / plain and new / base of the otel runs.
#
# With COUNT=1, each binary runs once plain and once with `--otel` under
# valgrind's callgrind instead (CASES default 500; ROUNDS unused): it prints
# instructions per case, which do not vary with the machine's load, the ratio,
# and where the export's instructions go: gavel building the spans and log
# records on the run's thread (`Exporter::execution`), opentelemetry-otlp
# turning a batch of spans into a request body (the SDK's conversion to
# protobuf messages and prost's encoding) and its whole export of log records.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-$([ -n "${COUNT:-}" ] && echo 500 || echo 1000)}"
rounds="${2:-3}"
if [ -n "${BASE:-}${NEW:-}" ]; then
  bins=("base=${BASE:?set BASE and NEW}" "new=${NEW:?set BASE and NEW}")
else
  bins=("=${GAVEL:-target/debug/gavel}")
fi
mock="${MOCK:-target/debug/mock-openai}"
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

"$mock" --addr 127.0.0.1:0 > "$work/mock.out" &
pids+=($!)
until [ -s "$work/mock.out" ]; do sleep 0.1; done
url="$(head -1 "$work/mock.out" | awk '{print $NF}')"

python3 - "$work/receiver.port" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
pids+=($!)
until [ -s "$work/receiver.port" ]; do sleep 0.1; done
receiver="http://127.0.0.1:$(cat "$work/receiver.port")"

cat > "$work/suite.yaml" <<YAML
name: bench-otel
judge:
  model: openai-compatible:judge@$url/v1
targets:
  agent:
    type: chat
    model: openai-compatible:agent@$url/v1
cases:
  - id: judged
    input: What are my listings?
    criteria: Names the user's listings.
    checks:
      - {type: judge, scale: "1-5", threshold: 4}
YAML

# Instructions per case under callgrind (COUNT=1): the file's total, or the
# inclusive count of function $2 (the largest of its entries; calls excluded).
per_case() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null | awk -v f="${2:-}" -v c="$cases" '
    f == "" && /PROGRAM TOTALS/ { gsub(",", "", $1); n = $1 }
    f != "" && !/=>/ { i = index($0, ":" f); e = substr($0, i + length(f) + 1, 1)
      if (i && (e == "" || e == " ")) { gsub(",", "", $1); if ($1 + 0 > n) n = $1 + 0 } }
    END { printf "%.0f", n / c }'
}
counted() { # $1 = binary's name, $2 = binary
  local prefix="${1:+$1-}"
  for mode in plain otel; do
    local flags=()
    [ "$mode" = otel ] && flags=(--otel --otel-endpoint "$receiver")
    rm -f "$work/g.db"
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.$mode" "$2" run "$work/suite.yaml" \
      --db "sqlite://$work/g.db" --repeat "$cases" --no-cache --quiet -j 8 "${flags[@]}" \
      > /dev/null 2> "$work/err" || true
    grep -q warning "$work/err" && { cat "$work/err" >&2; exit 1; }
  done
  local plain otel built traces logs
  plain="$(per_case "$work/cg.plain")"
  otel="$(per_case "$work/cg.otel")"
  built="$(per_case "$work/cg.otel" "gavel_otel::exporter::Exporter::execution")"
  traces="$(per_case "$work/cg.otel" "opentelemetry_otlp::exporter::http::OtlpHttpClient::build_trace_export_body")"
  logs="$(per_case "$work/cg.otel" "<opentelemetry_otlp::logs::LogExporter as opentelemetry_sdk::logs::export::LogExporter>::export::{{closure}}")"
  awk -v p="$prefix" -v a="$plain" -v b="$otel" -v e="${built:-0}" -v t="${traces:-0}" -v l="${logs:-0}" 'BEGIN {
    printf "%splain: %d instructions per judged case\n%sotel: %d (%.3fx, +%d)\n", p, a, p, b, b / a, b - a
    printf "  gavel building spans and records on the run thread: %d (%.1f%% of a plain case)\n", e, 100 * e / a
    printf "  opentelemetry-otlp: trace request bodies %d (%.1f%%), log export %d (%.1f%%)\n", t, 100 * t / a, l, 100 * l / a
    printf "  the rest (batching threads, HTTP, allocator): %d (%.1f%%)\n", b - a - e - t - l, 100 * (b - a - e - t - l) / a }'
}
if [ -n "${COUNT:-}" ]; then
  for b in "${bins[@]}"; do counted "${b%%=*}" "${b#*=}"; done
  exit 0
fi

one() { # $1 = label, $2 = binary, rest = extra flags; prints CPU ms per case
  local label="$1" gavel="$2"; shift 2
  rm -f "$work/g.db"
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$gavel" run "$work/suite.yaml" --db "sqlite://$work/g.db" \
    --repeat "$cases" --no-cache --quiet -j 8 "$@" > /dev/null 2> "$work/err" || true
  grep -q warning "$work/err" && { cat "$work/err" >&2; exit 1; }
  awk -v c="$cases" -v l="$label" '{printf "%s %.3f %.1f\n", l, ($1 + $2) * 1000 / c, $3 / 1024}' "$work/time"
}

both() { # $1 = binary's name (empty alone), $2 = binary; plain and otel, in round $3's order
  local plain="${1:+$1-}plain" otel="${1:+$1-}otel"
  if [ $(($3 % 2)) -eq 1 ]; then
    one "$plain" "$2"; one "$otel" "$2" --otel --otel-endpoint "$receiver"
  else
    one "$otel" "$2" --otel --otel-endpoint "$receiver"; one "$plain" "$2"
  fi
}
for round in $(seq 1 "$rounds"); do
  order=("${bins[@]}")
  if [ $((round % 2)) -eq 0 ]; then
    order=(); for ((i = ${#bins[@]} - 1; i >= 0; i--)); do order+=("${bins[i]}"); done
  fi
  for b in "${order[@]}"; do both "${b%%=*}" "${b#*=}" "$round"; done
done | tee "$work/results"
median() { # $1 = label, $2 = column
  grep "^$1 " "$work/results" | awk -v c="$2" '{print $c}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
for b in "${bins[@]}"; do
  name="${b%%=*}"; prefix="${name:+$name-}"
  for label in plain otel; do
    printf "median %s: %.3f ms CPU per judged case, %.1f MiB peak RSS\n" "$prefix$label" \
      "$(median "$prefix$label" 2)" "$(median "$prefix$label" 3)"
  done
  awk -v l="$prefix" -v a="$(median "${prefix}otel" 2)" -v b="$(median "${prefix}plain" 2)" \
    -v m="$(median "${prefix}otel" 3)" -v n="$(median "${prefix}plain" 3)" \
    'BEGIN {printf "%sotel / %splain: CPU per case %.3fx, peak RSS %.3fx\n", l, l, a / b, m / n}'
done
if [ ${#bins[@]} -eq 2 ]; then
  awk -v a="$(median new-otel 2)" -v b="$(median base-otel 2)" -v m="$(median new-otel 3)" -v n="$(median base-otel 3)" \
    'BEGIN {printf "new-otel / base-otel: CPU per case %.3fx, peak RSS %.3fx\n", a / b, m / n}'
fi
