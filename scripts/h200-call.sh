#!/usr/bin/env bash
# Several GPU measurements in one device call, tables last. STEPS names the parts, in order:
#   probe     scripts/nvml-probe.py: what NVML's utilisation and PCIe counters measure
#   alloc     scripts/h200-alloc.sh: system allocator vs jemalloc keeping vs purging pages
#   record    scripts/record-h200.sh: the example recording (its .ptrec comes back)
#   truth     scripts/telemetry-h200.sh at 2^$TRUTH (default 22), no overhead rounds
#   overhead  telemetry on/off interleaved at 2^$OVERHEAD (default 24), $OVERHEAD_ROUNDS rounds
#   check     provetop check --max-log2 22: every GPU result against the cpu backend
#   k24       scripts/h200.sh SIZES=24 LOCKS=24: 2^24 busy fraction and the strategy table
#   sweep     scripts/h200-sweep.sh over the benches the file $SWEEP lists
#   porep     `bench --workload porep` on the cuda backend: $POREP_INPUT (default
#             `--sector-size 512MiB`, sealed here; `--c1 .carry/8MiB-seed0.c1.json` carries a
#             sector sealed elsewhere), $POREP_PROOFS jobs (default 2; empty: none given),
#             $POREP_ARGS (default none: the
#             engine's defaults); several runs: POREP_RUNS="name:args;name:args"; each bench
#             under $WRAP if set (e.g. `python3 scripts/peak-rss.py`: its peak memory)
#   setup     synthetic 2^$SETUP_LOG2 (default 26; several sizes: "26 27") on one GPU with one
#             worker: the setup's time on the GPU (parameters generated here unless cached) and
#             each partition's GPU time (device_wall, device_kernels) and stages; $SETUP_PROOFS
#             proofs (default 3)
#   harness   scripts/cuda-bench.sh $HARNESS_ARGS (default --reps 5): every kernel check against
#             the host references and the kernel timings (MSM to 2^26, NTT to 2^27)
#   profile   scripts/profile-msm.sh: Nsight Compute over one harness MSM of 2^$PROFILE_LOG2
#             (default 22), both accumulation paths
# Each part runs under its own time limit (LIMIT_<part> seconds; part names are shell words) so one slow part cannot cost
# the others their results. Parameters are cached once for all parts. $OUT gets summary.md,
# logs.tar.gz and any recording (the device returns 8 files).
#
#   STEPS="probe alloc record truth" scripts/h200-call.sh
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.carry/provetop}
OUT=${OUT:-/tmp/provetop-call}
WORK=${WORK:-/tmp/provetop-call-work}
mkdir -p "$OUT" "$WORK"
export XDG_CACHE_HOME=/tmp/provetop-cache XDG_STATE_HOME="$WORK/state"
SUMMARY="$WORK/summary.md"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY" >&2; }

{
  echo "# Device call $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader | head -1)"
  echo "- host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
  echo "- binary: $BIN (built at $(cat "$(dirname "$BIN")/COMMIT" 2>/dev/null || echo "an unknown commit")); steps: ${STEPS:-}"
  echo
} >>"$SUMMARY"
"$BIN" devices >"$WORK/devices.txt" 2>&1

part() { # name, command...: runs under LIMIT_<name>, appends its stdout to the summary
  local name=$1; shift
  local limit_var="LIMIT_$name" start=$SECONDS
  say "== $name (limit ${!limit_var:-600} s)"
  timeout "${!limit_var:-600}" "$@" >"$WORK/$name.md" 2>"$WORK/$name.log"
  local rc=$?
  cat "$WORK/$name.md" >>"$SUMMARY"
  say "== $name: exit $rc after $((SECONDS - start)) s"
  echo >>"$SUMMARY"
}

