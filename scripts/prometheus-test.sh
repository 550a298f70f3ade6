#!/usr/bin/env bash
# Checks the Prometheus alerting rules in deploy/prometheus/rules/ (`promtool check rules`) and
# runs their cases in deploy/prometheus/tests/ (`promtool test rules`). promtool comes with
# Debian's `prometheus` package, installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v promtool >/dev/null; then
    echo "== installing promtool (Debian's prometheus package)"
    if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update >/dev/null
    "${SUDO[@]}" apt-get install -y --no-install-recommends prometheus >/dev/null
fi
promtool check rules deploy/prometheus/rules/*.yml
promtool test rules deploy/prometheus/tests/*.yml
echo "ok: promtool passes the rules and their cases"
