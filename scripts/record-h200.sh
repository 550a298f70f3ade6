#!/usr/bin/env bash
# A real recording from a GPU rig, for examples/: a few minutes of synthetic proofs on the cuda
# backend with a lock-strategy change in the middle, recorded with --record. Prints the file's
# size per minute (the target is at most 2 MB a minute of a busy one-GPU rig), how long it takes
# to open, and its `replay --summary`; checks that the replay matches what the live run
# reported (proofs, busy fraction, config changes).
#
#   scripts/record-h200.sh                 # 240 s at 2^22, single -> two-lock at the middle
#   SECONDS_=300 LOG2=22 FROM=single TO=two-lock scripts/record-h200.sh
#   BIN=path/to/provetop scripts/record-h200.sh   # default: .carry/provetop, else a release build
#
# Writes under $OUT (default target/record-h200): the recording, bench JSON, replay summary.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS="${SECONDS_:-240}"
LOG2="${LOG2:-22}"
FROM="${FROM:-single}"
TO="${TO:-two-lock}"
CONCURRENCY="${CONCURRENCY:-2}"
OUT="${OUT:-${CARGO_TARGET_DIR:-target}/record-h200}"
mkdir -p "$OUT"
# Parameters are cached beside the results, so the calibration run pays for them once.
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$OUT/cache}"

if [ -z "${BIN:-}" ]; then
  if [ -x .carry/provetop ]; then
    BIN=.carry/provetop
  else
    source scripts/env-nvcc.sh
    echo "== building the release binary" >&2
    cargo build --release --quiet 2>&1 | grep -v "^warning: provetop@" >&2 || true
    BIN="${CARGO_TARGET_DIR:-target}/release/provetop"
  fi
fi

"$BIN" devices >"$OUT/devices.txt" 2>&1 || true
if ! grep -Eq "^auto: +cuda" "$OUT/devices.txt"; then
  echo "the cuda backend is not usable here:" >&2
  cat "$OUT/devices.txt" >&2
  exit 2
fi

echo "== calibration: 6 proofs at 2^$LOG2 (and parameters, once)" >&2
"$BIN" bench --backend cuda --log2-constraints "$LOG2" --proofs 6 --concurrency "$CONCURRENCY" \
  --lock "$FROM" --json >"$OUT/calibration.json" 2>"$OUT/calibration.stderr"
PROOFS=$(python3 -c "
import json, sys
v = json.load(open('$OUT/calibration.json'))
rate = v['summary']['proofs_per_hour']
print(max(20, int(rate * $SECS / 3600)))
")
HALF=$((SECS / 2))
FILE="$OUT/h200-k$LOG2-$FROM-to-$TO.ptrec"
echo "== recording: $PROOFS proofs (about ${SECS}s), lock $FROM -> $TO at ${HALF}s, to $FILE" >&2
"$BIN" bench --backend cuda --log2-constraints "$LOG2" --proofs "$PROOFS" \
  --concurrency "$CONCURRENCY" --lock "$FROM" --at "${HALF}s:lock=$TO" \
  --record "$FILE" --json >"$OUT/live.json" 2>"$OUT/live.stderr"
tail -2 "$OUT/live.stderr" >&2

start=$(date +%s.%N)
"$BIN" replay "$FILE" --summary --json >"$OUT/replay.json"
end=$(date +%s.%N)
"$BIN" replay "$FILE" --summary | tee "$OUT/replay.txt"
"$BIN" export "$FILE" --perfetto "$OUT/trace.json"

python3 - "$OUT/live.json" "$OUT/replay.json" "$FILE" "$start" "$end" <<'PY'
import json, os, sys
live, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
size = os.path.getsize(sys.argv[3])
secs = rep["recording"]["seconds"]
per_min = size / (secs / 60) if secs > 0 else float("nan")
print()
print(f"file: {sys.argv[3]}")
print(f"size: {size} bytes over {secs:.1f} s of session: {per_min / 1e6:.3f} MB a minute (target <= 2 MB)")
print(f"records: {rep['recording']['records']} in {rep['recording']['frames']} frames; "
      f"not recorded: {rep['recording']['not_recorded']}")
print(f"full read for the summary: {float(sys.argv[5]) - float(sys.argv[4]):.2f} s")
ok = True
def same(name, a, b):
    global ok
    good = a == b
    ok &= good
    print(f"{'ok' if good else 'MISMATCH'}: {name}: live {a} replay {b}")
same("proofs", live["summary"]["proofs"], rep["summary"]["proofs"])
same("config changes", [(c["key"], c["from"], c["to"]) for c in live["config_events"]],
     [(c["key"], c["from"], c["to"]) for c in rep["config_events"]])
for a, b in zip(live.get("devices", []), rep["devices"]):
    same(f"{a['id']} busy", round(a["busy_ratio"], 6), round(b["busy_ratio"], 6))
print(f"{'ok' if per_min <= 2e6 else 'OVER'}: size per minute")
print()
print("to ship it: cp", sys.argv[3], "examples/  (and name it in docs/dashboard.md)")
sys.exit(0 if ok and per_min <= 2e6 else 1)
PY
