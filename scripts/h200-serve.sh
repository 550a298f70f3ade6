#!/usr/bin/env bash
# One device call for `provetop serve` (issue 18) and the defaults (issue 17), tables last:
#   1. synthetic 2^24, no flags but --proofs 48 (`precompiled = auto` takes the matrices on the GPU)
#   2. gen-vanilla seals an 8MiB test sector for miner f01000 and writes its request
#   3. bench --request of it, no flags but --proofs: proofs per hour with an engine here
#   4. serve, no flags; bench --request --server sends the same request --proofs times (16
#      outstanding), every answer checked with verify_seal: proofs per hour through the API;
#      after the 30th answer, one CRITICAL copy of the request: its latency beside a lone
#      request's (step 5)
#   5. a lone NORMAL request on the idle server: the idle latency
#   6. SIGTERM: the server drains and exits 0
#   7. telemetry truth (issue 20): the engine's busy-or-copying fraction against NVML's
#      utilisation over the runs of 1 and 3 and a 2^22 run (scripts/telemetry-truth.py)
#
#   scripts/build-carry.sh   # here; then on the device:
#   OUT=$OUT scripts/h200-serve.sh     # K24_HAND=1: also scripts/sweeps/k24-defaults-hand.txt
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.carry/provetop}
OUT=${OUT:?OUT names the folder that comes back}
W=${WORK:-/tmp/serve-work}
PROOFS=${PROOFS:-200}
export XDG_CACHE_HOME=/tmp/provetop-cache XDG_STATE_HOME="$W/state"
source scripts/device-call.sh

truth="bench"
if [ -z "${SERVE_ONLY:-}" ]; then # SERVE_ONLY=1: steps 2 to 6 alone
  step k24 240 "$BIN" bench --proofs 48 --json
  step k22 120 "$BIN" bench --log2-constraints 22 --proofs 60 --json
  grep -h "precompiled = auto" "$W/k24.log" | head -1 | cut -c1-200 | tee -a "$S"
  cp "$W/k24.out" "$OUT/k24.json"
  truth="k22 k24 bench"
fi
if [ -n "${K24_HAND:-}" ]; then # issue 24: no flags against the hand configurations, one call
  OUT="$W/k24-hand" SWEEP_FLAGS="--log2-constraints 24" scripts/h200-sweep.sh "$BIN" \
    scripts/sweeps/k24-defaults-hand.txt 2>&1 | tee -a "$S"
  python3 - "$W/k24-hand" <<'EOF' | tee -a "$S"
import json, sys
pph = {n: json.load(open(f"{sys.argv[1]}/{n}.json"))["summary"]["proofs_per_hour"] for n in ("defaults", "hand", "tuned")}
best = max(("hand", "tuned"), key=pph.get)
print(f"- 2^24 no flags: {pph['defaults']:,.0f}/h = {pph['defaults'] / pph[best]:.1%} of the best hand row ({best}, {pph[best]:,.0f}/h)")
EOF
fi

step gen 400 "$BIN" gen-vanilla --kind porep --sector-size 8MiB --miner-id 1000 --sector-id 7 --out "$W/req8.json" || {
  tail -5 "$W/gen.log" | tee -a "$S"; exit 1; }
gzip -c "$W/req8.json" >"$OUT/req8.json.gz" # for the next call's tune (scripts/h200-tune.sh)
python3 - "$W/req8.json" "$W/req8-critical.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); r["priority"] = "CRITICAL"; r["requestId"] = "critical"
json.dump(r, open(sys.argv[2], "w"))
EOF

step bench 400 "$BIN" bench --request "$W/req8.json" --proofs "$PROOFS" --json
cp "$W/bench.out" "$OUT/p8-bench.json"
python3 scripts/bench-table.py "$OUT"/k24.json "$OUT/p8-bench.json" 2>/dev/null | tee -a "$S"
python3 -c "import json,sys; print('filecoin:', json.load(open(sys.argv[1])).get('filecoin'))" "$OUT/p8-bench.json" | tee -a "$S"

"$BIN" serve >"$W/serve.out" 2>"$W/serve.log" &
SERVER=$!
for _ in $(seq 600); do grep -q "listening on" "$W/serve.log" && break; sleep 0.1; done
grep -h "listening" "$W/serve.log" | tee -a "$S"
# The CRITICAL request goes in once the pipeline is warm and full: after the 30th answer (sent
# at 5 s, it met the parameters' load and the first uploads, and measured those).
( for _ in $(seq 2400); do grep -q "proof 30/" "$W/remote.log" 2>/dev/null && break; sleep 0.05; done
  "$BIN" bench --request "$W/req8-critical.json" --server 127.0.0.1:9820 --proofs 1 --json \
    >"$W/critical.out" 2>"$W/critical.log" ) &
CRIT=$!
step remote 240 "$BIN" bench --request "$W/req8.json" --server 127.0.0.1:9820 --proofs "$PROOFS" --json
wait $CRIT
cat "$W/remote.out" | tee -a "$S"
echo "critical under load: $(cat "$W/critical.out")" | tee -a "$S"
step idle 120 "$BIN" bench --request "$W/req8.json" --server 127.0.0.1:9820 --proofs 1 --json
echo "lone request: $(cat "$W/idle.out")" | tee -a "$S"
kill -TERM $SERVER
wait $SERVER
say "== serve after SIGTERM: exit $?"
tail -3 "$W/serve.log" | cut -c1-300 | tee -a "$S"

python3 - "$W/bench.out" "$W/remote.out" <<'EOF' | tee -a "$S"
import json, sys
b = json.loads(open(sys.argv[1]).read()); r = json.loads(open(sys.argv[2]).read())
bp = b["summary"]["proofs_per_hour"]; rp = r["proofs_per_hour"]
print(f"| 8MiB | bench --request | {bp:,.0f} |\n| 8MiB | serve, through the API | {rp:,.0f} ({rp / bp:.1%} of bench) |")
EOF
for r in $truth; do
  say "### truth: $r"
  python3 scripts/telemetry-truth.py "$W/$r.out" 2>&1 | grep -v "^$" | tee -a "$S"
done
tar czf "$OUT/logs.tar.gz" -C "$W" --exclude='req8*.json' --exclude=state . 2>/dev/null
