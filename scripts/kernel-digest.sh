#!/usr/bin/env bash
# The digest of the kernel sources (every .cu and .cuh under cuda/ outside the test harness)
# that cuda/prebuilt/manifest.txt records: the same as build/prebuilt.rs's `sources_digest`.
# With --current: exit 0 when the prebuilt fatbin was made from these sources, else 1.
set -euo pipefail
cd "$(dirname "$0")/../cuda"
digest=$(find . -path ./harness -prune -o -type f \( -name '*.cu' -o -name '*.cuh' \) -print |
  LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
if [ "${1:-}" = "--current" ]; then
  [ -s prebuilt/provetop.fatbin ] && grep -qx "sources $digest" prebuilt/manifest.txt 2>/dev/null
else
  echo "$digest"
fi