for step in ${STEPS:-}; do
  case $step in
    probe) part probe python3 scripts/nvml-probe.py "${PROBE_SECONDS:-3}" ;;
    alloc) part alloc env BIN="$BIN" OUT="$WORK/alloc-out" WORK="$WORK/alloc" PROOFS="${ALLOC_PROOFS:-10}" \
      scripts/h200-alloc.sh ;;
    record)
      part record env SECONDS_="${RECORD_SECONDS:-150}" LOG2="${RECORD_LOG2:-22}" OUT="$WORK/record" BIN="$BIN" \
        scripts/record-h200.sh
      cp "$WORK"/record/*.ptrec "$OUT/" 2>/dev/null ;;
    truth) part truth env BIN="$BIN" OUT="$WORK/truth" LOG2="${TRUTH:-22}" PROOFS="${TRUTH_PROOFS:-10}" \
      SKIP_OVERHEAD=1 scripts/telemetry-h200.sh ;;
    overhead) part overhead env BIN="$BIN" OUT="$WORK/overhead" BACKEND=cuda LOG2="${OVERHEAD:-24}" \
      PROOFS="${OVERHEAD_PROOFS:-4}" ROUNDS="${OVERHEAD_ROUNDS:-3}" EXTRA_ARGS="${OVERHEAD_ARGS:-}" PARAMS_CACHE="$XDG_CACHE_HOME/provetop/params" \
      scripts/telemetry-overhead.sh ;;
    check) part check bash -c "'$BIN' check --max-log2 ${CHECK_LOG2:-22} >'$WORK/check.txt' 2>&1; rc=\$?; \
      grep -v '^PASS' '$WORK/check.txt' | tail -8; echo \"PASS lines: \$(grep -c '^PASS' '$WORK/check.txt')\"; exit \$rc" ;;
    sweep) part sweep env OUT="$WORK/sweep" scripts/h200-sweep.sh "$BIN" "${SWEEP:?SWEEP names a sweep file}" ;;
    k24) part k24 env OUT="$WORK/k24" SIZES=24 LOCKS=24 scripts/h200.sh "$BIN" ;;
    porep)
      IFS=';' read -ra runs <<<"${POREP_RUNS:-porep:${POREP_ARGS:-}}"
      proofs=${POREP_PROOFS-2}
      for run in "${runs[@]}"; do
        name=${run%%:*} extra=${run#*:}
        part "$name" bash -c "${WRAP:-} '$BIN' bench --backend cuda --workload porep ${POREP_INPUT:---sector-size 512MiB} \
          ${proofs:+--proofs $proofs} $extra --json >'$WORK/$name.json' 2>'$WORK/$name.stderr'; rc=\$?; \
          tail -5 '$WORK/$name.stderr'; python3 scripts/bench-table.py '$WORK/$name.json'; exit \$rc"
      done ;;
    setup) for lg in ${SETUP_LOG2:-26}; do
      part "setup$lg" bash -c "'$BIN' bench --backend cuda --log2-constraints $lg --devices 0 \
      --gpu-workers-per-device 1 --concurrency 1 --b-g2-on gpu --proofs ${SETUP_PROOFS:-3} \
      --json >'$WORK/setup-$lg.json' 2>'$WORK/setup-$lg.stderr'; rc=\$?; tail -4 '$WORK/setup-$lg.stderr'; \
      grep -h 'setup' '$XDG_STATE_HOME'/provetop/provetop.log.* | grep '2^$lg rows' | tail -6; \
      python3 scripts/setup-table.py '$WORK/setup-$lg.json'; exit \$rc"
    done ;;
    harness) part harness env OUT="$WORK/harness" scripts/cuda-bench.sh ${HARNESS_ARGS:---reps 5} ;;
    profile) part profile env OUT="$WORK/profile" LG="${PROFILE_LOG2:-22}" scripts/profile-msm.sh ;;
    *) say "unknown step $step" ;;
  esac
done

cp "$SUMMARY" "$OUT/summary.md"
tar czf "$OUT/logs.tar.gz" -C "$WORK" --exclude='*.ptrec' --exclude='trace.json' --exclude='*.params' . 2>/dev/null
cat "$SUMMARY"
