#!/usr/bin/env bash
# Compiles the CUDA kernels for the default architectures (sm_80, 86, 89, 90 and compute_90
# PTX) with nvcc 13.0 and writes them to cuda/prebuilt/ (provetop.fatbin and manifest.txt,
# which names the sources' digest and the nvcc arguments). Run it after changing a kernel and
# commit both files: builds then embed them without nvcc, and tests/prebuilt_kernels.rs fails
# until they match the sources. Until then a build compiles the changed kernels itself.
set -euo pipefail
cd "$(dirname "$0")/.."
PROVETOP_NEED_NVCC=1 source scripts/env-nvcc.sh
[ -n "${NVCC:-}" ] || { echo "nvcc 13.0 is needed (scripts/env-nvcc.sh could not install it)" >&2; exit 1; }
unset PROVETOP_CUDA_ARCHS
# The root package's build script does the compiling, so the recipe lives in one place.
PROVETOP_CUDA_PREBUILD=1 cargo build -p provetop --bin provetop 2>&1 | grep -E "warning: provetop@|error" || true
scripts/kernel-digest.sh --current && cat cuda/prebuilt/manifest.txt
