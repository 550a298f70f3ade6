#!/usr/bin/env bash
# Hostile input, measured (a benchmark, not a timed test):
#   1. peak RSS of `replay --summary --json` and `export --perfetto` over every file of the
#      hostile corpus (tests/hostile.rs's, written by examples/hostile_corpus.rs), at the
#      default bound on decoded state; every one must stay under 512 MB;
#   2. what a SIGKILL costs a recording: 20 `bench --record` runs on a loaded machine, each
#      killed at a random moment; the loss is the time from the last event in the file to the
#      kill. Prints the worst case (docs/recordings.md quotes it).
# Each figure is printed on stdout; the exit code is 1 if a file took 512 MB or more or a
# command exited with anything but 0, 1 or 2.
#   scripts/hostile-bench.sh [path/to/provetop]     (default: a release build)
#   CORPUS_BIN=path/to/hostile_corpus picks the corpus writer (default: a release build);
#   PART=kill measures only the SIGKILL loss, PART=rss only the peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${CARGO_TARGET_DIR:-target}/hostile-bench}
mkdir -p "$OUT"
BIN=${1:-}
CORPUS_BIN=${CORPUS_BIN:-}
if [[ -z $BIN || -z $CORPUS_BIN ]]; then
    cargo build --release --example hostile_corpus --bin provetop 2>&1 | tail -1 >&2
fi
BIN=${BIN:-${CARGO_TARGET_DIR:-target}/release/provetop}
CORPUS_BIN=${CORPUS_BIN:-${CARGO_TARGET_DIR:-target}/release/examples/hostile_corpus}
CORPUS="$OUT/corpus"
rm -rf "$CORPUS"
"$CORPUS_BIN" "$CORPUS"
export XDG_CACHE_HOME="$OUT/cache" XDG_STATE_HOME="$OUT/state" XDG_CONFIG_HOME="$OUT/config"

bad=0
if [[ ${PART:-all} != kill ]]; then
echo "== peak RSS over $(ls "$CORPUS" | wc -l) hostile recordings (each in $OUT/rss.txt, KiB)" >&2
# One file's two commands, each line "KiB exit command"; files run $JOBS at a time (default:
# one per core), each export into its own file, and the worst is taken over all of them.
one() {
    local f=$1 out cmd rc
    out="$OUT/trace-$(basename "$f").json"
    for cmd in "replay $f --summary --json" "export $f --perfetto $out"; do
        # shellcheck disable=SC2086
        /usr/bin/time -f "%M" -o "$out.rss" "$BIN" $cmd >/dev/null 2>/dev/null && rc=0 || rc=$?
        echo "$(tail -1 "$out.rss") $rc $cmd"
        rm -f "$out" "$out.rss"
    done
}
export -f one
export BIN OUT
: >"$OUT/rss.txt"
start=$(date +%s)
find "$CORPUS" -name '*.ptrec' -print0 | sort -z |
    xargs -0 -n1 -P"${JOBS:-$(nproc)}" bash -c 'one "$0"' >>"$OUT/rss.txt"
echo "   $(wc -l <"$OUT/rss.txt") commands in $(( $(date +%s) - start )) s" >&2
read -r worst worst_file < <(sort -n -k1,1 "$OUT/rss.txt" | tail -1 | awk '{k=$1; $1=$2=""; print k, $0}')
failed=$(awk '$2 > 2' "$OUT/rss.txt")
if [[ -n $failed ]]; then echo "exited with more than 2 (KiB, exit, command):" >&2; echo "$failed" >&2; bad=1; fi
echo "peak RSS, worst: $(( worst / 1024 )) MiB ($worst_file)"
(( worst < 512 * 1000 * 1000 / 1024 )) || { echo "over 512 MB" >&2; bad=1; }
fi

[[ ${PART:-all} == rss ]] && exit $bad
echo "== SIGKILL loss over 20 recorded runs under load" >&2
load=()
for _ in $(seq "$(nproc)"); do (while :; do :; done) & load+=($!); done
trap 'kill "${load[@]}" 2>/dev/null || true' EXIT
worst_loss=0
for i in $(seq 20); do
    rec="$OUT/killed-$i.ptrec"
    rm -f "$rec"
    "$BIN" bench --backend cpu --log2-constraints 10 --proofs 1000000 --record "$rec" \
        >/dev/null 2>&1 &
    pid=$!
    sleep "$(python3 -c "import random; print(3 + random.random() * 4)")"
    killed=$(date +%s.%N)
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
    end=$("$BIN" replay "$rec" --json 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["recording"]["end"])')
    # The header says what wall time session time 0 was; the loss is from the last event in
    # the file to the kill (an upper bound: samplers themselves leave gaps of up to 0.25 s).
    loss=$(python3 - "$rec" "$killed" "$end" <<'PY'
import json, sys
b = open(sys.argv[1], "rb").read()
n = int.from_bytes(b[20:24], "little")
started = json.loads(b[28:28 + n])["session"]["started_unix"]
print(round(max(0.0, float(sys.argv[2]) - started - float(sys.argv[3])), 3))
PY
)
    echo "run $i: lost $loss s" >&2
    worst_loss=$(python3 -c "print(max($worst_loss, $loss))")
done
kill "${load[@]}" 2>/dev/null || true
echo "SIGKILL loss over 20 runs under load, worst: $worst_loss s"
exit $bad
