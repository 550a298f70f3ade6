#!/usr/bin/env bash
# Production-size proofs on one GPU in one device call (issue 41): for each of KINDS (porep;
# also snap, window-post, winning-post) gen-vanilla builds a sparse sector's request of SIZE
# (32GiB; 64GiB), then `bench --request` proves it PROOFS times with FLAGS (none by default): its
# parameters are generated on the GPU into the device's cache first (marked generated; a kind's
# are removed before the next kind's, the disk holds one production set), and every proof is checked by
# filecoin-proofs against their verifying key. Beside it, once a second:
# NVML's memory used and utilisation, and the host's memory and CPU (vmstat), so the summary
# gives peaks as well as the bench's own table.
#
#   scripts/build-carry.sh                     # here; then on the device, carry [".carry"]:
#   OUT=$OUT scripts/h200-32gib.sh             # SIZE=64GiB PROOFS=3 KINDS="porep snap"
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.carry/provetop}
OUT=${OUT:?OUT names the folder that comes back}
W=${WORK:-/tmp/p32-work}
SIZE=${SIZE:-32GiB}
PROOFS=${PROOFS:-1}
KINDS=${KINDS:-porep}
FLAGS=${FLAGS:-}
LIMIT=${LIMIT:-540}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/provetop-cache} XDG_STATE_HOME="$W/state"
source scripts/device-call.sh
say "- cached before this call: $(du -sh "$XDG_CACHE_HOME" 2>/dev/null | cut -f1) in $XDG_CACHE_HOME"
say "- size $SIZE, kinds $KINDS, $PROOFS proof(s) each, flags: ${FLAGS:-none}; host memory $(free -g | awk '/Mem/ {print $2}') GiB, disk free $(df -h /tmp | awk 'NR==2 {print $4}')"

stamp() { while IFS= read -r l; do printf '%(%T)T %s\n' -1 "$l"; done; }

stamp() { while IFS= read -r l; do printf '%(%T)T %s\n' -1 "$l"; done; }

prove() { # kind: its request, then PROOFS proofs of it, with NVML and vmstat beside
  local kind=$1 K="$W/$1"
  mkdir -p "$K"
  say "## $kind"
  step "$kind-gen" 200 python3 scripts/peak-rss.py "$BIN" gen-vanilla --kind "$kind" \
    --sector-size "$SIZE" --miner-id 1000 --sector-id 7 --out "$K/request.json" --force
  tail -2 "$W/$kind-gen.log" | tee -a "$S"
  nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader,nounits \
    -l 1 >"$K/nvml.csv" 2>/dev/null &
  local nvml=$!
  vmstat -n 1 >"$K/vmstat.txt" 2>/dev/null &
  local vm=$! start=$SECONDS
  # shellcheck disable=SC2086
  timeout "$LIMIT" python3 scripts/peak-rss.py "$BIN" bench --backend cuda --request \
    "$K/request.json" --proofs "$PROOFS" --json $FLAGS >"$K/bench.json" 2> >(stamp >"$K/bench.log")
  local rc=$?
  sleep 1
  kill "$nvml" "$vm" 2>/dev/null
  say "== $kind bench: exit $rc after $((SECONDS - start)) s"
  grep -E "peak_rss_bytes|ready in|recorded|error|Error|refused" "$K/bench.log" | tail -8 | tee -a "$S"
  say "- peak VRAM (NVML): $(awk -F', ' '$2 > m {m = $2} END {print m}' "$K/nvml.csv") MiB; GPU utilisation mean $(awk -F', ' '{s += $3; n++} END {if (n) printf "%.0f", s / n}' "$K/nvml.csv") %"
  say "- host: least free memory $(awk 'NR > 2 && ($4 < m || m == "") {m = $4} END {print int(m / 1048576)}' "$K/vmstat.txt") GiB; mean CPU busy $(awk 'NR > 2 {s += 100 - $15; n++} END {if (n) printf "%.0f", s / n}' "$K/vmstat.txt") %"
  if [ -s "$K/bench.json" ]; then
    cp "$K/bench.json" "$OUT/$kind-bench.json"
    python3 scripts/bench-table.py "$K/bench.json" | tee -a "$S" >&2
  fi
  tail -40 "$K/bench.log" >"$OUT/$kind-bench-tail.log"
  rm -f "$K/request.json"
}

prev=
for kind in $KINDS; do
  # The disk holds one production set: the last kind's stay for a next call on a warm machine.
  [ -n "$prev" ] && rm -rf "$XDG_CACHE_HOME/provetop/params"
  prove "$kind"
  prev=$kind
done
tar czf "$OUT/logs.tar.gz" -C "$W" --exclude='*.json' . 2>/dev/null
cat "$S"
