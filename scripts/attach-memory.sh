#!/usr/bin/env bash
# `attach --summary` against a server that sends a huge history, measured (a benchmark, not a
# timed test): scripts/attach-memory-server.py answers Watch with a real recording's header and
# then its frames over and over, BYTES in all (default 550 MB), before CaughtUp. Peak RSS (from
# wait4, scripts/peak-rss.py) and wall time of `attach --summary` at `--max-memory 1MiB` (the
# floor: the process itself), at each of $BOUNDS (MiB) and at the default bound (512 MiB). Needs
# python3 with grpcio and grpcio-tools. Prints a table; the exit code is 1 if a run exited
# other than 0 or its peak, less the floor, reached its bound.
#   scripts/attach-memory.sh [path/to/provetop]     (default: a release build)
#   BYTES=550000000 BOUNDS="32MiB 128MiB" RECORDING=examples/h200-k22-single-to-two-lock.ptrec
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
BOUNDS=${BOUNDS-32MiB 128MiB}
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

# `attach --summary` at bound $2 against $port: one table row; the first run's peak is the floor.
bad=0
floor=
measure() {
    local label=$1 bound=$2 peak rc t0 t1
    t0=$(date +%s.%N)
    set +e
    python3 scripts/peak-rss.py "$BIN" attach "$port" --summary --max-memory "$bound" \
        >"$OUT/$bound.txt" 2>"$OUT/$bound.err"
    rc=$?
    set -e
    t1=$(date +%s.%N)
    peak=$(sed -n 's/^peak_rss_bytes //p' "$OUT/$bound.err")
    floor=${floor:-$peak}
    local limit=$(( ${bound%MiB} << 20 ))
    printf '| %s | %s | %d | %d | %d | %.1f |\n' "$label" "$bound" "$((peak >> 20))" \
        "$(( (peak - floor) >> 20 ))" "$rc" "$(echo "$t1 - $t0" | bc)"
    if [[ $rc -ne 0 || $((peak - floor)) -ge $limit ]]; then bad=1; fi
}

serve "$BYTES"
echo "| history | --max-memory | peak RSS (MiB) | less the floor (MiB) | exit | wall (s) |"
echo "|---|---|---|---|---|---|"
measure "$((BYTES / 1000000)) MB" 1MiB
for b in $BOUNDS 512MiB; do measure "$((BYTES / 1000000)) MB" "$b"; done
grep -h "left out" "$OUT"/*.err >&2 || true
exit $bad
