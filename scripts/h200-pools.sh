#!/usr/bin/env bash
# One device call for the synthesis pools (issue 24: why 8MiB PoRep with no flags ran at
# 24,618/h one call and 31,046 another): every GPU result against the cpu backend, then 8MiB
# PoRep with no flags but --proofs 200 and --c1 on this binary (recorded, the .ptrec comes
# back) and on $OLD (a binary of the commit before, one shared synthesis pool), then the 2^24
# defaults sweep on this binary. Tables in $OUT/new/summary.md and $OUT/old/summary.md.
#
#   scripts/build-carry.sh; cp OLD_BINARY .carry/provetop-old   # here; then on the device:
#   OUT=$OUT scripts/h200-pools.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT names the folder that comes back}
OLD=${OLD:-.carry/provetop-old}
sealed=/tmp/provetop-cache/provetop/porep/sealed/8MiB-seed0.c1.json
export POREP_INPUT="--sector-size 8MiB" POREP_PROOFS= LIMIT_check=${LIMIT_check:-150}
# Each bench under peak-rss.py: the process's peak resident memory ends its stderr.
export WRAP="python3 scripts/peak-rss.py"
STEPS=${NEW_STEPS:-check porep sweep} SWEEP=scripts/sweeps/k24-defaults.txt OUT=$OUT/new \
  WORK=/tmp/pools-new \
  POREP_RUNS=${NEW_RUNS:-"p8_seal:--proofs 1;p8_new:--c1 $sealed --proofs 200 --record $OUT/p8-new.ptrec"} \
  scripts/h200-call.sh >/dev/null
# The same run on the binary before, with what the first call sealed and set up.
[[ -x $OLD ]] && BIN=$OLD STEPS=porep OUT=$OUT/old WORK=/tmp/pools-old \
  POREP_RUNS=${OLD_RUNS:-"p8_old:--c1 $sealed --proofs 200"} scripts/h200-call.sh >/dev/null
grep -h "^| p8_\|^| k24\|PASS lines\|== .*exit\|peak_rss" "$OUT"/new/summary.md "$OUT"/old/summary.md 2>/dev/null |
  cut -c1-400
