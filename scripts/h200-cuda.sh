#!/usr/bin/env bash
# The CUDA backend's figures on one H200 in one device call (issue 4), the table last:
#   check     `provetop check`: every GPU kernel, product and proof against the cpu backend
#             (NTTs of every order, coset or not; MSMs with edge cases; proofs byte-identical
#             with the same r and s) and the pinned upload rate
#   harness   every kernel check against host references, then the kernel medians (MSM 2^20
#             to 2^26 on each accumulation path, NTT 2^10 to 2^27)
#   setup     synthetic 2^26 and 2^27 on the GPU with one worker: setup time and each
#             partition's device_wall / device_kernels and stages
# then scripts/cuda-table.py: each figure against sppark 0.1.16, the targets and the floors.
#
#   run: OUT=$OUT scripts/h200-cuda.sh      (carry .carry: scripts/build-carry.sh, and the
#        harness prebuilt by `scripts/cuda-build.sh .carry/cuda-bench`)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/provetop-call}
export WORK=${WORK:-/tmp/provetop-call-work}
STEPS="check harness setup" SETUP_LOG2="${SETUP_LOG2:-26 27}" LIMIT_check=${LIMIT_check:-120} \
  LIMIT_harness=${LIMIT_harness:-200} LIMIT_setup26=${LIMIT_setup26:-150} LIMIT_setup27=${LIMIT_setup27:-220} \
  OUT="$OUT" scripts/h200-call.sh
mkdir -p "$OUT"
python3 scripts/cuda-table.py "$WORK" | tee "$OUT/table.md"
