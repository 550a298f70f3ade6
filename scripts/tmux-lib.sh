# Sourced by the tests that drive provetop in tmux (tui-test.sh, attach-test.sh): installs what
# is missing, picks the binary, and makes a scratch folder with its own tmux server and XDG
# folders. Sets BIN, TMP, SOCK; `T` runs tmux on that server; `screen` and `wait_for` read a window.

# Installs the Debian package $1 when its command is missing.
need() {
    command -v "$1" >/dev/null && return
    echo "== installing $1"
    if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get install -y "$1" >/dev/null 2>&1 ||
        { "${SUDO[@]}" apt-get update >/dev/null && "${SUDO[@]}" apt-get install -y "$1" >/dev/null; }
}
need tmux

# scripts/test.sh hands over the binary `cargo test` just built (building again here would
# rebuild much of the tree with the bin's own feature set).
if [[ -n "${PROVETOP_BIN:-}" ]]; then
    BIN=$(realpath "$PROVETOP_BIN")
else
    echo "== building provetop"
    cargo build --bin provetop 2>&1 | grep -v '^warning: provetop@' | tail -1
    BIN="$PWD/target/debug/provetop"
fi

TMP=$(mktemp -d)
SOCK="$TMP/tmux.sock"
export XDG_STATE_HOME="$TMP/state" XDG_CACHE_HOME="$TMP/cache" XDG_CONFIG_HOME="$TMP/config"
T() { tmux -S "$SOCK" "$@"; }

# The screen of tmux window $1 (of session pt).
screen() { T capture-pane -p -t "pt:$1"; }

# Waits up to $2 seconds for window $1's screen to match the extended regex $3; calls the
# test's `fail` otherwise.
wait_for() {
    local w=$1 secs=$2 pattern=$3 i
    for ((i = 0; i < secs * 10; i++)); do
        screen "$w" | grep -Eq -- "$pattern" && return 0
        sleep 0.1
    done
    fail "waited ${secs}s for /$pattern/ on $w's screen"
}
