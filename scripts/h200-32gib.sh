#!/usr/bin/env bash
# A production-size PoRep on one GPU in one device call (issue 41): gen-vanilla builds a sparse
# committed-capacity sector's C2 request of SIZE (32GiB; 64GiB), then `bench --request` proves it
# PROOFS times with FLAGS (none by default): its parameters are generated on the GPU into the
# device's cache first (marked generated; the disk holds one production set), and every proof is
# checked by filecoin-proofs' verify_seal against their verifying key. Beside it, once a second:
# NVML's memory used and utilisation, and the host's memory and CPU (vmstat), so the summary
# gives peaks as well as the bench's own table.
#
#   scripts/build-carry.sh                     # here; then on the device, carry [".carry"]:
#   OUT=$OUT scripts/h200-32gib.sh             # SIZE=64GiB PROOFS=3 FLAGS="--precompiled false"
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.carry/provetop}
OUT=${OUT:?OUT names the folder that comes back}
W=${WORK:-/tmp/p32-work}
SIZE=${SIZE:-32GiB}
PROOFS=${PROOFS:-1}
FLAGS=${FLAGS:-}
LIMIT=${LIMIT:-540}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/provetop-cache} XDG_STATE_HOME="$W/state"
source scripts/device-call.sh
say "- cached before this call: $(du -sh "$XDG_CACHE_HOME" 2>/dev/null | cut -f1) in $XDG_CACHE_HOME"
say "- size $SIZE, $PROOFS proof(s), flags: ${FLAGS:-none}; host memory $(free -g | awk '/Mem/ {print $2}') GiB, disk free $(df -h /tmp | awk 'NR==2 {print $4}')"

stamp() { while IFS= read -r l; do printf '%(%T)T %s\n' -1 "$l"; done; }

step gen 200 python3 scripts/peak-rss.py "$BIN" gen-vanilla --kind porep --sector-size "$SIZE" \
  --miner-id 1000 --sector-id 7 --out "$W/porep.json" --force
tail -3 "$W/gen.log" | tee -a "$S"

nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader,nounits -l 1 \
  >"$W/nvml.csv" 2>/dev/null &
NVML=$!
vmstat -n 1 >"$W/vmstat.txt" 2>/dev/null &
VMSTAT=$!
start=$SECONDS
# shellcheck disable=SC2086
timeout "$LIMIT" python3 scripts/peak-rss.py "$BIN" bench --backend cuda --request "$W/porep.json" \
  --proofs "$PROOFS" --json $FLAGS >"$W/bench.json" 2> >(stamp >"$W/bench.log")
rc=$?
sleep 1
kill "$NVML" "$VMSTAT" 2>/dev/null
say "== bench: exit $rc after $((SECONDS - start)) s"
grep -E "peak_rss_bytes|parameters|recorded|recording|error|Error|refused" "$W/bench.log" | tail -12 | tee -a "$S"
say "- peak VRAM (NVML): $(awk -F', ' '$2 > m {m = $2} END {print m}' "$W/nvml.csv") MiB; GPU utilisation mean $(awk -F', ' '{s += $3; n++} END {if (n) printf "%.0f", s / n}' "$W/nvml.csv") %"
say "- host: least free memory $(awk 'NR > 2 && ($4 < m || m == "") {m = $4} END {print int(m / 1048576)}' "$W/vmstat.txt") GiB; mean CPU busy $(awk 'NR > 2 {s += 100 - $15; n++} END {if (n) printf "%.0f", s / n}' "$W/vmstat.txt") %"
if [ -s "$W/bench.json" ]; then
  cp "$W/bench.json" "$OUT/bench.json"
  python3 scripts/bench-table.py "$W/bench.json" | tee -a "$S" >&2
fi
tail -40 "$W/bench.log" >"$OUT/bench-tail.log"
tar czf "$OUT/logs.tar.gz" -C "$W" --exclude='*.json' . 2>/dev/null
cat "$S"
