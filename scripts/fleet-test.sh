#!/usr/bin/env bash
# `provetop fleet` end to end, in a real terminal (tmux): six `provetop serve --backend cpu
# --test-params` on loopback, each sent one 2KiB WinningPoSt; the fleet view shows six rows
# with the proofs counted; one rig killed with SIGKILL shows `unreachable` within 5 s, and is
# back once restarted; an alert of serve's [alerts] reaches a webhook on a local HTTP listener
# (Alertmanager's JSON) and clears; a rig's dashboard names its jobs by request id;
# `attach --summary` counts the served proofs by kind; and
# the Prometheus rules pass `promtool test rules` (scripts/prometheus-test.sh).
#
#   scripts/fleet-test.sh                     the test (CI runs it from scripts/test.sh)
#   PROVETOP_BIN=path scripts/fleet-test.sh   test that binary instead of building one
#   FLEET_CAPTURE=FILE scripts/fleet-test.sh  also keep the fleet's screen in FILE
#   PROVETOP_CACHE=DIR scripts/fleet-test.sh  start from a copy of that XDG cache (its 2KiB
#                                             sector and parameters, as `cargo test` left them)
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/tmux-lib.sh
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    T kill-server 2>/dev/null || true
    rm -rf "$TMP" 2>/dev/null || { sleep 1; rm -rf "$TMP" 2>/dev/null; } || true
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    echo "---- the fleet" >&2
    T capture-pane -p -t pt:fleet >&2 2>/dev/null || true
    for f in "$TMP"/serve.*.err; do echo "---- $f" >&2; tail -5 "$f" >&2; done
    exit 1
}


