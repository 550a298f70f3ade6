#!/usr/bin/env bash
# The fleet view's own cost with many rigs: `provetop fleet --simulate N` serves N made-up rigs
# (each summarising 50,000 partitions an hour, one summary a second, as a real rig sends), and
# `provetop fleet` watches them all in a real terminal (tmux, 200x70, redrawn four times a
# second) for SECS seconds; its peak resident memory and CPU time are read from /proc.
#
#   scripts/fleet-bench.sh [N=64] [SECS=120]     PROVETOP_BIN=path to use a built binary
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-64}
SECS=${2:-120}
source scripts/tmux-lib.sh
SIM=
cleanup() {
    [[ -n $SIM ]] && kill "$SIM" 2>/dev/null || true
    T kill-server 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$((PORT > 60000 ? 20000 : PORT))
"$BIN" fleet --simulate "$N" --simulate-port "$PORT" 2>"$TMP/sim.err" &
SIM=$!
sleep 2
ADDRS=()
for ((i = 0; i < N; i++)); do ADDRS+=("rig$i=127.0.0.1:$((PORT + i))"); done
T -f /dev/null new-session -d -s pt -n fleet -x 200 -y 70 \
    "env TERM=xterm-256color $BIN fleet ${ADDRS[*]}; sleep 600"
sleep 3
PID=$(pgrep -f -n "^$BIN fleet rig0=") || { echo "the fleet view did not start" >&2; exit 1; }
T capture-pane -p -t pt:fleet | grep -q "$N rigs, $N live" ||
    { sleep 5; T capture-pane -p -t pt:fleet | grep -q "$N rigs, $N live"; } ||
    { echo "not every rig is live:" >&2; T capture-pane -p -t pt:fleet >&2; exit 1; }
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
c0=$(cpu)
s0=$(date +%s.%N)
sleep "$SECS"
c1=$(cpu)
s1=$(date +%s.%N)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
python3 - "$N" "$c0" "$c1" "$s0" "$s1" "$ticks" "$hwm" "$rss" <<'EOF'
import sys
n, c0, c1, s0, s1, tck, hwm, rss = sys.argv[1:]
cpu = (float(c1) - float(c0)) / float(tck)
wall = float(s1) - float(s0)
print(f"fleet view, {n} rigs: CPU {cpu:.2f} s over {wall:.1f} s = {100 * cpu / wall:.1f} % of a core; "
      f"peak RSS {int(hwm) / 1024:.1f} MiB (now {int(rss) / 1024:.1f} MiB)")
EOF
T capture-pane -p -t pt:fleet | head -8
