#!/usr/bin/env bash
# The cuda backend on an H200, in one call: correctness against the cpu backend
# (provetop check), then end-to-end benches. Logs and JSON under $OUT; a table last.
# Usage on the GPU machine: scripts/h200.sh [path/to/provetop] [sizes...]
set -uo pipefail
BIN=${1:-.carry/provetop}
shift || true
SIZES=${*:-20 24}
OUT=${OUT:-/tmp/provetop-h200}
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/provetop-cache XDG_STATE_HOME="$OUT/state"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv > "$OUT/gpu.txt" 2>&1
"$BIN" devices > "$OUT/devices.txt" 2>&1
"$BIN" check --max-log2 20 > "$OUT/check.txt" 2>&1
echo "check exit $?" >> "$OUT/check.txt"
runs=()
for k in $SIZES; do
  f="$OUT/bench-k$k.json"
  /usr/bin/time -v "$BIN" bench --backend cuda --log2-constraints "$k" --proofs 6 --concurrency 2 --json \
    > "$f" 2> "$OUT/bench-k$k.log"
  runs+=("$f")
done
cat "$OUT/gpu.txt" "$OUT/devices.txt"
grep -v '^PASS' "$OUT/check.txt" | tail -20
grep -c '^PASS' "$OUT/check.txt"
for k in $SIZES; do grep -E "error|panicked|WARN|proof 6" "$OUT/bench-k$k.log" | tail -4; done
python3 scripts/bench-table.py "${runs[@]}"
