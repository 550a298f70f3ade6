#!/usr/bin/env bash
# Builds the release binary for a GPU machine (the kernels as a default build embeds them:
# cuda/prebuilt, or compiled when the sources changed; PROVETOP_CUDA_ARCHS=90 compiles sm_90
# alone from source), stripped, and copies it to
# .carry/provetop with .carry/COMMIT naming the commit it was built from (`-dirty` with
# uncommitted changes): the device's copy of the checkout has no history to ask.
#
#   scripts/build-carry.sh    # then: run … carry [".carry"]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env-nvcc.sh
# The release profile as it is (so the benches' and a developer's release builds are reused),
# stripped as it is copied: the carried file must stay small.
cargo build --release
mkdir -p .carry
rm -f .carry/provetop
strip -o .carry/provetop target/release/provetop
git describe --always --dirty >.carry/COMMIT
echo "built .carry/provetop at $(cat .carry/COMMIT)"
