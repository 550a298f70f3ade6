#!/usr/bin/env bash
# One device call for every proof a Filecoin rig makes (issue 19), at 8MiB, tables last:
#   1. gen-vanilla seals an 8MiB test sector for miner f01000 and writes the request of each
#      kind: PoRep C2, a SnapDeals update, a WindowPoSt partition, a WinningPoSt (CRITICAL)
#   2. bench --request of each, no flags but --proofs: each kind's proof time and rate, every
#      proof accepted by filecoin-proofs' own verifier of the kind
#   3. serve, no flags: a lone WinningPoSt on the idle server, three times one after another
#      (its idle latency); then 8MiB PoReps through bench --request --server (16 outstanding)
#      and, after the 30th answer, CRITICAL=5 WinningPoSts one after another: their median
#      latency against the idle one's (the issue asks for at most twice), and their slowest
#   4. SIGTERM: the server drains and exits 0
#   5. bench --mix porep:8,window-post:1,winning-post:1: a mixed run's table per kind (Curio's
#      priorities: WindowPoSt high, WinningPoSt critical), with what the GPU waited for before
#      each kind's partitions
#
#   scripts/build-carry.sh   # here; then on the device:
#   OUT=$OUT scripts/h200-kinds.sh     # PROOFS=N (each kind's bench), MIX_PROOFS=N (the mix),
#                                      # SERVE_ONLY=1 (step 3 alone)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.carry/provetop}
OUT=${OUT:?OUT names the folder that comes back}
W=${WORK:-/tmp/kinds-work}
PROOFS=${PROOFS:-60}
LOAD_PROOFS=${LOAD_PROOFS:-200}
CRITICAL=${CRITICAL:-5}
MIX_PROOFS=${MIX_PROOFS:-100}
KINDS="porep snap window-post winning-post"
BENCH_KINDS=$KINDS
# SERVE_ONLY=1: step 3 alone (the WinningPoSt through serve, idle and under PoRep load)
if [ -n "${SERVE_ONLY:-}" ]; then KINDS="porep winning-post"; BENCH_KINDS=""; fi
export XDG_CACHE_HOME=/tmp/provetop-cache XDG_STATE_HOME="$W/state"
source scripts/device-call.sh

for kind in $KINDS; do
  step "gen-$kind" 400 "$BIN" gen-vanilla --kind "$kind" --sector-size 8MiB --miner-id 1000 \
    --sector-id 7 --out "$W/$kind.json" --force || { tail -5 "$W/gen-$kind.log" | tee -a "$S"; exit 1; }
done

for kind in $BENCH_KINDS; do
  step "bench-$kind" 500 "$BIN" bench --request "$W/$kind.json" --proofs "$PROOFS" --json
  cp "$W/bench-$kind.out" "$OUT/$kind.json"
done

# Recorded: where a WinningPoSt's time went under load (`provetop export --perfetto`).
"$BIN" serve --record "$OUT/serve.ptrec" --force >"$W/serve.out" 2>"$W/serve.log" &
SERVER=$!
for _ in $(seq 600); do grep -q "listening on" "$W/serve.log" && break; sleep 0.1; done
grep -h "listening" "$W/serve.log" | tee -a "$S"
step idle 200 "$BIN" bench --request "$W/winning-post.json" --server 127.0.0.1:9820 --proofs 3 \
  --concurrency 1 --json
# The WinningPoSt goes in once the pipeline is warm and full: after the 30th PoRep answer.
( for _ in $(seq 2400); do grep -q "proof 30/" "$W/load.log" 2>/dev/null && break; sleep 0.05; done
  "$BIN" bench --request "$W/winning-post.json" --server 127.0.0.1:9820 --proofs "$CRITICAL" \
    --concurrency 1 --json \
    >"$W/critical.out" 2>"$W/critical.log" ) &
CRIT=$!
step load 300 "$BIN" bench --request "$W/porep.json" --server 127.0.0.1:9820 --proofs "$LOAD_PROOFS" --json
wait $CRIT
kill -TERM $SERVER
wait $SERVER
say "== serve after SIGTERM: exit $?"
tail -3 "$W/serve.log" | cut -c1-300 | tee -a "$S"
cp "$W/idle.out" "$OUT/winning-idle.json"
cp "$W/critical.out" "$OUT/winning-loaded.json"
cp "$W/load.out" "$OUT/porep-load.json"

