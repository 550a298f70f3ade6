#!/usr/bin/env bash
# The test command: formatting, lints and every test, on a fresh machine with only the Rust
# toolchain, gcc and Python. Installs what it needs (nvcc from PyPI for the CUDA kernels).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/env-nvcc.sh
# A one-off build gains nothing from incremental state, which took 3 GB of CI's disk.
export CARGO_INCREMENTAL=0
# Each section's heading says how far into the run it starts, so a slow CI run shows where.
section() { echo "== $* (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }
section "cargo fmt --check"
cargo fmt --all -- --check
section "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
section "cargo test"
# The .pftrace export is read back with Perfetto's own protos (the `perfetto` PyPI package).
if ! python3 -c "import perfetto.protos.perfetto.trace.perfetto_trace_pb2" 2>/dev/null; then
  python3 -m pip install --quiet perfetto protobuf 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages perfetto protobuf
fi
PROVETOP_PFTRACE_CHECK=1 cargo test --workspace
section "the CUDA kernels, emulated on the host (cuda/harness, known answers and host references)"
if command -v g++ >/dev/null; then
  emu="${CARGO_TARGET_DIR:-target}/cuda-emu"
  scripts/cuda-build.sh --emu "$emu" >/dev/null
  result=$("$emu/pt_harness_emu" --quick | tail -1)
  echo "$result"
  [[ "$result" == *" 0 failed" ]]
else
  echo "g++ not found: the emulated kernel tests are skipped (the kernels still compile above)"
fi
section "scripts/serve-test.py (provetop serve over gRPC, from Python)"
# grpcio-tools makes the client from proto/; prometheus-client parses GetMetrics' text.
if ! python3 -c "import grpc, grpc_tools, prometheus_client" 2>/dev/null; then
  python3 -m pip install --quiet grpcio grpcio-tools prometheus-client 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages grpcio grpcio-tools prometheus-client
fi
# Our copy of cuzk's proto against cuzk's published file: names, numbers and types.
python3 scripts/proto-compat.py
stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT
python3 -m grpc_tools.protoc -Iproto --python_out="$stubs" --grpc_python_out="$stubs" \
  cuzk/v1/proving.proto
# The cache `cargo test`'s PoRep tests made (CARGO_TARGET_TMPDIR): their sealed 2KiB sector's
# parameters are reused, not set up again.
PYTHONPATH="$stubs" python3 scripts/serve-test.py --bin "${CARGO_TARGET_DIR:-target}/debug/provetop" \
  --cache "${CARGO_TARGET_DIR:-target}/tmp/porep-2kib-cache"
section "scripts/tui-test.sh"
PROVETOP_BIN="${CARGO_TARGET_DIR:-target}/debug/provetop" scripts/tui-test.sh
section "scripts/firstminute-test.sh (the dashboard's first minute at 60x15, 80x24 and 160x48)"
PROVETOP_BIN="${CARGO_TARGET_DIR:-target}/debug/provetop" scripts/firstminute-test.sh
section "scripts/attach-test.sh (provetop attach to serve: two viewers, the token, a restart, TLS)"
PROVETOP_BIN="${CARGO_TARGET_DIR:-target}/debug/provetop" scripts/attach-test.sh
section "scripts/fleet-test.sh (fleet over six serves: rows, SIGKILL, alerts to a webhook, promtool)"
PROVETOP_BIN="${CARGO_TARGET_DIR:-target}/debug/provetop" \
  PROVETOP_CACHE="${CARGO_TARGET_DIR:-target}/tmp/porep-2kib-cache" scripts/fleet-test.sh
section "done"
