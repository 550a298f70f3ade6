#!/usr/bin/env bash
# A restructured or re-kerneled binary against the one before it, in one device call on one
# H200: `provetop check` of the new binary (every GPU result against the cpu backend), then
# 8MiB PoRep with no flags but --proofs and --c1, old and new alternating ($ROUNDS rounds, so a
# drift of the machine shows as a difference between rounds, not between binaries). The
# sector is sealed once here by the new binary; every proof is checked by verify_seal.
#
#   scripts/build-carry.sh                      # here: .carry/provetop (new)
#   xz -c <old build>/provetop >.carry/provetop-old.xz # built with PROVETOP_CUDA_ARCHS=90
#   OUT=$OUT scripts/h200-ab.sh                 # on the device; tables in $OUT/summary.md
set -uo pipefail
cd "$(dirname "$0")/.."
NEW=${NEW:-.carry/provetop} OLD=${OLD:-.carry/provetop-old}
# The old binary travels xz-compressed (two stripped binaries exceed a call's 64 MiB); xz keeps
# the archive's mode, so the execute bit is set here.
if [[ ! -x $OLD && -f $OLD.xz ]]; then xz -dkf "$OLD.xz" && chmod +x "$OLD"; fi
OUT=${OUT:-/tmp/provetop-ab} WORK=${WORK:-/tmp/provetop-ab-work}
PROOFS=${PROOFS:-300} ROUNDS=${ROUNDS:-2}
export XDG_CACHE_HOME=/tmp/provetop-cache XDG_STATE_HOME="$WORK/state"
mkdir -p "$OUT" "$WORK"
S="$WORK/summary.md"
: >"$S"
say() { echo "$*" | tee -a "$S" >&2; }
say "# Device call $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1); host: $(nproc) cores"
say "- new: $NEW at $(cat "$(dirname "$NEW")/COMMIT" 2>/dev/null); old: $OLD at $(cat "$(dirname "$OLD")/COMMIT-old" 2>/dev/null)"

if [[ " ${STEPS:-check porep} " == *" check "* ]]; then
  start=$SECONDS
  timeout 300 "$NEW" check --max-log2 22 >"$WORK/check.txt" 2>&1
  say "== check: exit $? after $((SECONDS - start)) s; $(grep -c '^PASS' "$WORK/check.txt") PASS"
  grep -v '^PASS' "$WORK/check.txt" | tail -6 >>"$S"
fi

if [[ " ${STEPS:-check porep} " == *" porep "* ]]; then
  sealed=$XDG_CACHE_HOME/provetop/porep/sealed/8MiB-seed0.c1.json
  start=$SECONDS
  timeout 300 "$NEW" bench --backend cuda --workload porep --sector-size 8MiB --proofs 1 \
    --json >"$WORK/seal.json" 2>"$WORK/seal.stderr"
  say "== seal (and 8MiB parameters): exit $? after $((SECONDS - start)) s"
  for round in $(seq "$ROUNDS"); do
    for side in old new; do
      bin=$OLD
      [[ $side == new ]] && bin=$NEW
      name="p8-$side-$round" start=$SECONDS
      timeout 240 "$bin" bench --backend cuda --workload porep --c1 "$sealed" --proofs "$PROOFS" \
        --json >"$WORK/$name.json" 2>"$WORK/$name.stderr"
      say "== $name: exit $? after $((SECONDS - start)) s"
    done
  done
  say ""
  say "## 8MiB PoRep, $PROOFS proofs, no flags"
  python3 scripts/bench-table.py "$WORK"/p8-*.json | tee -a "$S" >&2
fi

cp "$S" "$OUT/summary.md"
tar czf "$OUT/logs.tar.gz" -C "$WORK" --exclude='*.params' . 2>/dev/null
cat "$S"
