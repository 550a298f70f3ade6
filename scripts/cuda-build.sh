#!/usr/bin/env bash
# Build the CUDA harness (and the product fatbin) into DIR.
#   scripts/cuda-build.sh DIR          nvcc build for sm_90 (CUDA_ARCH=90), harness + fatbin
#   scripts/cuda-build.sh --emu DIR    host-emulated harness (g++, no GPU needed)
#   scripts/cuda-build.sh --check      compile cuda/provetop.cu for sm_80, 86, 89, 90 (--fatbin)
# The harness translation units compile in parallel; each kernel lives in exactly one.
set -euo pipefail
cd "$(dirname "$0")/.."
NVCC=${NVCC:-nvcc}
ARCH=${CUDA_ARCH:-90}
EXTRA=${EXTRA_NVCC_FLAGS:-}  # e.g. -DPT_MSM_ACC_BLOCKS=3 for a tuning variant
TUS="h_main h_field h_ntt h_msm h_fixed h_g2 h_abc"

source_hash() {
    find cuda -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.h' \) -not -path '*/vectors/*' | LC_ALL=C sort | xargs cat |
        sha256sum | cut -c1-16
}

if [ "${1:-}" = "--check" ]; then
    for a in 80 86 89 90; do
        "$NVCC" -O3 --fatbin -gencode arch=compute_$a,code=sm_$a -Xptxas -v cuda/provetop.cu \
            -o /tmp/provetop.sm_$a.fatbin 2>&1 | grep -E "error|spill stores|Used" | sed "s/^/sm_$a: /" | grep -E "error|[1-9][0-9]* bytes spill stores|Used" || true
    done
    exit 0
fi

if [ "${1:-}" = "--emu" ]; then
    DIR=${2:?output dir}
    mkdir -p "$DIR"
    for f in $TUS; do
        g++ -O2 -fno-strict-aliasing -std=c++17 -x c++ -DPT_EMU -include cuda/harness/emu/cuda_emu.h \
            -c cuda/harness/$f.cu -o "$DIR/$f.o" &
    done
    wait
    g++ -o "$DIR/pt_harness_emu" "$DIR"/h_*.o -lpthread
    echo "built $DIR/pt_harness_emu"
    exit 0
fi

DIR=${1:?output dir}
mkdir -p "$DIR"
FLAGS="-O3 -std=c++17 -gencode arch=compute_$ARCH,code=sm_$ARCH $EXTRA"
pids=()
for f in $TUS; do
    "$NVCC" $FLAGS -Xptxas -v -c cuda/harness/$f.cu -o "$DIR/$f.o" >"$DIR/$f.ptxas.log" 2>&1 &
    pids+=($!)
done
"$NVCC" -O3 --fatbin -gencode arch=compute_$ARCH,code=sm_$ARCH $EXTRA \
    -Xptxas -v cuda/provetop.cu -o "$DIR/provetop.fatbin" >"$DIR/provetop.ptxas.log" 2>&1 &
pids+=($!)
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
if [ $fail != 0 ]; then
    cat "$DIR"/*.ptxas.log | grep -iE "error" | head -40
    exit 1
fi
# (pip-installed toolkits keep libcudart_static.a in ../lib rather than ../lib64)
"$NVCC" -gencode arch=compute_$ARCH,code=sm_$ARCH -Xcompiler -static-libstdc++,-static-libgcc -L"$(dirname "$(command -v "$NVCC")")/../lib" \
    -o "$DIR/pt_harness" "$DIR"/h_*.o
source_hash >"$DIR/SOURCE_HASH"
echo "built $DIR/pt_harness ($(cat "$DIR/SOURCE_HASH"))"
