#!/usr/bin/env bash
# The dashboard end to end, in a real terminal (tmux): start `provetop --backend cpu` on a small
# workload, wait for the first verified proof on screen, change GPU workers and the lock
# strategy from the keyboard, check the screen and the engine's log show the change, record a
# few seconds with R and replay the file, quit with q and check the terminal is back (no
# alternate screen, cursor shown, mouse released, the shell prompt). Then the same restore
# after ctrl-c and after SIGTERM.
#
#   scripts/tui-test.sh              the test (CI runs it from scripts/test.sh)
#   PROVETOP_BIN=path scripts/tui-test.sh   test that binary instead of building one
#   scripts/tui-test.sh --measure    also the UI thread's CPU use at 10 fps, idle, at 200×60
set -euo pipefail
cd "$(dirname "$0")/.."

MEASURE=0
[[ "${1:-}" == "--measure" ]] && MEASURE=1

source scripts/tmux-lib.sh
cleanup() {
    T kill-server 2>/dev/null || true
    # A provetop that was just signalled may still be flushing its log into $TMP.
    rm -rf "$TMP" 2>/dev/null || { sleep 1; rm -rf "$TMP" 2>/dev/null; } || true
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    echo "---- screen" >&2
    T capture-pane -p -t pt >&2 2>/dev/null || echo "(no screen: $(T ls 2>&1 | head -1))" >&2
    # A shell that died stays on screen (remain-on-exit): say how it ended, and what still runs.
    echo "---- pane: $(T display -p -t pt 'dead=#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal}' 2>&1)" >&2
    echo "---- provetop processes: $(pgrep -a -f "^$BIN" 2>&1 | head -3)" >&2
    echo "---- log" >&2
    cat "$XDG_STATE_HOME"/provetop/provetop.log* 2>/dev/null | tail -20 >&2 || true
    exit 1
}

screen() { T capture-pane -p -t pt; }

# Waits up to $1 seconds for the screen to match the extended regex $2.
wait_for() {
    local secs=$1 pattern=$2 i
    for ((i = 0; i < secs * 10; i++)); do
        screen | grep -Eq -- "$pattern" && return 0
        sleep 0.1
    done
    fail "waited ${secs}s for /$pattern/ on screen"
}

# Waits up to $1 seconds for the extended regex $2 to leave the screen.
wait_gone() {
    local secs=$1 pattern=$2 i
    for ((i = 0; i < secs * 10; i++)); do
        screen | grep -Eq -- "$pattern" || return 0
        sleep 0.1
    done
    fail "waited ${secs}s for /$pattern/ to leave the screen"
}

# Starts a shell in a 100×30 terminal with a recognisable prompt.
shell() {
    T kill-server 2>/dev/null || true
    sleep 0.5
    T -f /dev/null new-session -d -s pt -x 100 -y 30 "env -i PATH=$PATH HOME=$TMP TERM=xterm-256color \
        XDG_STATE_HOME=$XDG_STATE_HOME XDG_CACHE_HOME=$XDG_CACHE_HOME XDG_CONFIG_HOME=$XDG_CONFIG_HOME \
        PS1='READY\$ ' bash --norc --noprofile"
    T set-option -t pt remain-on-exit on >/dev/null
    wait_for 10 'READY\$'
}

# A shell, then provetop in it, with $1 jobs planned.
start() {
    local proofs=$1
    shell
    T send-keys -t pt "cd $TMP && $BIN --backend cpu --log2-constraints 10 --proofs $proofs --gpu-workers-per-device 2 --lock single" Enter
    # The first verified proof: the header's count leaves zero.
    wait_for 180 '✓[1-9]'
}

# The terminal is back and provetop exited with status $2.
restored() {
    local how=$1 rc=$2
    wait_for 20 'READY\$ *$'
    T send-keys -t pt 'echo "rc=$?"' Enter
    wait_for 5 "^rc=$rc\$"
    [[ $(T display -p -t pt '#{alternate_on}') == 0 ]] || fail "$how: still on the alternate screen"
    [[ $(T display -p -t pt '#{cursor_flag}') == 1 ]] || fail "$how: cursor hidden"
    [[ $(T display -p -t pt '#{mouse_any_flag}') == 0 ]] || fail "$how: mouse still captured"
    screen | grep -q '│' && fail "$how: dashboard left on screen"
    # The line discipline is back to cooked mode: a typed line echoes and runs.
    T send-keys -t pt 'echo cooked-$((6*7))' Enter
    wait_for 5 '^cooked-42'
    echo "ok: terminal restored after $how"
}

