#!/usr/bin/env bash
# `provetop attach` end to end, in real terminals (tmux): `provetop serve --backend cpu` on
# loopback with a control token, a viewer holding the token and one without, both showing the
# server's proofs; with the token a settings change applies and the log names the viewer,
# without it the change is refused in words, and a wrong token is told so. The server killed:
# the viewer says so and keeps its view; the server started again: the viewer reconnects to
# the new session. SIGTERM ends serve at once with viewers watching. Then TLS with
# certificates made here (openssl): a viewer trusting another authority is refused, the right
# one attaches; and `attach --summary --json`.
#
#   scripts/attach-test.sh                  the test (CI runs it from scripts/test.sh)
#   PROVETOP_BIN=path scripts/attach-test.sh   test that binary instead of building one
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/tmux-lib.sh
need openssl
SERVE_PID=
cleanup() {
    [[ -n $SERVE_PID ]] && kill -9 "$SERVE_PID" 2>/dev/null || true
    T kill-server 2>/dev/null || true
    rm -rf "$TMP" 2>/dev/null || { sleep 1; rm -rf "$TMP" 2>/dev/null; } || true
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    for w in alice bob carol; do
        echo "---- screen of $w" >&2
        T capture-pane -p -t "pt:$w" >&2 2>/dev/null || true
    done
    echo "---- serve" >&2
    tail -20 "${SERVE_ERR:-/dev/null}" >&2 || true
    exit 1
}


# A loopback port nothing listens on.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ADDR="127.0.0.1:$PORT"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/token"
chmod 600 "$TMP/token"
echo "not-the-token" >"$TMP/wrong"
chmod 600 "$TMP/wrong"

# serve on the cpu backend; its own workload (synthetic 2^10) is what viewers submit. Each
# start has its own log, $SERVE_ERR.
STARTS=0
serve() {
    STARTS=$((STARTS + 1))
    SERVE_ERR="$TMP/serve.$STARTS.err"
    "$BIN" serve --backend cpu --workload synthetic --log2-constraints 10 --listen "$ADDR" \
        --control-token-file "$TMP/token" "$@" >"$SERVE_ERR" 2>&1 &
    SERVE_PID=$!
    local i
    for ((i = 0; i < 300; i++)); do
        grep -q "listening on $ADDR" "$SERVE_ERR" 2>/dev/null && return 0
        kill -0 "$SERVE_PID" 2>/dev/null || fail "serve exited: $(tail -3 "$SERVE_ERR")"
        sleep 0.1
    done
    fail "serve did not listen on $ADDR"
}

# A viewer in its own tmux window: $1 the window's name, the rest attach's flags.
viewer() {
    local w=$1
    shift
    local cmd="cd $TMP && env -i PATH=$PATH HOME=$TMP TERM=xterm-256color USER=ci \
XDG_STATE_HOME=$XDG_STATE_HOME XDG_CONFIG_HOME=$XDG_CONFIG_HOME $BIN attach $ADDR --name $w $*; \
echo rc=\$?; sleep 600"
    if T has-session -t pt 2>/dev/null; then
        T new-window -d -t pt -n "$w" "$cmd"
    else
        T -f /dev/null new-session -d -s pt -n "$w" -x 110 -y 32 "$cmd"
    fi
}

echo "== serve, and two viewers: one with the control token, one without"
serve
viewer alice --token-file "$TMP/token" --record "$TMP/alice.ptrec"
viewer bob
wait_for alice 20 "⇄ $ADDR · control"
wait_for bob 20 "⇄ $ADDR · read-only"
echo "ok: alice has control, bob is read-only (the header says which)"
# Jobs of the server's workload from alice's dashboard: both viewers see the proofs.
T send-keys -t pt:alice n
wait_for alice 10 'submitted job 0'
T send-keys -t pt:alice n
wait_for alice 120 '✓2 '
wait_for bob 20 '✓2 '
echo "ok: both viewers show the server's proofs"

echo "== a settings change with the token applies and names the viewer; without it, refused"
T send-keys -t pt:alice 4
wait_for alice 5 '▸ backend'
T send-keys -t pt:alice j j j
wait_for alice 5 '▸ gpu_workers_per_device'
T send-keys -t pt:alice l
wait_for alice 5 'gpu_workers_per_device +2 → 3 \*'
T send-keys -t pt:alice Enter
wait_for alice 10 'applied gpu_workers_per_device: 2 → 3'
wait_for bob 10 'single ×3'
T send-keys -t pt:alice 5
wait_for alice 5 'config +gpu_workers_per_device: 2 → 3 \(by attach:alice\)'
grep -q 'config gpu_workers_per_device: 2 -> 3 (by attach:alice)' "$XDG_STATE_HOME"/provetop/provetop.log* ||
    fail "the server's log does not name attach:alice"
