#!/usr/bin/env bash
# Tests too slow for CI on two cores: hostile input (peak memory over the hostile corpus and
# the SIGKILL loss of a recording, scripts/hostile-bench.sh; each fuzz target for
# $FUZZ_SECONDS, default 120, when cargo-fuzz and nightly are there), then Filecoin's proofs
# at 8MiB.
#   1. `bench --workload porep --sector-size 8MiB`: filecoin-proofs seals a test sector here
#      (pre-commit 1 and 2, then seal_commit_phase1 writes the C1 output), the engine proves
#      its partitions, our verifier and filecoin-proofs' verify_seal check every proof;
#   2. the same C1 output as a plain file in filecoin-proofs-api's JSON layout (as Lotus writes
#      it), given with --c1, --prover-id and --sector-id: proved and verified the same way;
#   3. the other kinds from the same sector: a SnapDeals update (4 partitions), a WindowPoSt
#      partition and a WinningPoSt, each accepted by filecoin-proofs' own verifier of the kind;
#      then `--mix porep:2,window-post:1,winning-post:1` over them.
# Prints a table for bench/results/ last; logs and JSON under $OUT (default target/slow-tests).
#   scripts/slow-tests.sh [path/to/provetop]      (default: a release build)
#   SECTIONS="porep kinds" scripts/slow-tests.sh   (a subset of: hostile attach fuzz porep kinds
#   metrics; attach: `attach --summary` peak RSS against 550 MB of history, scripts/attach-memory.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${CARGO_TARGET_DIR:-target}/slow-tests}
mkdir -p "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$OUT/cache}
BIN=${1:-}
if [[ -z $BIN ]]; then
    echo "== building the release binary" >&2
    cargo build --release --bin provetop 2>&1 | grep -v '^warning: provetop@' | tail -1 >&2
    BIN=${CARGO_TARGET_DIR:-target}/release/provetop
fi
SIZE=${SIZE:-8MiB}
# Whether section $1 runs: every one unless $SECTIONS names some.
want() { [[ -z ${SECTIONS:-} || " $SECTIONS " == *" $1 "* ]]; }

if want hostile; then
echo "== hostile input: peak RSS over the corpus, SIGKILL loss (scripts/hostile-bench.sh)" >&2
OUT="$OUT/hostile" scripts/hostile-bench.sh "$BIN" | tee "$OUT/hostile.txt"
fi

if want attach; then
echo "== attach --summary against 550 MB of history: peak RSS (scripts/attach-memory.sh)" >&2
OUT="$OUT/attach" scripts/attach-memory.sh "$BIN" | tee "$OUT/attach.txt"
fi

if ! want fuzz; then
    :
elif cargo +nightly fuzz --version >/dev/null 2>&1; then
    # fuzz/ is its own workspace with no lock file of its own in git: the repository's pins
    # the same versions of the crates they share.
    [[ -f fuzz/Cargo.lock ]] || cp Cargo.lock fuzz/Cargo.lock
    cargo run -q --manifest-path fuzz/Cargo.toml --bin seeds -- fuzz/corpus
    for t in decode params c1 config request_json request_proto; do
        echo "== fuzz $t for ${FUZZ_SECONDS:-120} s" >&2
        # New finds go to fuzz/corpus/$t; fuzz/regressions/$t (committed, where there is one) is
        # read too.
        regress=(); [[ -d "fuzz/regressions/$t" ]] && regress=("fuzz/regressions/$t")
        cargo +nightly fuzz run "$t" "fuzz/corpus/$t" "${regress[@]}" -- -max_total_time="${FUZZ_SECONDS:-120}" \
            -rss_limit_mb=1024 >"$OUT/fuzz-$t.log" 2>&1 || { tail -30 "$OUT/fuzz-$t.log" >&2; exit 1; }
        # libFuzzer's last line: executions, coverage and corpus entries.
        grep -E '^#[0-9]+[[:space:]]+DONE' "$OUT/fuzz-$t.log" | tail -1 >&2 || true
    done
else
    echo "== fuzzing skipped: cargo-fuzz or the nightly toolchain is not installed" \
        "(cargo install cargo-fuzz; rustup toolchain install nightly)" >&2
fi

if want porep; then
echo "== $SIZE: seal here, prove, verify (ours and filecoin-proofs')" >&2
start=$(date +%s)
"$BIN" bench --backend cpu --workload porep --sector-size "$SIZE" --proofs 1 --json \
    >"$OUT/sealed.json" 2>"$OUT/sealed.log" || { tail -20 "$OUT/sealed.log" >&2; exit 1; }
echo "   $(( $(date +%s) - start )) s" >&2

