#!/usr/bin/env bash
# Builds the release binary for a GPU machine (sm_90 and PTX, stripped) and copies it to
# .carry/provetop with .carry/COMMIT naming the commit it was built from (`-dirty` with
# uncommitted changes): the device's copy of the checkout has no history to ask.
#
#   scripts/build-carry.sh    # then: run … carry [".carry"]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env-nvcc.sh
PROVETOP_CUDA_ARCHS=${PROVETOP_CUDA_ARCHS:-90} CARGO_PROFILE_RELEASE_DEBUG=0 \
  CARGO_PROFILE_RELEASE_STRIP=true cargo build --release
mkdir -p .carry
cp --remove-destination target/release/provetop .carry/provetop
git describe --always --dirty >.carry/COMMIT
echo "built .carry/provetop at $(cat .carry/COMMIT)"
