#!/usr/bin/env bash
# Interleaved A/B of two gavel release builds on the judged suite of
# crates/gavel/benches (one `chat` target call and one judge call per case,
# against mock-openai), each run with a fresh SQLite store.
#
#   BASE=DIR NEW=DIR scripts/bench-compare.sh [ROW ...]      ROW = CASES:LATENCY_MS:JOBS:ROUNDS (JOBS "d": default -j)
#   default rows: 1000:0:d:5 5000:0:d:3 1000:200:32:1
#   the memory rows of issue 25: 1000:0:d:1 10000:0:d:1 100000:0:d:1
#
# BASE and NEW: directories each holding a release `gavel` (e.g. copies of
# target/release/gavel built at the previous commit and at this one);
# MOCK, the mock-openai binary (default $BASE/mock-openai). Within a row, rounds
# alternate which binary goes first (AB, BA, AB, ...). Prints every run, then per
# binary and row: CPU ms/case (user+sys of gavel) min/median, wall s min/median,
# peak RSS MiB max, and for rows with latency the wall / ideal ratio
# (ideal = 2 x cases x latency / jobs).
set -euo pipefail

BASE=${BASE:?set BASE to the directory of the baseline gavel}
NEW=${NEW:?set NEW to the directory of the gavel to compare}
MOCK=${MOCK:-$BASE/mock-openai}
ROWS=("$@")
[ ${#ROWS[@]} -gt 0 ] || ROWS=(1000:0:d:5 5000:0:d:3 1000:200:32:1)

work=$(mktemp -d /tmp/gavel-compare.XXXXXX)
mock_pid=
cleanup() {
    [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The suite of benches/support/mod.rs `suite(cases, url)`, written to directory
# $3 as a settings file and files of at most 10,000 cases (one YAML file of
# 100,000 cases would pass the loader's node budget).
suite() {
    local cases=$1 url=$2 dir=$3
    mkdir -p "$dir"
    printf 'judge:\n  model: openai-compatible:judge@%s/v1\ntargets:\n  agent:\n    type: chat\n    model: openai-compatible:agent@%s/v1\n    system: You manage properties.\n' "$url" "$url" >"$dir/00-settings.yaml"
    awk -v n="$cases" -v dir="$dir" 'BEGIN {
        for (i = 0; i < n; i++) {
            f = sprintf("%s/cases-%03d.yaml", dir, int(i / 10000))
            if (i % 10000 == 0) printf "cases:\n" > f
            printf "  - id: c%04d\n    input: Count my listings, question %d.\n    checks:\n      - {type: contains, value: You said}\n      - {type: judge, criteria: Answers the question., scale: \"1-5\"}\n", i, i > f
        }
    }'
}

start_mock() {
    [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
    local fifo=$work/mock.out
    rm -f "$fifo"; mkfifo "$fifo"
    "$MOCK" --latency-ms "$1" >"$fifo" 2>/dev/null &
    mock_pid=$!
    exec 3<"$fifo"
    read -r line <&3
    url=${line##* }
}

# One run: prints "cpu_ms_per_case wall_s rss_mib" (user+sys and peak RSS of
# the gavel process from wait4, to the microsecond).
run() {
    local bin=$1 cases=$2 jobs=$3 suite_file=$4 n=$5
    local db="sqlite://$work/run-$n.db"
    local extra=()
    [ "$jobs" = d ] || extra=(-j "$jobs")
    python3 - "$cases" "$work/err-$n" "$bin/gavel" run "$suite_file" --db "$db" \
        --quiet --color never "${extra[@]}" <<'PY' || { echo "gavel run failed ($bin):" >&2; tail -5 "$work/err-$n" >&2; exit 1; }
import os, sys, time
cases, err, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
start = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    os.execv(argv[0], argv)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - start
if status != 0:
    sys.exit(1)
print(f"{(ru.ru_utime + ru.ru_stime) * 1000 / cases:.4f} {wall:.3f} {ru.ru_maxrss / 1024:.1f}")
PY
    rm -f "$work"/run-"$n".db*
}

stats() { # values on stdin -> "min median max"
    sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s %s\n", v[1], m, v[NR] }'
}

summary=()
n=0
for row in "${ROWS[@]}"; do
    IFS=: read -r cases latency jobs rounds <<<"$row"
    start_mock "$latency"
    suite_file=$work/suite-$cases-$latency
    suite "$cases" "$url" "$suite_file"
    : >"$work/base.txt"; : >"$work/new.txt"
    for ((r = 0; r < rounds; r++)); do
        order=(base new); ((r % 2)) && order=(new base)
        for who in "${order[@]}"; do
            dir=$BASE; [ "$who" = new ] && dir=$NEW
            n=$((n + 1))
            out=$(run "$dir" "$cases" "$jobs" "$suite_file" "$n")
            echo "$out" >>"$work/$who.txt"
            printf '%-5s cases=%-5s latency=%-3sms -j %-2s round %d: cpu %s ms/case  wall %s s  rss %s MiB\n' \
                "$who" "$cases" "$latency" "$jobs" "$r" $out
        done
    done
    for who in base new; do
        read -r cmin cmed _ < <(cut -d' ' -f1 "$work/$who.txt" | stats)
        read -r wmin wmed _ < <(cut -d' ' -f2 "$work/$who.txt" | stats)
        read -r _ _ rmax < <(cut -d' ' -f3 "$work/$who.txt" | stats)
        ratio=n/a
        if [ "$latency" != 0 ]; then
            j=$jobs; [ "$j" = d ] && j=4
            ratio=$(awk -v w="$wmed" -v c="$cases" -v l="$latency" -v j="$j" 'BEGIN { printf "%.3f", w / (2 * c * l / 1000 / j) }')
        fi
        summary+=("$(printf '%-5s %6s %5sms %4s %3s | %8s %8s | %8s %8s | %7s | %6s' \
            "$who" "$cases" "$latency" "$jobs" "$rounds" "$cmin" "$cmed" "$wmin" "$wmed" "$rmax" "$ratio")")
    done
done
echo
printf '%-5s %6s %7s %4s %3s | %8s %8s | %8s %8s | %7s | %6s\n' bin cases latency -j R \
    "cpu min" "cpu med" "wall min" "wall med" "RSS MiB" ratio
printf '%s\n' "${summary[@]}"
