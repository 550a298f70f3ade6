#!/usr/bin/env bash
# Telemetry truth and cost on a GPU (written for the H200; any NVIDIA GPU with NVML runs it):
#
# 1. Truth: one `provetop bench --backend cuda` run at 2^24; over the same window the engine's
#    GPU-busy fraction (merged compute spans) against NVML's utilisation (within 5 points),
#    the engine's PCIe byte accounting against NVML's (GPM PCIe counters where the driver
#    allows, else the throughput counters; within 10 %), and the timeline checks: kernels of
#    one stream never overlap (a kernel group may contain its kernels) and no copy is on a
#    compute lane.
# 2. Cost: scripts/telemetry-overhead.sh with BACKEND=cuda LOG2=24 (telemetry on and off
#    interleaved, with the noise floor between identical configurations).
#
#   scripts/telemetry-h200.sh               # PROOFS=8 ROUNDS=6 by default
#   SKIP_OVERHEAD=1 scripts/telemetry-h200.sh
#   BIN=path/to/provetop scripts/telemetry-h200.sh   # a binary built elsewhere
#
# Needs the cuda backend (kernels embedded: nvcc at build time) to emit its spans and byte
# accounting. Prints a markdown report on stdout; exits 1 when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

LOG2="${LOG2:-24}"
PROOFS="${PROOFS:-8}"
ROUNDS="${ROUNDS:-6}"
OUT="${OUT:-${CARGO_TARGET_DIR:-target}/telemetry-h200}"
mkdir -p "$OUT"

if [ -z "${BIN:-}" ]; then
  source scripts/env-nvcc.sh
  echo "== building the release binary" >&2
  cargo build --release --quiet 2>&1 | grep -v "^warning: provetop@" >&2 || true
  cp "${CARGO_TARGET_DIR:-target}/release/provetop" "$OUT/provetop"
  BIN="$OUT/provetop"
fi

"$BIN" devices >"$OUT/devices.txt" 2>&1 || true
if ! grep -Eq "^auto: +cuda" "$OUT/devices.txt"; then
  echo "the cuda backend is not usable here:" >&2
  cat "$OUT/devices.txt" >&2
  exit 2
fi

echo "# Telemetry on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
echo
echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "- binary built at: $(cat "$(dirname "${BIN:-.carry/provetop}")/COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader | head -1)"
echo "- host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "- command: scripts/telemetry-h200.sh (LOG2=$LOG2 PROOFS=$PROOFS ROUNDS=$ROUNDS)"
echo

echo "== truth run: synthetic 2^$LOG2, $PROOFS proofs" >&2
"$BIN" bench --backend cuda --workload synthetic --log2-constraints "$LOG2" --proofs "$PROOFS" \
  --concurrency 2 --json >"$OUT/truth.json" 2>"$OUT/truth.stderr"

truth=0
python3 scripts/telemetry-truth.py "$OUT/truth.json" || truth=1

if [ -z "${SKIP_OVERHEAD:-}" ]; then
  echo "## Cost"
  echo
  BACKEND=cuda LOG2="$LOG2" PROOFS="$PROOFS" ROUNDS="$ROUNDS" OUT="$OUT/overhead" scripts/telemetry-overhead.sh
fi
exit "$truth"
