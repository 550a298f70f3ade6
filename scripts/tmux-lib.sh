# Sourced by the tests that drive provetop in tmux (tui-test.sh, attach-test.sh): installs what
# is missing, picks the binary, and makes a scratch folder with its own tmux server and XDG
# folders. Sets BIN, TMP, SOCK; `T` runs tmux on that server.

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