echo "== change GPU workers and the lock from the keyboard"
# Jobs enough to be still in flight when q is pressed.
start 100000
echo "ok: a verified proof on screen"
# Settings view; to the top row, then down to gpu_workers_per_device (the 4th field).
T send-keys -t pt 4
wait_for 5 '▸ backend'
T send-keys -t pt j j j
wait_for 5 '▸ gpu_workers_per_device'
T send-keys -t pt l
wait_for 5 'gpu_workers_per_device +2 → 3 \*'
T send-keys -t pt j l
wait_for 5 'lock +single → two-lock \*'
T send-keys -t pt Enter
wait_for 10 'applied gpu_workers_per_device: 2 → 3, lock: single → two-lock'
wait_for 5 'gpu_workers_per_device +3 +live'
wait_for 5 '▸ lock +two-lock +live'
echo "ok: the settings panel shows the change"
# An invalid typed value is refused inline and changes nothing.
T send-keys -t pt k Enter 0
wait_for 5 'expected a whole number from 1 to 16, got `0`'
T send-keys -t pt Escape
# A key that reaches the program in the same read as the escape would parse as alt+key, so
# the next key waits until the escape has closed the editor.
wait_gone 5 'expected a whole number from 1 to 16'
T send-keys -t pt 5
wait_for 5 'config +gpu_workers_per_device: 2 → 3 \(by ui\)'
wait_for 5 'config +lock: single → two-lock \(by ui\)'
echo "ok: the log view lists the Config events"
# R starts a recording in the current folder and stops it; the file replays.
T send-keys -t pt R
wait_for 10 '● REC'
sleep 1.5
T send-keys -t pt R
wait_for 10 'recorded .* to .*\.ptrec'
# Jobs are still in flight: q asks first, and only a second q quits, with status 3.
T send-keys -t pt q
wait_for 5 '[0-9]+ job\(s\) in flight will be dropped: q again to quit'
T send-keys -t pt q
restored "q with jobs in flight" 3
# (the exit line's words: tests/exit_codes.rs and firstminute-test.sh; the status is checked above)
echo "ok: q with jobs in flight asked first, said what it dropped and exited 3"
rec=$(ls "$TMP"/provetop-*.ptrec 2>/dev/null | head -1)
[[ -n $rec ]] || fail "R left no recording"
"$BIN" replay "$rec" --summary >"$TMP/replay.txt" 2>&1 || fail "the recording does not replay: $(cat "$TMP/replay.txt")"
grep -q '^duration ' "$TMP/replay.txt" || fail "no summary of the recording: $(cat "$TMP/replay.txt")"
echo "ok: R recorded $(stat -c %s "$rec") bytes that replay"
log() { cat "$XDG_STATE_HOME"/provetop/provetop.log*; }
log | grep -q 'config gpu_workers_per_device: 2 -> 3 (by ui)' || fail "no gpu_workers change in the log"
log | grep -q 'config lock: single -> two-lock (by ui)' || fail "no lock change in the log"
echo "ok: the engine logged both changes (by ui)"

echo "== pause in the first seconds, then ctrl-c"
start 100000
# Inside the first window: the paused time counts from the pause, and ← does not move it on.
T send-keys -t pt Space
wait_for 5 '⏸ paused, [0-9.]+ (ms|s) ago'
T send-keys -t pt Left
sleep 1.2
screen | grep -Eq '⏸ paused, ([1-9][0-9.]* s|[0-9.]+ ms) ago' || fail "the pause does not count from when it began"
screen | grep -Eq '[0-9]{6,} s ago' && fail "the paused time underflowed"
echo "ok: pausing in the first window says how long ago, and ← keeps it"
T send-keys -t pt C-c
restored "ctrl-c" 3

echo "== SIGTERM"
start 100000
pid=$(pgrep -n -f "^$BIN --backend cpu")
kill -TERM "$pid"
restored "SIGTERM" 3

