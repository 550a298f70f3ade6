#!/usr/bin/env bash
# What a viewer that stops reading costs `provetop serve` (issue 25): the server's proofs per hour
# and peak memory with a viewer stopped by SIGSTOP for STALL seconds while the server proves,
# against runs with no viewer. Each run starts a fresh serve (cpu backend unless BACKEND says,
# synthetic 2^K, a control token); `bench --server --token-file` keeps CONCURRENCY jobs of the
# server's workload in flight for PROOFS jobs and counts them from the server's own events
# (proofs per hour on its clock). In a "stalled" run a viewer attaches first (`provetop attach
# --record`, no terminal), is stopped STALL_AT seconds into the bench, continued STALL seconds
# later, and stopped with SIGTERM once the bench ends; its recording says what it received and
# what it was told it missed. Runs alternate none/stalled, the order rotated each round, so the
# spread between runs of the same kind (the noise) stands beside the ratio. A table last.
#
#   scripts/attach-bench.sh                  # the cpu backend, here
#   K=12 PROOFS=800 ROUNDS=3 STALL=30 BIN=target/release/provetop scripts/attach-bench.sh
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/debug/provetop}
K=${K:-12}
PROOFS=${PROOFS:-800}
CONCURRENCY=${CONCURRENCY:-2}
ROUNDS=${ROUNDS:-3}
STALL=${STALL:-30}
STALL_AT=${STALL_AT:-5}
BACKEND=${BACKEND:-cpu}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
W=$(mktemp -d)
export XDG_CACHE_HOME="$W/cache" XDG_STATE_HOME="$W/state" XDG_CONFIG_HOME="$W/config"
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
[[ -x $BIN ]] || { echo "no binary at $BIN (cargo build --bin provetop)"; exit 2; }
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
chmod 600 "$W/token"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ADDR="127.0.0.1:$PORT"
echo "# attach-bench $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null)" | tee "$OUT/summary.md"
echo "- machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/summary.md"
echo "- runs: serve --backend $BACKEND --workload synthetic --log2-constraints $K; bench --server --token-file --proofs $PROOFS --concurrency $CONCURRENCY; stalled: SIGSTOP at ${STALL_AT}s for ${STALL}s" | tee -a "$OUT/summary.md"

# One run: $1 none|stalled, $2 its name. Appends a line to $W/rows.
run() {
    local kind=$1 name=$2
    : >"$W/$name.serve"
    "$BIN" serve --backend "$BACKEND" --workload synthetic --log2-constraints "$K" --listen "$ADDR" \
        --control-token-file "$W/token" 2>"$W/$name.serve" &
    local serve=$! i viewer=
    for ((i = 0; i < 600; i++)); do
        grep -q "listening on" "$W/$name.serve" && break
        sleep 0.1
    done
    # The parameters of the workload, made before the clock starts (one job).
    "$BIN" bench --server "$ADDR" --token-file "$W/token" --proofs 1 --json >/dev/null 2>&1
    if [[ $kind == stalled ]]; then
        "$BIN" attach "$ADDR" --name stalled --record "$OUT/$name.ptrec" --force 2>"$W/$name.viewer" &
        viewer=$!
        sleep 1
    fi
    "$BIN" bench --server "$ADDR" --token-file "$W/token" --proofs "$PROOFS" \
        --concurrency "$CONCURRENCY" --json >"$OUT/$name.json" 2>"$W/$name.bench" &
    local bench=$!
    if [[ -n $viewer ]]; then
        sleep "$STALL_AT"
        kill -STOP "$viewer"
        sleep "$STALL"
        kill -CONT "$viewer"
    fi
    wait "$bench"
    local hwm
    hwm=$(awk '/VmHWM/ {print $2 * 1024}' "/proc/$serve/status")
    if [[ -n $viewer ]]; then
        sleep 1
        kill -TERM "$viewer"
        wait "$viewer"
    fi
    kill -TERM "$serve"
    wait "$serve"
    python3 - "$OUT/$name.json" "$kind" "$name" "$hwm" "$OUT/$name.ptrec" "$BIN" >>"$W/rows" <<'PY'
import json, subprocess, sys, os
b = json.load(open(sys.argv[1]))
kind, name, hwm, rec, binary = sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5], sys.argv[6]
got = lost = size = "–"
if os.path.exists(rec):
    r = json.loads(subprocess.run([binary, "replay", rec, "--summary", "--json"], capture_output=True, text=True).stdout)["recording"]
    size = f"{r['bytes'] / 1e6:.2f} MB"
    got = str(r["records"])
    lost = str(sum(r["not_recorded"][k] for k in ("samples", "spans", "other")))
print(json.dumps({"name": name, "kind": kind, "pph": b["proofs_per_hour"], "verified": b["verified"],
    "failed": b["failed"], "wall": b["wall_seconds"], "rss": b["server_rss_max_bytes"], "hwm": hwm,
    "viewer_records": got, "viewer_missed": lost, "viewer_bytes": size}))
PY
    echo "$name: $(tail -1 "$W/rows")" >&2
}

: >"$W/rows"
for ((r = 1; r <= ROUNDS; r++)); do
    if ((r % 2)); then order="none stalled"; else order="stalled none"; fi
    for kind in $order; do
        run "$kind" "r$r-$kind"
    done
done
python3 - "$W/rows" <<'PY' | tee -a "$OUT/summary.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print()
print("| run | viewer | verified | proofs/h (server clock) | server peak RSS (VmHWM) | RSS max (samples) | viewer: records received | told missed | its recording |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['name']} | {r['kind']} | {r['verified']} | {r['pph']:,.0f} | {r['hwm'] / 2**20:.0f} MiB | {r['rss'] / 2**20:.0f} MiB | {r['viewer_records']} | {r['viewer_missed']} | {r['viewer_bytes']} |")
med = {k: statistics.median(r["pph"] for r in rows if r["kind"] == k) for k in ("none", "stalled")}
spread = {k: (min(r["pph"] for r in rows if r["kind"] == k), max(r["pph"] for r in rows if r["kind"] == k)) for k in med}
hwm = {k: max(r["hwm"] for r in rows if r["kind"] == k) for k in med}
print()
print(f"- proofs/h, median: no viewer {med['none']:,.0f} (runs {spread['none'][0]:,.0f}–{spread['none'][1]:,.0f}), "
      f"stalled viewer {med['stalled']:,.0f} (runs {spread['stalled'][0]:,.0f}–{spread['stalled'][1]:,.0f}); "
      f"ratio stalled / none {med['stalled'] / med['none']:.3f}")
print(f"- server peak RSS, largest: no viewer {hwm['none'] / 2**20:.0f} MiB, stalled viewer {hwm['stalled'] / 2**20:.0f} MiB")
PY
echo "(files in $OUT)"
