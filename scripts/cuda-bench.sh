#!/usr/bin/env bash
# Build (unless a matching prebuilt harness was carried in .carry/cuda-bench) and run the
# CUDA harness on the device machine, logging everything under $OUT.
#   scripts/cuda-bench.sh [harness options]     e.g. --only msm --msm-max 24
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/cuda-bench-out}
mkdir -p "$OUT"
PRE=.carry/cuda-bench
BUILD=/tmp/pt-cuda-build
hash=$(find cuda -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.h' \) -not -path '*/vectors/*' | LC_ALL=C sort | xargs cat |
    sha256sum | cut -c1-16)
{
    date -u +"date: %Y-%m-%dT%H:%M:%SZ"
    echo "commit: ${PT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} sources $hash"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
    nvcc --version | tail -2
} 2>&1 | tee "$OUT/env.txt"

if [ -x "$PRE/pt_harness" ] && [ "$(cat "$PRE/SOURCE_HASH" 2>/dev/null)" = "$hash" ]; then
    BIN="$PRE"
    echo "using the carried build $PRE ($hash)" | tee -a "$OUT/env.txt"
else
    t0=$(date +%s)
    scripts/cuda-build.sh "$BUILD" 2>&1 | tee "$OUT/build.log" || exit 1
    echo "build took $(($(date +%s) - t0)) s" | tee -a "$OUT/env.txt"
    BIN="$BUILD"
fi
if command -v cuobjdump >/dev/null && [ -f "$BIN/provetop.fatbin" ]; then
    cuobjdump -sass "$BIN/provetop.fatbin" >"$OUT/provetop.sass" 2>/dev/null
    awk '/Function :/{f=$3} /IMAD/{match($0,/IMAD[.A-Z0-9]*/); c[f" "substr($0,RSTART,RLENGTH)]++} END{for(k in c) print k, c[k]}' \
        "$OUT/provetop.sass" | sort >"$OUT/sass-imad.txt"
    rm -f "$OUT/provetop.sass"
fi
"$BIN/pt_harness" --vectors cuda/harness/vectors "$@" 2>&1 | tee "$OUT/harness.log"
exit "${PIPESTATUS[0]}"
