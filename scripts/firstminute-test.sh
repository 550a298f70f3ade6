#!/usr/bin/env bash
# The dashboard's first minute, in real terminals (tmux) of 60×15, 80×24 and 160×48 side by
# side: `provetop --backend cpu` with no --proofs keeps proving (the verified count still
# grows after 30 s), its header says how setup went, the advisor never calls a device the
# bottleneck over a window without work, and q quits it with status 0 (its jobs in flight
# cancelled). Then a bounded run (--proofs 2) that finishes says so, its advisor says it has
# too few proofs rather than blaming an idle device, and q exits 0.
#
#   scripts/firstminute-test.sh                 the test (scripts/test.sh runs it)
#   PROVETOP_BIN=path scripts/firstminute-test.sh   test that binary instead of building one
#   KEEP=dir scripts/firstminute-test.sh        also keep each size's screens in dir
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/tmux-lib.sh
cleanup() {
    T kill-server 2>/dev/null || true
    rm -rf "$TMP" 2>/dev/null || { sleep 1; rm -rf "$TMP" 2>/dev/null; } || true
}
trap cleanup EXIT

SIZES=(60x15 80x24 160x48)

fail() {
    echo "FAIL: $*" >&2
    for s in "${SIZES[@]}"; do
        T capture-pane -p -t "s$s" 2>/dev/null | sed "s/^/$s| /" >&2 || true
    done
    cat "$XDG_STATE_HOME"/provetop/provetop.log* 2>/dev/null | tail -20 >&2 || true
    exit 1
}

# Each size is a session of its own, so `screen` (and tmux-lib's `wait_for`) reads session $1.
screen() { T capture-pane -p -t "$1"; }

# The verified count in session $1's header (✓N), or nothing.
verified() { screen "$1" | grep -Eo '✓[0-9]+' | head -1 | tr -d '✓'; }

# The advisor never blames a device over a window without work: no `bottleneck` beside
# `0 %`, and none while the run says it has finished or is setting up.
advisor_honest() {
    local s=$1 text
    text=$(screen "$s")
    if grep -q 'bottleneck' <<<"$text"; then
        grep -Eq 'computes 0 %|setup:|finished:' <<<"$text" &&
            fail "$s: the advisor blames a device over a window without work"
    fi
    return 0
}

# A terminal of size $1 (WxH) running `provetop $2…` in a shell that prints its status after.
open() {
    local size=$1 w=${1%x*} h=${1#*x}
    shift
    T -f /dev/null new-session -d -s "s$size" -x "$w" -y "$h" "env -i PATH=$PATH HOME=$TMP \
        TERM=xterm-256color XDG_STATE_HOME=$XDG_STATE_HOME XDG_CACHE_HOME=$XDG_CACHE_HOME \
        XDG_CONFIG_HOME=$XDG_CONFIG_HOME PS1='READY\$ ' bash --norc --noprofile"
    T set-option -t "s$size" remain-on-exit on >/dev/null
    wait_for "s$size" 10 'READY\$'
    T send-keys -t "s$size" "cd $TMP && $BIN --backend cpu --log2-constraints 8 $*; echo rc=\$?" Enter
}

keep() { [[ -n "${KEEP:-}" ]] && { mkdir -p "$KEEP"; screen "s$1" >"$KEEP/$1-$2.txt"; }; return 0; }

echo "== the first minute at ${SIZES[*]}: proving until quit"
for s in "${SIZES[@]}"; do open "$s"; done
for s in "${SIZES[@]}"; do wait_for "s$s" 120 '✓[1-9]'; keep "$s" first; done
echo "ok: proofs on screen at every size"
# 30 s in, the count still grows: the run has not stopped after its first jobs.
for i in $(seq 30); do
    for s in "${SIZES[@]}"; do advisor_honest "s$s"; done
    sleep 1
done
declare -A AT30
for s in "${SIZES[@]}"; do AT30[$s]=$(verified "s$s"); keep "$s" 30s; done
sleep 6
for s in "${SIZES[@]}"; do
    now=$(verified "s$s")
    [[ -n "${AT30[$s]}" && -n "$now" && "$now" -gt "${AT30[$s]}" ]] ||
        fail "s$s: no new proof after 30 s (✓${AT30[$s]:-?} then ✓${now:-?})"
    advisor_honest "s$s"
    screen "s$s" | grep -q 'finished:' && fail "s$s: a run until quit says it finished"
done
echo "ok: proofs keep coming after 30 s (${AT30[*]} → more), the advisor honest"
for s in "${SIZES[@]}"; do T send-keys -t "s$s" q; done
for s in "${SIZES[@]}"; do wait_for "s$s" 20 '^rc=0$'; done
for s in "${SIZES[@]}"; do
    screen "s$s" | grep -Eq 'job\(s\) in flight cancelled|proof\(s\) verified' ||
        fail "s$s: no closing line"
    T kill-session -t "s$s"
done
echo "ok: q quits a run until quit with status 0"

echo "== a bounded run (--proofs 2) at 80x24 finishes and says so"
open 80x24 --proofs 2
wait_for s80x24 120 'finished: 2 jobs'
sleep 5
keep 80x24 finished
advisor_honest s80x24
screen s80x24 | grep -q 'bottleneck' && fail "s80x24: the advisor judges a finished two-proof run"
T send-keys -t s80x24 q
wait_for s80x24 20 '^rc=0$'
echo "ok: a finished run says so, and exits 0"