echo "== SIGTERM to a headless run and a bench: status 3 and the unfinished jobs named"
for cmd in --headless bench; do
    # Emptied here: the background process's own redirection may come after the first grep,
    # which would then read the previous run's lines.
    : >"$TMP/stopped.txt"
    "$BIN" $cmd --backend cpu --log2-constraints 10 --proofs 100000 \
        >/dev/null 2>"$TMP/stopped.txt" &
    pid=$!
    for ((i = 0; i < 1800; i++)); do
        grep -q '^proof 1/' "$TMP/stopped.txt" && break
        sleep 0.1
    done
    grep -q '^proof 1/' "$TMP/stopped.txt" || fail "${cmd#--}: no proof: $(tail -3 "$TMP/stopped.txt")"
    kill -TERM "$pid"
    rc=0
    wait "$pid" || rc=$?
    [[ $rc == 3 ]] || fail "${cmd#--} after SIGTERM: exit $rc, not 3: $(tail -3 "$TMP/stopped.txt")"
    grep -Eq 'stopped by a signal: [0-9]+ of 100000 job\(s\) unfinished' "$TMP/stopped.txt" ||
        fail "${cmd#--} after SIGTERM: no count of unfinished jobs: $(tail -3 "$TMP/stopped.txt")"
    echo "ok: ${cmd#--} stopped by SIGTERM exits 3 and names the unfinished jobs"
done

echo "== the shipped recording: gaps step from the playhead after a jump, and its segments"
REC="$PWD/examples/h200-k22-single-to-two-lock.ptrec"
shell
T send-keys -t pt "$BIN replay $REC" Enter
wait_for 20 '▶ replay'
T send-keys -t pt Space
wait_for 5 '⏸ replay'
# To the lock change at 2:27.6, then the gap before it: near the playhead, not the start.
T send-keys -t pt C
wait_for 10 'at 2:27\.[0-9]'
T send-keys -t pt '['
wait_for 5 'gap on gpu0: [0-9.]+ (ms|s|µs) idle, 2:(0[0-9]|1[0-9]|2[0-7])\.[0-9] → 2:'
# Back to a later point: `end` clears the selection and its gap line.
T send-keys -t pt End
wait_gone 5 'gap on gpu0'
echo "ok: [ after C steps from the playhead; end clears the gap line"
T send-keys -t pt q
restored "q in a replay" 0
"$BIN" replay "$REC" --summary >"$TMP/segments.txt" 2>&1 || fail "replay --summary: $(cat "$TMP/segments.txt")"
grep -q '^segments (split at each config change and mark):' "$TMP/segments.txt" ||
    fail "no segments: $(cat "$TMP/segments.txt")"
grep -Eq 'lock single → two-lock: since .* vs before .*, gpu0 busy [−+±][0-9.]+ points' "$TMP/segments.txt" ||
    fail "no comparison of the segments: $(cat "$TMP/segments.txt")"
echo "ok: the shipped recording splits at the lock change: $(grep -m1 '^    after' "$TMP/segments.txt")"

if [[ $MEASURE == 1 ]]; then
    echo "== UI thread CPU at 10 fps, nothing changing, 200×60"
    T kill-server 2>/dev/null || true
    sleep 0.5
    T -f /dev/null new-session -d -s pt -x 200 -y 60 "env TERM=xterm-256color $BIN --backend cpu --log2-constraints 10 --proofs 2 || sleep 60"
    wait_for 180 '✓2'
    sleep 3
    # The pane runs a shell; provetop is its child, and its main thread (tid = pid) the UI.
    pid=$(pgrep -n -P "$(T display -p -t pt '#{pane_pid}')")
    [[ $(cat "/proc/$pid/comm") == provetop ]] || fail "no provetop process to measure"
    ticks() { awk '{print $14 + $15}' "/proc/$pid/task/$pid/stat"; }
    hz=$(getconf CLK_TCK)
    a=$(ticks)
    sleep 30
    b=$(ticks)
    echo "ui thread: $(awk -v a="$a" -v b="$b" -v hz="$hz" 'BEGIN { printf "%.2f%% of a core over 30 s", 100 * (b - a) / hz / 30 }')"
    T send-keys -t pt q
fi
echo "tui-test: every check passed"