C1="$XDG_CACHE_HOME/provetop/porep/sealed/$SIZE-seed0.c1.json"
# The plain api layout, as Lotus writes it: the wrapper's Phase1Out, decoded; the ids apart.
read -r PROVER SECTOR < <(python3 - "$C1" "$OUT/c1-api.json" <<'PY'
import base64, json, sys
w = json.load(open(sys.argv[1]))
open(sys.argv[2], "wb").write(base64.b64decode(w["Phase1Out"]))
print(w["ProverId"], w["SectorNum"])
PY
)
echo "== $SIZE: prove from --c1 $OUT/c1-api.json" >&2
start=$(date +%s)
"$BIN" bench --backend cpu --workload porep --c1 "$OUT/c1-api.json" --prover-id "$PROVER" \
    --sector-id "$SECTOR" --proofs 1 --seed 1 --json >"$OUT/c1.json" 2>"$OUT/c1.log" ||
    { tail -20 "$OUT/c1.log" >&2; exit 1; }
echo "   $(( $(date +%s) - start )) s" >&2
fi

runs=()
want porep && runs+=("sealed here=$OUT/sealed.json" "from --c1 (api JSON)=$OUT/c1.json")
if want kinds; then
    for kind in snap window-post winning-post; do
        echo "== $SIZE: $kind from the same sector, prove, verify (ours and filecoin-proofs')" >&2
        start=$(date +%s)
        "$BIN" bench --backend cpu --workload "$kind" --sector-size "$SIZE" --proofs 1 --json \
            >"$OUT/$kind.json" 2>"$OUT/$kind.log" || { tail -20 "$OUT/$kind.log" >&2; exit 1; }
        echo "   $(( $(date +%s) - start )) s" >&2
        runs+=("$kind=$OUT/$kind.json")
    done
    echo "== $SIZE: --mix porep:2,window-post:1,winning-post:1 (Curio's priorities)" >&2
    start=$(date +%s)
    "$BIN" bench --backend cpu --mix porep:2,window-post:1,winning-post:1 --sector-size "$SIZE" \
        --proofs 4 --json >"$OUT/mix.json" 2>"$OUT/mix.log" || { tail -20 "$OUT/mix.log" >&2; exit 1; }
    echo "   $(( $(date +%s) - start )) s" >&2
    runs+=("mix=$OUT/mix.json")
fi

if want metrics; then
echo "== metrics: 100 concurrent scrapes while 4 connections trickle a byte a second" >&2
cargo test --release -p provetop-telemetry --lib -- --ignored --nocapture \
    a_hundred_concurrent_scrapes 2>&1 | grep -E "concurrent scrapes|test result" >&2
fi

python3 - "${runs[@]}" <<'PY'
import json, sys
print("| run | partitions | constraints | domain | verified (ours) | filecoin-proofs | synthesis s | ntt_h s | msm_h s | msm_b_g2 s | proofs/h | params |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
ok = True
for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    v = json.load(open(path))
    w, s, f = v["workload"], v["summary"], v["filecoin"]
    med = lambda st, k: st[k]["median"] if k in st else float("nan")
    jobs = sum(k["jobs"] for k in s.get("kinds", {}).values()) or s["proofs"] // w["partitions"]
    ok &= s["verified"] == s["proofs"] and f["verified"] == jobs and f["failed"] == 0
    params = w["params"]
    print(f"| {name} | {w['partitions'] if 'mix' not in w else '—'} | {w['constraints']} | 2^{w['log2_domain']} | "
          f"{s['verified']}/{s['proofs']} | {f['verifier']}: {f['verified']} accepted, {f['failed']} rejected | "
          f"{med(s['stages'], 'synthesis'):.2f} | {med(s['stages'], 'ntt_h'):.2f} | {med(s['stages'], 'msm_h'):.2f} | "
          f"{med(s['stages'], 'msm_b_g2'):.2f} | {s['proofs_per_hour']:.0f} | {params['source']} {params['seconds']:.0f} s |")
    if "mix" in w:
        for kind, k in s.get("kinds", {}).items():
            lat = k.get("latency") or {}
            print(f"| mix: {kind} | | | | {k['verified']}/{k['proofs']} | | {med(k['stages'], 'synthesis'):.2f} | "
                  f"{med(k['stages'], 'ntt_h'):.2f} | {med(k['stages'], 'msm_h'):.2f} | {med(k['stages'], 'msm_b_g2'):.2f} | "
                  f"{k['proofs_per_hour']:.0f} | latency {lat.get('median', float('nan')):.1f} s |")
print()
print("slow tests:", "every check passed" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
