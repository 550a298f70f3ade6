#!/usr/bin/env bash
# Issue 20's tune check on one workload, one device call, table last in $OUT/summary.md:
#   1. the sweep file (old defaults, each knob changed alone from them, today's defaults, the
#      best hand configuration), through scripts/h200-sweep.sh
#   2. provetop tune from the old defaults (scripts/sweeps/old-defaults.toml, one job in
#      flight) within $BUDGET (default 5m)
#   3. bench of tune's best configuration, as the sweep's rows were measured
#   4. the table: tune's best against the sweep's best; the advisor's first recommendation on
#      the old defaults against the knob with the largest measured gain
#
#   scripts/build-carry.sh   # here; then on the device:
#   WORKLOAD=k24 OUT=$OUT scripts/h200-tune.sh
#   WORKLOAD=p8 [REQUEST=.carry/req8.json] OUT=$OUT scripts/h200-tune.sh   # else gen-vanilla
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.carry/provetop}
OUT=${OUT:?OUT names the folder that comes back}
WORKLOAD=${WORKLOAD:-k24}
case $WORKLOAD in
  k24) WFLAGS="--log2-constraints 24" ;;
  p8) WFLAGS="--request ${REQUEST:=/tmp/tune-work/req8.json}" ;;
  *) echo "WORKLOAD is k24 or p8" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/provetop-cache} XDG_STATE_HOME=${XDG_STATE_HOME:-/tmp/tune-state}
S="$OUT/summary.md"
: >"$S"
say() { echo "$*" | tee -a "$S" >&2; }
say "# Device call $(date -u +%Y-%m-%dT%H:%M:%SZ), $WORKLOAD, binary at $(cat "$(dirname "$BIN")/COMMIT" 2>/dev/null)"
say "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1); host: $(nproc) cores"

if [ "$WORKLOAD" = p8 ] && [ ! -s "$REQUEST" ]; then # no request carried: seal one here (~60 s)
  mkdir -p "$(dirname "$REQUEST")"
  "$BIN" gen-vanilla --kind porep --sector-size 8MiB --miner-id 1000 --sector-id 7 \
    --out "$REQUEST" 2>"$OUT/gen.log" || { tail -5 "$OUT/gen.log" | tee -a "$S"; exit 1; }
  say "- request: $REQUEST written by gen-vanilla"
fi

start=$SECONDS
# The sweep's files stay in $W (a call brings back at most 8 files): logs.tar.gz holds them.
W=${WORK:-/tmp/tune-work}
mkdir -p "$W"
if [ -z "${SKIP_SWEEP:-}" ]; then # SKIP_SWEEP=1: tune alone, against an earlier call's sweep
  OUT="$W/sweep" SWEEP_FLAGS="$WFLAGS" scripts/h200-sweep.sh "$BIN" "scripts/sweeps/tune-$WORKLOAD.txt" \
    2>&1 | tee -a "$S"
  say "== sweep: $((SECONDS - start)) s"
fi
mkdir -p "$W/sweep"

start=$SECONDS
# shellcheck disable=SC2086
timeout 420 "$BIN" tune $WFLAGS --config scripts/sweeps/old-defaults.toml --concurrency 1 \
  --budget "${BUDGET:-5m}" --json >"$OUT/tune.json" 2>"$OUT/tune.log"
say "== tune: exit $? after $((SECONDS - start)) s"
tail -4 "$OUT/tune.log" | cut -c1-300 | tee -a "$S"

# tune's best as flags: the [engine] fields that differ from the defaults, and the jobs in flight
best=$(python3 - "$OUT/tune.json" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["best"]
flags = [f"--{k.replace('_', '-')} {v}" for k, v in sorted(b["engine"].items())]
if b.get("concurrency"):
    flags.append(f"--concurrency {b['concurrency']}")
print(" ".join(flags))
EOF
)
say "- tune's best: ${best:-the defaults}"
proofs=$(grep -E "^defaults " "scripts/sweeps/tune-$WORKLOAD.txt" | grep -oE -- "--proofs [0-9]+")
start=$SECONDS
[ -n "${SKIP_BENCH:-}" ] || # SKIP_BENCH=1: tune's own window stands for its best
# shellcheck disable=SC2086
timeout 200 "$BIN" bench --backend cuda --json $WFLAGS $best $proofs >"$OUT/tuned.json" 2>"$OUT/tuned.log"
say "== bench of tune's best: exit $? after $((SECONDS - start)) s"

python3 - "$OUT" "$W/sweep" <<'EOF' | tee -a "$S"
import json, os, sys
out = sys.argv[1]
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
rows = {}
sweep = sys.argv[2]
for f in sorted(os.listdir(sweep)):
    if f.endswith(".json") and (d := load(f"{sweep}/{f}")):
        rows[f[:-5]] = d
tuned = load(f"{out}/tuned.json")
tune = load(f"{out}/tune.json")
print("\n| run | verified | proofs/h | steady proofs/h | GPU busy |")
print("|---|---|---|---|---|")
def line(name, d):
    s = d["summary"]
    busy = ", ".join(f"{x['busy_ratio'] * 100:.1f} %" for x in d.get("devices", []) if "busy_ratio" in x)
    print(f"| {name} | {s['verified']}/{s['proofs']} | {s['proofs_per_hour']:,.0f} | {s.get('steady_proofs_per_hour') or 0:,.0f} | {busy} |")
for k, d in rows.items():
    line(k, d)
if tuned:
    line("tune's best", tuned)
pph = lambda d: d["summary"]["proofs_per_hour"]
best_name = max(rows, key=lambda k: pph(rows[k])) if rows else None
if best_name and tuned:
    print(f"\n- tune's best against the sweep's best ({best_name}): {pph(tuned) / pph(rows[best_name]):.1%}")
if tune:
    b = tune["best"]
    print(f"- tune: {len(tune['steps'])} steps, best window {b['proofs_per_hour'] or 0:,.0f}/h (ratio {b['ratio']}), "
          f"proofs {tune['proofs']}, ended {tune['ended']}")
old = rows.get("old")
if old:
    first = (old.get("advice") or [None])[0]
    print(f"- advisor on the old defaults: {old.get('bottleneck')}")
    print(f"- its first recommendation: {first and (first['knob'], first['from'], first['to'], first['expected_gain'])}")
    single = {k: pph(d) / pph(old) for k, d in rows.items() if k.startswith("old-")}
    for k, g in sorted(single.items(), key=lambda kv: -kv[1]):
        print(f"  - {k}: measured ×{g:.2f}")
EOF
tar czf "$OUT/logs.tar.gz" -C "$W" sweep 2>/dev/null
