#!/usr/bin/env bash
# One device call for a, b, c on the GPU (issue 17): every GPU result against the cpu backend
# (`provetop check`, a pre-compiled circuit's products and proofs with them among it), then
# 8MiB PoRep with no flags but --proofs 200 and --c1 (sealed in the same call, recorded; the
# .ptrec comes back). Tables in $OUT/summary.md.
#
#   scripts/build-carry.sh   # here; then on the device:
#   OUT=$OUT scripts/h200-abc.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT names the folder that comes back}
sealed=/tmp/provetop-cache/provetop/porep/sealed/8MiB-seed0.c1.json
export POREP_INPUT="--sector-size 8MiB" POREP_PROOFS= LIMIT_check=${LIMIT_check:-200}
export WRAP="python3 scripts/peak-rss.py"
STEPS=${STEPS:-check porep} OUT=$OUT WORK=/tmp/abc-work \
  POREP_RUNS=${RUNS:-"p8_seal:--proofs 1;p8_abc:--c1 $sealed --proofs 200 --record $OUT/p8-abc.ptrec"} \
  scripts/h200-call.sh >/dev/null
grep -h "^| p8_\|PASS lines\|FAIL\|== .*exit\|peak_rss\|abc" "$OUT"/summary.md 2>/dev/null | cut -c1-400
