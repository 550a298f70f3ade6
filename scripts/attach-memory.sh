#!/usr/bin/env bash
# `attach --summary` against a server that sends a huge history, measured (a benchmark, not a
# timed test): scripts/attach-memory-server.py answers Watch with a real recording's header and
# then its frames over and over, BYTES in all (default 550 MB), before CaughtUp. Peak RSS (from
# wait4, scripts/peak-rss.py) and wall time of `attach --summary` at the default bound (512 MiB)
# and at each of $BOUNDS; a 1 MB history first gives the floor. Needs python3 with grpcio and
# grpcio-tools. Prints a table; the exit code is 1 if a run exited other than 0 or took its
# bound or more.
#   scripts/attach-memory.sh [path/to/provetop]     (default: a release build)
#   BYTES=550000000 BOUNDS="128MiB" RECORDING=examples/h200-k22-single-to-two-lock.ptrec
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${CARGO_TARGET_DIR:-target}/attach-memory}
mkdir -p "$OUT"
BIN=${1:-}
if [[ -z $BIN ]]; then
    cargo build --release --bin provetop 2>&1 | tail -1 >&2
    BIN=${CARGO_TARGET_DIR:-target}/release/provetop
fi
BYTES=${BYTES:-550000000}
BOUNDS=${BOUNDS-128MiB}
RECORDING=${RECORDING:-examples/h200-k22-single-to-two-lock.ptrec}
export XDG_CACHE_HOME="$OUT/cache" XDG_STATE_HOME="$OUT/state" XDG_CONFIG_HOME="$OUT/config"
python3 -m grpc_tools.protoc -Iproto --python_out="$OUT" --grpc_python_out="$OUT" \
    provetop/v1/telemetry.proto

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# Starts a server sending $1 bytes of history; sets $port.
serve() {
    rm -f "$OUT/port"
    python3 scripts/attach-memory-server.py "$OUT" "$RECORDING" "$1" "$OUT/port" \
        2>>"$OUT/server.log" &
    pids+=($!)
    for _ in $(seq 100); do [[ -s $OUT/port ]] && break; sleep 0.1; done
    [[ -s $OUT/port ]] || { echo "the server did not start: $OUT/server.log" >&2; exit 1; }
    port=$(cat "$OUT/port")
}

# `attach --summary` at bound $2 (bytes; "" for the default) against $port; one table row.
bad=0
measure() {
    local label=$1 bound=$2 flag=() peak rc t0 t1
    [[ -n $bound ]] && flag=(--max-memory "$bound")
    t0=$(date +%s.%N)
    set +e
    python3 scripts/peak-rss.py "$BIN" attach "$port" --summary "${flag[@]}" \
        >"$OUT/$label.txt" 2>"$OUT/$label.err"
    rc=$?
    set -e
    t1=$(date +%s.%N)
    peak=$(sed -n 's/^peak_rss_bytes //p' "$OUT/$label.err")
    local limit=${bound:-512MiB}
    limit=$(( ${limit%MiB} << 20 ))
    printf '| %s | %s | %d | %d | %.1f | %d |\n' "$label" "${bound:-512MiB (default)}" \
        "$((peak >> 20))" "$rc" "$(echo "$t1 - $t0" | bc)" "$(( limit >> 20 ))"
    if [[ $rc -ne 0 || $peak -ge $limit ]]; then bad=1; fi
}

echo "| history | --max-memory | peak RSS (MiB) | exit | wall (s) | bound (MiB) |"
echo "|---|---|---|---|---|---|"
serve 1000000
measure small-default ""
serve "$BYTES"
measure huge-default ""
for b in $BOUNDS; do measure "huge-$b" "$b"; done
grep -h "left out" "$OUT"/huge-*.err >&2 || true
exit $bad
