#!/usr/bin/env bash
# The test command: formatting, lints and every test, on a fresh machine with only the Rust
# toolchain, gcc and Python. Installs what it needs (nvcc from PyPI for the CUDA kernels).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/env-nvcc.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
cargo test --workspace
echo "== scripts/tui-test.sh"
PROVETOP_BIN="${CARGO_TARGET_DIR:-target}/debug/provetop" scripts/tui-test.sh
