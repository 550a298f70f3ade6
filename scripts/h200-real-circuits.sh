#!/usr/bin/env bash
# The real circuits on one GPU in one device call (issues 17 and 24): every GPU result against
# the cpu backend, the issue-17 kernels' harness (G2 MSM, abc_eval), then 8MiB PoRep from the
# carried C1 file — the defaults with $PROOFS jobs (2 partitions each), the plain path for
# comparison, and one partition's synthesis on 1 and on every core. Tables last, in
# $OUT/summary.md.
#
#   scripts/build-carry.sh   # here; then on the device:
#   OUT=$OUT scripts/h200-real-circuits.sh
#
# STEPS and the POREP_* variables of scripts/h200-call.sh override the parts.
set -uo pipefail
cd "$(dirname "$0")/.."
C1=${C1:-.carry/8MiB-seed0.c1.json}
PROOFS=${PROOFS:-100}
PLAIN_PROOFS=${PLAIN_PROOFS:-10}
export STEPS=${STEPS:-check harness porep}
export HARNESS_ARGS=${HARNESS_ARGS:---only g2,abc --reps 5}
export POREP_INPUT=${POREP_INPUT:---c1 $C1}
export POREP_PROOFS=  # each run names its own
# name:flags, separated by `;`
export POREP_RUNS=${POREP_RUNS:-"defaults:--proofs $PROOFS;plain:--precompiled false --proofs $PLAIN_PROOFS;one_core:--synthesis-threads 1 --synthesis-workers 1 --concurrency 1 --proofs 2;all_cores:--synthesis-workers 1 --concurrency 1 --proofs 2"}
exec scripts/h200-call.sh