echo "ok: applied, in both viewers' headers, and logged as made by attach:alice"
T send-keys -t pt:bob 4
wait_for bob 5 '▸ backend'
T send-keys -t pt:bob j j j l Enter
wait_for bob 10 "refused: read-only: changes need the server's control token"
T send-keys -t pt:bob n
wait_for bob 10 "refused: read-only"
screen bob | grep -q 'single ×3' || fail "bob's refused change changed something"
grep -q 'attach: a change from bob refused' "$XDG_STATE_HOME"/provetop/provetop.log* ||
    fail "the server's log does not say bob was refused"
echo "ok: bob's change and job were refused, with the reason on his screen"
viewer carol --token-file "$TMP/wrong"
wait_for carol 20 'the token was refused: it is not this server.s control token'
wait_for carol 5 "⇄ $ADDR · read-only"
echo "ok: a wrong token is told so at once"

echo "== the server killed, then started again"
kill -9 "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
SERVE_PID=
wait_for alice 15 '⚠ server lost [0-9]+ s ago · retrying in [0-9]+ s'
wait_for bob 15 '⚠ server lost'
# The view is kept: the proofs and the log are still there.
screen alice | grep -q '✓2 ' || fail "alice's view was not kept"
echo "ok: both viewers say the server is lost and keep their view"
serve
wait_for alice 30 "⇄ $ADDR · control"
wait_for bob 30 "⇄ $ADDR · read-only"
wait_for alice 5 '✓0 '
T send-keys -t pt:alice n
wait_for alice 120 '✓1 '
wait_for bob 20 '✓1 '
echo "ok: both reconnected to the new session, and its proofs show"
"$BIN" attach "$ADDR" --summary --json >"$TMP/summary.json" 2>"$TMP/summary.err" ||
    fail "attach --summary --json: $(cat "$TMP/summary.err")"
python3 - "$TMP/summary.json" <<'PY' || fail "attach --summary --json: $(cat "$TMP/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["summary"]["verified"] >= 1, s["summary"]
PY
echo "ok: attach --summary --json counts the new session's proof"

echo "== SIGTERM with viewers watching: serve exits at once"
t0=$SECONDS
kill -TERM "$SERVE_PID"
rc=0
wait "$SERVE_PID" || rc=$?
SERVE_PID=
[[ $rc == 0 ]] || fail "serve after SIGTERM: exit $rc: $(tail -3 "$SERVE_ERR")"
((SECONDS - t0 <= 10)) || fail "serve took $((SECONDS - t0)) s to stop with viewers watching"
wait_for bob 15 '⚠ server lost'
echo "ok: serve exited 0 in $((SECONDS - t0)) s; the viewers say it is gone"
T send-keys -t pt:alice q
wait_for alice 10 '^rc=0'
screen alice | grep -Eq "attach: recorded [0-9]+ bytes to $TMP/alice-2.ptrec" ||
    fail "alice's exit does not name her second recording"
for f in alice.ptrec alice-2.ptrec; do
    "$BIN" replay "$TMP/$f" --summary >"$TMP/replay.txt" 2>&1 || fail "$f does not replay: $(cat "$TMP/replay.txt")"
    grep -q '^proofs [1-9]' "$TMP/replay.txt" || fail "$f holds no proof: $(cat "$TMP/replay.txt")"
done
echo "ok: alice's recording is one file per server session, and both replay with their proofs"
T kill-server

echo "== TLS: a viewer trusting another authority is refused, the right one attaches"
cd "$TMP"
for ca in ca other; do
    openssl req -x509 -newkey rsa:2048 -nodes -keyout $ca.key -out $ca.pem -days 2 \
        -subj "/CN=provetop test $ca" 2>/dev/null
done
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.cnf
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
    -days 2 -extfile san.cnf 2>/dev/null
cd - >/dev/null
serve --tls-cert "$TMP/server.pem" --tls-key "$TMP/server.key"
grep -q "listening on $ADDR (gRPC, TLS)" "$SERVE_ERR" || fail "serve does not say TLS"
rc=0
"$BIN" attach "$ADDR" --tls-ca "$TMP/other.pem" --summary >/dev/null 2>"$TMP/tls.err" || rc=$?
[[ $rc == 1 ]] || fail "a viewer trusting another authority: exit $rc, not 1: $(cat "$TMP/tls.err")"
grep -q 'UnknownIssuer' "$TMP/tls.err" || fail "no word of the certificate: $(cat "$TMP/tls.err")"
rc=0
"$BIN" attach "$ADDR" --summary >/dev/null 2>"$TMP/tls.err" || rc=$?
[[ $rc == 1 ]] || fail "a plaintext viewer of a TLS server: exit $rc, not 1"
for host in 127.0.0.1 localhost; do
    "$BIN" attach "$host:$PORT" --tls-ca "$TMP/ca.pem" --summary >"$TMP/tls.txt" 2>&1 ||
        fail "the right authority, $host: $(cat "$TMP/tls.txt")"
    grep -q '^recording ' "$TMP/tls.txt" || fail "no summary over TLS: $(cat "$TMP/tls.txt")"
done
echo "ok: the wrong authority is refused (exit 1, UnknownIssuer), the right one attaches"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || true
SERVE_PID=
echo "attach-test: every check passed"
