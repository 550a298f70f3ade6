#!/usr/bin/env bash
# A screenshot (PNG) of the dashboard replaying a recording, taken from a real terminal: an
# xterm (DejaVu Sans Mono 10, 200×32 cells, xterm-256color, black) on a private Xvfb display
# runs `provetop replay RECORDING`, and xdotool types keys into it: pause, go to AT (by default
# 2:27, just before the H200 recording's lock change from single to two-lock at 2:27.6, ◆ on the
# axis), zoom the timeline to 10 s, select the latest idle gap, play. After WAIT seconds the
# xterm window alone is captured with xwd and written as a PNG of at most 256 colours: the
# lanes with their spans on both sides of the change, the selected gap and its causes, the
# device's busy time, VRAM and PCIe, the pipeline's stage medians and the log's config line.
# Xvfb and xterm (and with them the dashboard) are stopped on every exit, error or not.
#
#   scripts/screenshot.sh [RECORDING [OUT.png]]
#       RECORDING  default examples/h200-k22-single-to-two-lock.ptrec
#       OUT.png    default docs/dashboard-h200.png
#   BIN=path     provetop binary (default .carry/provetop, else target/release/provetop)
#   AT=2:27      replay time to go to with `g` (1:30, 90s, 2.5m); empty: stay at the start
#   VIEW=1       dashboard view (1 timeline, 2 pipeline, 3 metrics, 4 settings, 5 log)
#   KEYS="plus bracketleft"   keys sent while paused at AT, as xdotool key names (zoom in, last
#                idle gap); paused, so they act on the same screen on every run
#   WAIT=6.5     seconds it then plays before the capture (the "at 2:27" notice lasts 6)
#   COLS=200 ROWS=32 FONT_SIZE=10   terminal size in cells, font size in points
#
# Needs Xvfb, xterm, xwd, xwininfo and ImageMagick's convert (apt: xvfb xterm x11-apps
# x11-utils imagemagick), and xdotool for the keys. Without xdotool the replay plays at 16×
# from the start and is captured about 2:30 in, with the default view and zoom.
set -euo pipefail
cd "$(dirname "$0")/.."

REC=${1:-examples/h200-k22-single-to-two-lock.ptrec}
OUT=${2:-docs/dashboard-h200.png}
if [[ -z "${BIN:-}" ]]; then
    if [[ -x .carry/provetop ]]; then BIN=.carry/provetop; else BIN=target/release/provetop; fi
fi
AT=${AT-2:27}
VIEW=${VIEW:-1}
KEYS=${KEYS-plus bracketleft}
COLS=${COLS:-200}
ROWS=${ROWS:-32}
FONT_SIZE=${FONT_SIZE:-10}
WAIT=${WAIT:-6.5}

for tool in Xvfb xterm xwd xwininfo convert; do
    command -v "$tool" >/dev/null || { echo "screenshot: $tool not found" >&2; exit 2; }
done
[[ -x "$BIN" ]] || { echo "screenshot: no provetop binary at $BIN (set BIN)" >&2; exit 2; }
[[ -f "$REC" ]] || { echo "screenshot: no recording at $REC" >&2; exit 2; }
BIN=$(realpath "$BIN")
REC=$(realpath "$REC")
mkdir -p "$(dirname "$OUT")"
HAVE_XDOTOOL=0
command -v xdotool >/dev/null && HAVE_XDOTOOL=1