if [ -z "${SERVE_ONLY:-}" ]; then
  step mix 500 "$BIN" bench --mix porep:8,window-post:1,winning-post:1 --sector-size 8MiB \
    --proofs "$MIX_PROOFS" --json
  cp "$W/mix.out" "$OUT/mix.json"
fi

python3 - "$OUT" $BENCH_KINDS <<'EOF' | tee -a "$S"
import json, sys
out, kinds = sys.argv[1], sys.argv[2:]
def load(name):
    try:
        return json.load(open(f"{out}/{name}.json"))
    except (OSError, ValueError) as e:
        print(f"- {name}: no result ({e})")
        return None
med = lambda st, k: st[k]["median"] if k in st else float("nan")
print("\n### Each kind at 8MiB (bench --request, no flags)\n")
print("| kind | constraints | partitions | proofs | verified | filecoin-proofs | proofs/h | job latency s | device_wall s | synthesis s |")
print("|---|---|---|---|---|---|---|---|---|---|")
for k in kinds:
    v = load(k)
    if not v:
        continue
    w, s, f = v["workload"], v["summary"], v.get("filecoin", {})
    lat = s.get("kinds", {}).get(k, {}).get("latency", {})
    print(f"| {k} | {w['constraints']:,} | {w['partitions']} | {s['proofs']} | {s['verified']} | "
          f"{f.get('verifier')}: {f.get('verified')} accepted, {f.get('failed')} rejected | {s['proofs_per_hour']:,.0f} | "
          f"{lat.get('median', float('nan')):.3f} | {med(s['stages'], 'device_wall'):.3f} | {med(s['stages'], 'synthesis'):.3f} |")
idle, loaded, porep = load("winning-idle"), load("winning-loaded"), load("porep-load")
if idle and loaded:
    i, l = idle["median_total_ms"], loaded["median_total_ms"]
    verdict = "within" if l <= 2 * i else "NOT within"
    print(f"\n- WinningPoSt through serve: {i} ms idle (median of 3); {l} ms median of {loaded['proofs']} sent one "
          f"after another from the 30th of {porep['proofs'] if porep else '?'} 8MiB PoReps on ({l / max(i, 1):.2f}×, "
          f"{verdict} twice the idle latency; slowest {loaded.get('max_total_ms')} ms); "
          f"accepted by verify_winning_post: idle {idle['verified']}/{idle['proofs']}, loaded {loaded['verified']}/{loaded['proofs']}")
if porep:
    print(f"- the PoReps through serve meanwhile: {porep['proofs_per_hour']:,.0f}/h, {porep['verified']}/{porep['proofs']} accepted by verify_seal")
m = load("mix")
if m:
    s = m["summary"]
    print(f"\n### Mixed run: {m['workload']['label']} ({s['proofs']} partitions, {s['proofs_per_hour']:,.0f}/h, "
          f"filecoin-proofs {m['filecoin']['verified']} accepted, {m['filecoin']['failed']} rejected)\n")
    # What the GPU waited for before each kind's partitions (summary.kinds[].gaps).
    def waits(x):
        g = sorted(((s, c) for c, s in x.get("gaps", {}).items() if s >= 0.0005), reverse=True)
        return ", ".join(f"{c} {s:.2f}" for s, c in g[:2]) or "—"
    print("| kind | jobs | proofs | verified | proofs/h | latency median s | min s | max s | device_wall s | GPU waited before it s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k, x in s.get("kinds", {}).items():
        lat = x.get("latency") or {}
        print(f"| {k} | {x['jobs']} | {x['proofs']} | {x['verified']} | {x['proofs_per_hour']:,.0f} | "
              f"{lat.get('median', float('nan')):.3f} | {lat.get('min', float('nan')):.3f} | "
              f"{lat.get('max', float('nan')):.3f} | {med(x['stages'], 'device_wall'):.3f} | {waits(x)} |")
    for d in m.get("devices", []):
        print(f"\n- {d['id']} busy {d['busy_ratio']:.1%} (steady {d['steady_busy_ratio']:.1%})")
EOF
tar czf "$OUT/logs.tar.gz" -C "$W" --exclude='*.json' --exclude=state . 2>/dev/null
# A call brings back at most 8 files: the JSONs go back in one archive beside the summary.
(cd "$OUT" && tar czf results.tar.gz --remove-files ./*.json)
