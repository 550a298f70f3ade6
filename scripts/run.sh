#!/usr/bin/env bash
# The main job: builds provetop (with our CUDA kernels when nvcc can be had) and opens the
# dashboard over the embedded engine; with stdout not a terminal it proves headless and exits.
# Arguments go to provetop, e.g. scripts/run.sh bench --json.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env-nvcc.sh
cargo build --release --quiet
exec ./target/release/provetop "$@"
