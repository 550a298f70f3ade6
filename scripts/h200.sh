#!/usr/bin/env bash
# The cuda backend on an H200, in one call, each part optional:
#   CHECK=1      provetop check: every GPU result against the cpu backend
#   SIZES="20 24"  end-to-end benches (6 proofs, concurrency 2) at these sizes
#   LOCKS=22     the pipeline comparison at 2^22: lock strategies, prestage, double buffer
#   TELEMETRY=22 scripts/telemetry-h200.sh at 2^22 (engine vs NVML), no overhead rounds
# Logs and JSON under $OUT; tables last. Usage on the GPU machine:
#   CHECK=1 SIZES=24 scripts/h200.sh [path/to/provetop]
set -uo pipefail
BIN=${1:-.carry/provetop}
OUT=${OUT:-/tmp/provetop-h200}
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/provetop-cache XDG_STATE_HOME="$OUT/state"
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv > "$OUT/gpu.txt" 2>&1
"$BIN" devices > "$OUT/devices.txt" 2>&1
if [ -n "${CHECK:-}" ]; then
  "$BIN" check --max-log2 22 > "$OUT/check.txt" 2>&1
  echo "check exit $?" >> "$OUT/check.txt"
fi
bench() { # name, then provetop bench flags
  local name=$1; shift
  "$BIN" bench --backend cuda --json "$@" > "$OUT/$name.json" 2> "$OUT/$name.log"
  runs+=("$OUT/$name.json")
}
runs=()
for k in ${SIZES:-}; do bench "k$k" --log2-constraints "$k" --proofs 6 --concurrency 2; done
if [ -n "${LOCKS:-}" ]; then
  common=(--log2-constraints "$LOCKS" --proofs 10 --concurrency 3 --gpu-workers-per-device 2)
  bench "locks-single" "${common[@]}" --lock single
  bench "locks-two-lock" "${common[@]}" --lock two-lock
  bench "locks-none" "${common[@]}" --lock none
  bench "locks-single-noprestage" "${common[@]}" --lock single --prestage false
  bench "locks-single-nodb" "${common[@]}" --lock single --msm-double-buffer false
fi
if [ -n "${TELEMETRY:-}" ]; then
  BIN="$BIN" OUT="$OUT/telemetry" LOG2="$TELEMETRY" SKIP_OVERHEAD=1 scripts/telemetry-h200.sh > "$OUT/telemetry.md" 2> "$OUT/telemetry.log"
fi
cat "$OUT/gpu.txt" "$OUT/devices.txt"
[ -f "$OUT/check.txt" ] && { grep -v '^PASS' "$OUT/check.txt" | tail -8; echo "PASS lines: $(grep -c '^PASS' "$OUT/check.txt")"; }
for r in "${runs[@]}"; do grep -E "error|panicked" "${r%.json}.log" | tail -2; done
[ -f "$OUT/telemetry.md" ] && tail -12 "$OUT/telemetry.md"
python3 scripts/bench-table.py "${runs[@]}"