free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The webhook: a local HTTP listener that keeps each POST's body, one a line.
HOOK_PORT=$(free_port)
python3 - "$HOOK_PORT" "$TMP/hooks.jsonl" <<'EOF' &
import http.server, sys
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(sys.argv[2], "ab") as f:
            f.write(body + b"\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
EOF
PIDS+=($!)

# rig1 raises ProvetopWinningPostSlow for any WinningPoSt over 1 ms in the last 20 s: it fires
# with its proof and clears 20 s later.
cat >"$TMP/alerts.toml" <<EOF
[alerts]
hold = "1s"
window = "20s"
winning_post_latency = "0.001s"
webhook = "http://127.0.0.1:$HOOK_PORT/hook"
timeout = "2s"
retries = 2
EOF

declare -A PORT PID
serve() {
    local rig=$1
    local err="$TMP/serve.$rig.err"
    local extra=()
    [[ $rig == rig1 ]] && extra=(--config "$TMP/alerts.toml")
    "$BIN" serve --backend cpu --test-params --listen "127.0.0.1:${PORT[$rig]}" "${extra[@]}" \
        >"$err" 2>&1 &
    PID[$rig]=$!
    PIDS+=($!)
}
listening() {
    local rig=$1 i
    for ((i = 0; i < 600; i++)); do
        grep -q "listening on 127.0.0.1:${PORT[$rig]}" "$TMP/serve.$rig.err" 2>/dev/null && return 0
        kill -0 "${PID[$rig]}" 2>/dev/null || fail "$rig exited: $(tail -3 "$TMP/serve.$rig.err")"
        sleep 0.1
    done
    fail "$rig did not listen"
}

t0=$SECONDS
if [[ -d ${PROVETOP_CACHE:-}/provetop ]]; then
    mkdir -p "$XDG_CACHE_HOME"
    cp -r "$PROVETOP_CACHE/provetop" "$XDG_CACHE_HOME/"
fi
echo "== six serve instances on loopback"
RIGS=(rig1 rig2 rig3 rig4 rig5 rig6)
ADDRS=()
for r in "${RIGS[@]}"; do
    PORT[$r]=$(free_port)
    ADDRS+=("$r=127.0.0.1:${PORT[$r]}")
    serve "$r"
done
for r in "${RIGS[@]}"; do listening "$r"; done
"$BIN" gen-vanilla --kind winning-post --sector-size 2KiB --miner-id 1000 --out "$TMP/win.json" \
    >/dev/null 2>&1 || fail "gen-vanilla"

T -f /dev/null new-session -d -s pt -n fleet -x 200 -y 20 \
    "cd $TMP && env TERM=xterm-256color HOME=$TMP XDG_STATE_HOME=$XDG_STATE_HOME \
XDG_CONFIG_HOME=$XDG_CONFIG_HOME $BIN fleet ${ADDRS[*]}; echo rc=\$?; sleep 600"
wait_for fleet 20 "6 rigs, 6 live"
echo "ok: six rows, six live ($((SECONDS - t0)) s)"

echo "== a WinningPoSt to each rig"
# The test parameters, made once in the shared cache (or copied from PROVETOP_CACHE, the cache
# `cargo test`'s 2KiB tests made): the rigs load them, and the clients check the proofs with
# them.
if ! ls "$XDG_CACHE_HOME"/provetop/params/winning-post-2KiB-*.params >/dev/null 2>&1; then
    "$BIN" bench --backend cpu --request "$TMP/win.json" --proofs 1 >"$TMP/setup.out" 2>&1 ||
        fail "making the parameters: $(tail -3 "$TMP/setup.out")"
fi
# One rig's parameters loaded at a time: loading them reads the sealed test sector that the
# rigs share in the cache.
CLIENTS=()
for r in "${RIGS[@]}"; do
    "$BIN" bench --server "127.0.0.1:${PORT[$r]}" --request "$TMP/win.json" --proofs 1 \
        >"$TMP/bench.$r.out" 2>&1 &
    CLIENTS+=($!)
    for ((i = 0; i < 600; i++)); do
        grep -q "loaded on the server" "$TMP/bench.$r.out" && break
        kill -0 "${CLIENTS[-1]}" 2>/dev/null || break
        sleep 0.1
    done
done
echo "== rig1's alert fires, reaches the webhook and shows in the fleet"
wait_for fleet 180 "rig1 .*ProvetopWinningPostSlow"
for ((i = 0; i < 100; i++)); do
    grep -q '"status":"firing"' "$TMP/hooks.jsonl" 2>/dev/null && break
    sleep 0.1
done
grep -q '"alertname":"ProvetopWinningPostSlow"' "$TMP/hooks.jsonl" ||
    fail "no firing alert reached the webhook"
python3 -c 'import json,sys; m=json.loads(open(sys.argv[1]).readline()); assert m["version"]=="4" and m["status"]=="firing" and m["alerts"][0]["labels"]["alertname"]=="ProvetopWinningPostSlow", m' \
    "$TMP/hooks.jsonl" || fail "the webhook's body is not Alertmanager's"
echo "ok: firing, at the webhook in Alertmanager's JSON and in rig1's row ($((SECONDS - t0)) s)"
for ((i = 0; i < ${#CLIENTS[@]}; i++)); do
    r=${RIGS[$i]}
    wait "${CLIENTS[$i]}" || fail "a WinningPoSt through $r failed: $(tail -3 "$TMP/bench.$r.out")"
done
for r in "${RIGS[@]}"; do
    wait_for fleet 10 "^ *$r +live .*winning-post [0-9]+/6 "
done
echo "ok: every row counts its served WinningPoSt ($((SECONDS - t0)) s)"

echo "== Enter opens rig1's dashboard, where its served job goes by its request id"
T send-keys -t pt:fleet Enter
sleep 1
T send-keys -t pt:fleet 2
wait_for fleet 10 " bench-[0-9]+-0 +verified"
T send-keys -t pt:fleet Escape
wait_for fleet 10 "6 rigs, 6 live"
echo "ok: 'bench-…-0 verified' in rig1's jobs, and back to the fleet ($((SECONDS - t0)) s)"

echo "== rig1's alert clears"
for ((i = 0; i < 400; i++)); do
    grep -q '"status":"resolved"' "$TMP/hooks.jsonl" && break
    sleep 0.1
done
grep -q '"status":"resolved"' "$TMP/hooks.jsonl" || fail "the alert did not clear"
grep -q 'alert cleared: ProvetopWinningPostSlow' "$TMP/serve.rig1.err" ||
    fail "serve's log does not say the alert cleared"
for ((i = 0; i < 50; i++)); do
    screen fleet | grep -E "^ *rig1 " | grep -q ProvetopWinningPostSlow || break
    sleep 0.1
done
screen fleet | grep -E "^ *rig1 " | grep -q ProvetopWinningPostSlow && fail "rig1's row still shows the alert"
echo "ok: resolved at the webhook and gone from rig1's row ($((SECONDS - t0)) s)"

echo "== attach --summary counts the served proofs by kind"
out=$("$BIN" attach "127.0.0.1:${PORT[rig2]}" --summary 2>&1) || fail "attach --summary: $out"
grep -q 'serving: winning-post ×1' <<<"$out" || fail "attach --summary's header: $out"
grep -Eq 'kind winning-post: 1 job\(s\), 1/1 verified' <<<"$out" || fail "attach --summary: $out"
echo "ok: 'serving: winning-post ×1', 'kind winning-post: 1 job(s), 1/1 verified'"

echo "== rig3 killed with SIGKILL: unreachable within 5 s, then back"
kill -9 "${PID[rig3]}"
killed=$SECONDS
wait_for fleet 5 "^ *rig3 +unreachable [0-9:]{8}"
echo "ok: unreachable after $((SECONDS - killed)) s or less"
wait_for fleet 5 "rig3 .*rig unreachable"
serve rig3
listening rig3
wait_for fleet 20 "^ *rig3 +live"
wait_for fleet 5 "6 rigs, 6 live"
echo "ok: restarted and back ($((SECONDS - t0)) s)"
# FLEET_CAPTURE=FILE keeps the screen (docs/fleet.md shows one).
[[ -n ${FLEET_CAPTURE:-} ]] && screen fleet >"$FLEET_CAPTURE"
T send-keys -t pt:fleet q
wait_for fleet 5 "rc=0"

scripts/prometheus-test.sh
echo "fleet-test: all passed in $((SECONDS - t0)) s"