TMP=$(mktemp -d)
XVFB_PID="" XTERM_PID=""
cleanup() {
    # Only what this script started, by pid; the dashboard dies with its terminal.
    [[ -n "$XTERM_PID" ]] && kill "$XTERM_PID" 2>/dev/null || true
    [[ -n "$XVFB_PID" ]] && kill "$XVFB_PID" 2>/dev/null || true
    [[ -n "$XTERM_PID" ]] && wait "$XTERM_PID" 2>/dev/null || true
    [[ -n "$XVFB_PID" ]] && wait "$XVFB_PID" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Xvfb picks a free display itself and writes its number once it accepts connections.
Xvfb -displayfd 3 -screen 0 3840x2160x24 -nolisten tcp -br 3>"$TMP/display" 2>"$TMP/xvfb.log" &
XVFB_PID=$!
for _ in $(seq 100); do
    [[ -s "$TMP/display" ]] && break
    kill -0 "$XVFB_PID" 2>/dev/null || { cat "$TMP/xvfb.log" >&2; exit 1; }
    sleep 0.1
done
[[ -s "$TMP/display" ]] || { echo "screenshot: Xvfb did not start" >&2; exit 1; }
export DISPLAY=":$(tr -d '[:space:]' <"$TMP/display")"

# A fresh config home, so a user's [ui] table (theme, keys) does not change the picture.
export XDG_CONFIG_HOME="$TMP/config" XDG_STATE_HOME="$TMP/state" XDG_CACHE_HOME="$TMP/cache"
SPEED=1
[[ $HAVE_XDOTOOL -eq 0 ]] && SPEED=16
xterm -geometry "${COLS}x${ROWS}+0+0" -fa 'DejaVu Sans Mono' -fs "$FONT_SIZE" \
    -bg black -fg white -bw 0 -b 0 +sb -tn xterm-256color -T provetop-screenshot \
    -e env TERM=xterm-256color "$BIN" replay --speed "$SPEED" "$REC" 2>"$TMP/xterm.log" &
XTERM_PID=$!

# The xterm window: the child of the root named by its title (the dashboard may retitle it,
# so take the first top-level window instead when the title is gone).
WID=""
for _ in $(seq 100); do
    WID=$(xwininfo -root -children 2>/dev/null | awk '/"provetop-screenshot"|"provetop/ {print $1; exit}')
    [[ -n "$WID" ]] && break
    kill -0 "$XTERM_PID" 2>/dev/null || { cat "$TMP/xterm.log" >&2; exit 1; }
    sleep 0.1
done
if [[ -z "$WID" ]]; then
    WID=$(xwininfo -root -children | awk '/^ +0x[0-9a-f]+ / {print $1; exit}')
fi
[[ -n "$WID" ]] || { echo "screenshot: no xterm window on $DISPLAY" >&2; exit 1; }
sleep 2 # the dashboard opens the recording and draws its first frame

if [[ $HAVE_XDOTOOL -eq 1 ]]; then
    xdotool windowfocus --sync "$WID" 2>/dev/null || xdotool mousemove 100 100
    key() { xdotool key --delay 80 "$@"; sleep 0.3; }
    # Paused while going to AT and sending KEYS, so what they act on (the latest idle gap, for
    # `[`) is the same on every run; then it plays WAIT seconds, past the seek's notice.
    key space
    if [[ -n "$AT" ]]; then
        key g
        xdotool type --delay 80 "$AT"
        key Return
    fi
    key "$VIEW"
    # shellcheck disable=SC2086 # KEYS is a list of key names
    if [[ -n "$KEYS" ]]; then key $KEYS; fi
    key space
    sleep "$WAIT"
else
    echo "screenshot: no xdotool, so no keys: playing at 16× from the start" >&2
    sleep 7.5 # with the 2 s above, about 2:30 into the recording at 16×
fi

kill -0 "$XTERM_PID" 2>/dev/null || { echo "screenshot: the terminal exited early" >&2; cat "$TMP/xterm.log" >&2; exit 1; }
xwd -silent -id "$WID" >"$TMP/shot.xwd"
convert "xwd:$TMP/shot.xwd" -dither None -colors 256 -strip "PNG8:$OUT"
if [[ $HAVE_XDOTOOL -eq 1 ]]; then key q; sleep 0.5; fi
echo "$OUT: $(identify -format '%wx%h' "$OUT" 2>/dev/null || true) $(stat -c %s "$OUT") bytes"
