#!/usr/bin/env bash
# Runs the benches a sweep file lists on the cuda backend, then prints their table.
# A sweep file has one bench a line, `name flags…` (`#` starts a comment); every line gets
# `--backend cuda --json`, and $SWEEP_FLAGS if set; leading `VAR=value` words are set in the
# bench's environment. JSON and stderr of each go to $OUT.
#
#   OUT=/tmp/sweep scripts/h200-sweep.sh .carry/provetop scripts/sweeps/k24-host.txt
set -uo pipefail
BIN=${1:?usage: h200-sweep.sh BINARY SWEEP_FILE}
FILE=${2:?usage: h200-sweep.sh BINARY SWEEP_FILE}
OUT=${OUT:-/tmp/provetop-sweep}
mkdir -p "$OUT"
runs=()
while read -r name flags; do
  case $name in '' | '#'*) continue ;; esac
  start=$SECONDS
  envs=()
  read -ra words <<<"$flags"
  while [[ ${words[0]:-} =~ ^[A-Z_]+= ]]; do envs+=("${words[0]}"); words=("${words[@]:1}"); done
  env "${envs[@]}" "$BIN" bench --backend cuda --json "${words[@]}" ${SWEEP_FLAGS:-} >"$OUT/$name.json" 2>"$OUT/$name.log"
  echo "$name: exit $? after $((SECONDS - start)) s ($flags)" >&2
  grep -E "error|panicked" "$OUT/$name.log" | tail -2 >&2
  runs+=("$OUT/$name.json")
done <"$FILE"
python3 "$(dirname "$0")/bench-table.py" "${runs[@]}"
