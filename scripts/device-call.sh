# Sourced by the device scripts (h200-serve.sh, h200-kinds.sh): the call's summary file $S under
# $OUT with the GPU and the binary's commit at its head, `say` (a line to it and stderr) and
# `step NAME LIMIT COMMAND…` (the command under a time limit, stdout and stderr in $W/NAME.out
# and .log, its exit and time said). Needs BIN, OUT and W set.
mkdir -p "$OUT" "$W"
S="$OUT/summary.md"
: >"$S"
say() { echo "$*" | tee -a "$S" >&2; }
say "# Device call $(date -u +%Y-%m-%dT%H:%M:%SZ), binary at $(cat "$(dirname "$BIN")/COMMIT" 2>/dev/null)"
say "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1); host: $(nproc) cores"

step() { # name, limit, command...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$W/$name.out" 2>"$W/$name.log"
  local rc=$?
  say "== $name: exit $rc after $((SECONDS - start)) s"
  return $rc
}
