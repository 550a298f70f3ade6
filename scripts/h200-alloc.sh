#!/usr/bin/env bash
# What keeping freed pages mapped buys on a GPU host, in one device call:
#   1. scripts/pagefault-probe.c: first-touch against re-touch write rates of this host;
#   2. bench at 2^$LOG2 (default 22) on the cuda backend, interleaved twice: the system
#      allocator ($SYS, a binary built without jemalloc), jemalloc keeping pages (the default
#      of $BIN), jemalloc purging at once (_RJEM_MALLOC_CONF=dirty_decay_ms:0,...);
#   3. RECORD=1: scripts/record-h200.sh with $BIN (the example recording).
# Everything lands in $WORK; $OUT gets logs.tar.gz, the recording and nothing else (the device
# returns 8 files). Tables last.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.carry/provetop}
SYS=${SYS:-.carry/provetop-sys}
LOG2=${LOG2:-22}
PROOFS=${PROOFS:-16}
OUT=${OUT:-/tmp/provetop-alloc}
WORK=${WORK:-/tmp/provetop-alloc-work}
mkdir -p "$OUT" "$WORK"
export XDG_CACHE_HOME=/tmp/provetop-cache XDG_STATE_HOME="$WORK/state"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$WORK/gpu.txt" 2>&1
gcc -O2 -pthread scripts/pagefault-probe.c -o "$WORK/pf" && "$WORK/pf" 2 16 >"$WORK/pagefault.txt" 2>&1

# Parameters once, outside the timed runs.
"$BIN" bench --backend cuda --log2-constraints "$LOG2" --proofs 1 --json >"$WORK/warm.json" 2>"$WORK/warm.log"

runs=()
bench() { # name, binary, then env assignments as NAME=VALUE
  local name=$1 bin=$2; shift 2
  env "$@" "$bin" bench --backend cuda --log2-constraints "$LOG2" --proofs "$PROOFS" \
    --concurrency 4 --json >"$WORK/$name.json" 2>"$WORK/$name.log"
  runs+=("$WORK/$name.json")
}
for round in 1 2; do
  [ -x "$SYS" ] && bench "sys-$round" "$SYS"
  bench "retain-$round" "$BIN"
  bench "purge-$round" "$BIN" _RJEM_MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0
done

if [ -n "${RECORD:-}" ]; then
  SECONDS_=${RECORD_SECONDS:-180} LOG2="$LOG2" OUT="$WORK/record" BIN="$BIN" \
    scripts/record-h200.sh >"$WORK/record.txt" 2>"$WORK/record.log"
  echo "record exit $?" >>"$WORK/record.txt"
  cp "$WORK"/record/*.ptrec "$OUT/" 2>/dev/null
fi

tar czf "$OUT/logs.tar.gz" -C "$WORK" --exclude='*.ptrec' --exclude=cache --exclude='trace.json' . 2>/dev/null
cat "$WORK/gpu.txt" "$WORK/pagefault.txt"
[ -f "$WORK/record.txt" ] && tail -14 "$WORK/record.txt"
for r in "${runs[@]}"; do grep -E "error|panicked" "${r%.json}.log" | tail -2; done
python3 scripts/bench-table.py "${runs[@]}"
