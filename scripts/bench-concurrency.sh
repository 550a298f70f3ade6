#!/usr/bin/env bash
# Throughput against jobs in flight: alternates `provetop bench --concurrency 1` and
# `--concurrency 2` (ROUNDS each, PROOFS jobs per run) on synthetic 2^LOG2 and prints the
# median proofs per hour of each and their ratio. Usage: scripts/bench-concurrency.sh [BIN]
# EXTRA="--lock none" adds flags to every run.
set -euo pipefail
BIN=${1:-target/release/provetop}
LOG2=${LOG2:-14}
PROOFS=${PROOFS:-24}
ROUNDS=${ROUNDS:-5}
BACKEND=${BACKEND:-cpu}
read -r -a EXTRA <<<"${EXTRA:-}"
OUT=${OUT:-$(mktemp -d)}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$OUT/cache}
"$BIN" bench --backend "$BACKEND" --log2-constraints "$LOG2" --proofs 1 --json > /dev/null 2>&1 # params, warm-up
for r in $(seq "$ROUNDS"); do
  for c in 1 2; do
    "$BIN" bench --backend "$BACKEND" --log2-constraints "$LOG2" --proofs "$PROOFS" --concurrency "$c" "${EXTRA[@]}" --json \
      > "$OUT/c$c-r$r.json" 2> /dev/null
  done
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
pph = {c: [json.load(open(f"{out}/c{c}-r{r}.json"))["summary"]["proofs_per_hour"] for r in range(1, rounds + 1)] for c in (1, 2)}
for c in (1, 2):
    print(f"concurrency {c}: median {statistics.median(pph[c]):.0f} proofs/hour (runs: {', '.join(f'{x:.0f}' for x in pph[c])})")
print(f"ratio concurrency 2 / 1: {statistics.median(pph[2]) / statistics.median(pph[1]):.3f}")
PY
