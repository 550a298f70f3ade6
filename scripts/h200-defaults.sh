#!/usr/bin/env bash
# Issue 24's no-flags figures in one device call on one H200: every GPU result against the cpu
# backend, synthetic 2^24 with no flags beside the best hand configurations
# (scripts/sweeps/k24-defaults.txt), then 8MiB PoRep with no flags but --proofs and --c1 (the
# sector sealed here first, once, by a one-proof run). Tables last, in $OUT/summary.md.
#
#   scripts/build-carry.sh   # here; then on the device:
#   OUT=$OUT scripts/h200-defaults.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export STEPS=${STEPS:-check sweep porep}
export SWEEP=${SWEEP:-scripts/sweeps/k24-defaults.txt}
export LIMIT_check=${LIMIT_check:-120} LIMIT_sweep=${LIMIT_sweep:-260}
sealed=/tmp/provetop-cache/provetop/porep/sealed/8MiB-seed0.c1.json
export POREP_INPUT="--sector-size 8MiB" POREP_PROOFS=
export POREP_RUNS=${POREP_RUNS:-"p8_seal:--proofs 1;p8_defaults:--c1 $sealed --proofs ${PROOFS:-200}"}
exec scripts/h200-call.sh
