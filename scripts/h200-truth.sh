#!/usr/bin/env bash
# One device call for the engine's own checks (issues 20 and 21), table last in $OUT/summary.md:
#   1. provetop check: every GPU result against the cpu backend (proofs byte-identical)
#   2. 8MiB PoRep (`bench --request`, no other flags), synthetic 2^22 (and with K24=1 2^24, the
#      default workload), each recorded and held against NVML by scripts/telemetry-truth.py;
#      `unattributed` as a share of idle time
# The recordings come back too (`provetop replay`, `provetop export --perfetto`).
#   scripts/build-carry.sh   # here, with an 8MiB request in .carry/req8.json (gen-vanilla)
#   OUT=$OUT scripts/h200-truth.sh        # on the device
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.carry/provetop}
OUT=${OUT:?OUT names the folder that comes back}
REQUEST=${REQUEST:-.carry/req8.json}
mkdir -p "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/provetop-cache} XDG_STATE_HOME=/tmp/truth-state
S="$OUT/summary.md"
say() { echo "$*" | tee -a "$S" >&2; }
say "# Device call $(date -u +%Y-%m-%dT%H:%M:%SZ), binary at $(cat "$(dirname "$BIN")/COMMIT" 2>/dev/null)"
say "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1); host: $(nproc) cores"
say "- $("$BIN" devices | grep kernels)"
if [ -z "${SKIP_CHECK:-}" ]; then
  start=$SECONDS
  timeout 300 "$BIN" check --max-log2 22 >"$OUT/check.txt" 2>&1
  say "== check: exit $? after $((SECONDS - start)) s; $(grep -c '^PASS' "$OUT/check.txt") PASS, $(grep -vc '^PASS' "$OUT/check.txt") other lines"
  grep -v '^PASS' "$OUT/check.txt" | tail -5 | tee -a "$S"
fi
run() { # name, limit, bench flags...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$BIN" bench --backend cuda --json --record "$OUT/$name.ptrec" "$@" \
    >"$OUT/$name.json" 2>"/tmp/$name.log"
  say "== $name: exit $? after $((SECONDS - start)) s"
  python3 scripts/telemetry-truth.py "$OUT/$name.json" 2>&1 | grep -v "^$" | tee -a "$S"
  python3 - "$OUT/$name.json" <<'PY' | tee -a "$S"
import json, sys
d = json.load(open(sys.argv[1]))
for dev in d.get("devices", []):
    g = dev.get("gaps", {}); idle = sum(g.values()); u = g.get("unattributed", 0.0)
    print(f"- {dev['id']}: unattributed {u * 1000:.2f} ms of {idle:.3f} s idle = {100 * u / max(idle, 1e-9):.2f} %; filecoin {d.get('filecoin')}")
PY
}
[ -s "$REQUEST" ] && run p8 200 --request "$REQUEST" --proofs "${PROOFS:-200}"
run k22 150 --log2-constraints 22 --proofs 60
[ -n "${K24:-}" ] && run k24 240 --proofs 48
