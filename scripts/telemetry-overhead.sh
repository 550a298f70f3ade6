#!/usr/bin/env bash
# What telemetry costs: `provetop bench` runs with telemetry on and off, interleaved, many of
# each, on one workload. Two identical configurations of each kind (on-a/on-b, off-a/off-b)
# run in the same rounds, so the spread between identical runs (the noise floor) is reported
# beside the on/off ratio. Each round runs the four in a rotated order, so drift in the
# machine's load (it may be shared) falls on every configuration alike.
#
#   scripts/telemetry-overhead.sh                      # cpu backend, synthetic 2^16
#   ROUNDS=12 PROOFS=6 scripts/telemetry-overhead.sh
#   BACKEND=cuda LOG2=24 PROOFS=8 scripts/telemetry-overhead.sh   # on a GPU machine
#   BIN=path/to/provetop PARAMS_CACHE=dir scripts/telemetry-overhead.sh  # a binary built elsewhere
#
# Prints a markdown report on stdout (progress on stderr); raw runs go to $OUT/runs.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${ROUNDS:-10}"
PROOFS="${PROOFS:-4}"
LOG2="${LOG2:-16}"
BACKEND="${BACKEND:-cpu}"
CONCURRENCY="${CONCURRENCY:-2}"
OUT="${OUT:-${CARGO_TARGET_DIR:-target}/telemetry-overhead}"
PARAMS="${PARAMS_CACHE:-${CARGO_TARGET_DIR:-target}/telemetry-overhead-params}"
EXTRA=(${EXTRA_ARGS:-})

mkdir -p "$OUT" "$PARAMS"
if [ -z "${BIN:-}" ]; then
  echo "== building the release binary" >&2
  cargo build --release --quiet 2>&1 | grep -v "^warning: provetop@" >&2 || true
  # A copy: a build in the same target directory during the runs must not swap the binary.
  cp "${CARGO_TARGET_DIR:-target}/release/provetop" "$OUT/provetop"
  BIN="$OUT/provetop"
fi

bench() { # telemetry on|off, output file
  "$BIN" bench --backend "$BACKEND" --workload synthetic --log2-constraints "$LOG2" \
    --proofs "$PROOFS" --concurrency "$CONCURRENCY" --params-cache "$PARAMS" \
    --telemetry "$1" --json "${EXTRA[@]}" >"$2" 2>>"$OUT/stderr.log"
}

echo "== parameters and a warm-up run" >&2
bench on "$OUT/warmup.json"

CONFIGS=(on-a off-a on-b off-b)
printf 'round\tconfig\tproofs_per_hour\twall_seconds\tverified\ttelemetry_cpu_ratio\n' >"$OUT/runs.tsv"
for ((r = 0; r < ROUNDS; r++)); do
  for ((i = 0; i < 4; i++)); do
    c="${CONFIGS[$(((r + i) % 4))]}"
    f="$OUT/run-$r-$c.json"
    bench "${c%-*}" "$f"
    python3 - "$f" "$r" "$c" >>"$OUT/runs.tsv" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
s = v["summary"]
cpu = v.get("telemetry", {}).get("cpu_ratio")
cpu = "-" if cpu is None else f"{cpu:.6f}"
print(f'{sys.argv[2]}\t{sys.argv[3]}\t{s["proofs_per_hour"]:.3f}\t{s["wall_seconds"]:.4f}\t{s["verified"]}/{s["proofs"]}\t{cpu}')
EOF
    echo "round $((r + 1))/$ROUNDS $c: $(tail -1 "$OUT/runs.tsv" | cut -f3) proofs/hour" >&2
  done
done

python3 - "$OUT/runs.tsv" "$ROUNDS" "$PROOFS" "$LOG2" "$BACKEND" "$CONCURRENCY" <<'EOF'
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
rounds, proofs, log2, backend, conc = sys.argv[2:7]
by = {}
cpu = []
for r, c, pph, wall, ver, tcpu in rows:
    by.setdefault(c, {})[int(r)] = float(pph)
    if tcpu != "-":
        cpu.append(float(tcpu))
    assert ver.split("/")[0] == ver.split("/")[1], f"a proof failed: {r} {c}"
def med(c): return st.median(by[c].values())
def paired(a, b):
    """Per-round ratios a/b: their median and the spread between the quartiles."""
    v = sorted(by[a][r] / by[b][r] for r in by[a] if r in by[b])
    q = st.quantiles(v, n=4) if len(v) >= 2 else [v[0]] * 3
    return st.median(v), q[0], q[2]
on = list(by["on-a"].values()) + list(by["on-b"].values())
off = list(by["off-a"].values()) + list(by["off-b"].values())
ratio = st.median(on) / st.median(off)
print(f"Workload: synthetic 2^{log2}, {proofs} proofs per run, concurrency {conc}, {backend} backend; "
      f"{rounds} rounds of 4 runs (on-a, off-a, on-b, off-b in rotated order).\n")
print("| configuration | runs | median proofs/hour | min | max |")
print("|---|---|---|---|---|")
for c in ["on-a", "on-b", "off-a", "off-b"]:
    v = list(by[c].values())
    print(f"| telemetry {c} | {len(v)} | {st.median(v):.1f} | {min(v):.1f} | {max(v):.1f} |")
print()
print("| comparison | ratio of medians | per-round ratio: median | quartiles |")
print("|---|---|---|---|")
for name, a, b in [("on / off (a)", "on-a", "off-a"), ("on / off (b)", "on-b", "off-b"),
                   ("on-a / on-b (noise floor)", "on-a", "on-b"), ("off-a / off-b (noise floor)", "off-a", "off-b")]:
    m, q1, q3 = paired(a, b)
    print(f"| {name} | {med(a) / med(b):.4f} | {m:.4f} | {q1:.4f} – {q3:.4f} |")
print(f"\n**Telemetry on / off, all runs: {ratio:.4f}** (median throughput with telemetry over median without; "
      f"cost {100 * (1 - ratio):+.2f} %). Noise floor between identical configurations: "
      f"{100 * abs(1 - med('on-a') / med('on-b')):.2f} % (on) and {100 * abs(1 - med('off-a') / med('off-b')):.2f} % (off) "
      f"by the ratio of medians; per-round ratios between identical runs spread as the quartiles above show.")
if cpu:
    print(f"\nTelemetry's own threads (samplers, exporter) used a median {100 * st.median(cpu):.3f} % "
          f"(max {100 * max(cpu):.3f} %) of the machine's cores over a run's wall time "
          f"(`telemetry.cpu_ratio` of bench --json): the part of the cost that does not depend on the noise.")
EOF
