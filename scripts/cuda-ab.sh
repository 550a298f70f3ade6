#!/usr/bin/env bash
# Old and new CUDA kernels side by side in one device call (issue 40): builds the harness's
# field and NTT parts of each variant (nvcc, sm_90, all variants in parallel), runs every
# check of each (known answers, host reference), then the timings (medians of --reps, 5 by
# default), and prints one table last: a row a timing, a column a variant.
#   OUT=DIR scripts/cuda-ab.sh NAME=CUDA_DIR[:NVCC_FLAGS] ... [-- HARNESS_OPTIONS]
#   e.g. scripts/cuda-ab.sh old=../old/cuda new=cuda notrick=cuda:-DPT_FR_TRICK=0 -- --ntt-max 27
# A variant named twice (old ... old2=same dir) shows the run-to-run spread; each column's
# parenthesis is its time over the first variant's.
# Exit: 0 all checks passed, 1 a check failed, 2 bad usage or a build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/cuda-ab-out}
NVCC=${NVCC:-nvcc}
BUILD=${BUILD:-/tmp/cuda-ab-build}
mkdir -p "$OUT" "$BUILD"
specs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do specs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#specs[@]} -gt 0 ] || { echo "usage: scripts/cuda-ab.sh NAME=CUDA_DIR[:NVCC_FLAGS] ... [-- HARNESS_OPTIONS]" >&2; exit 2; }
command -v "$NVCC" >/dev/null || { echo "cuda-ab: nvcc not found (set NVCC)" >&2; exit 2; }
names=()
for s in "${specs[@]}"; do
    name=${s%%=*} rest=${s#*=}
    dir=${rest%%:*} flags=""
    [ "$rest" != "$dir" ] && flags=${rest#*:}
    if [ "$name" = "$s" ] || ! [[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || [ ! -f "$dir/harness/h_main.cu" ]; then
        echo "cuda-ab: bad variant '$s' (NAME=CUDA_DIR[:FLAGS], CUDA_DIR holding harness/h_main.cu)" >&2
        exit 2
    fi
    names+=("$name")
    mkdir -p "$BUILD/$name"
    echo "$dir $flags" >"$BUILD/$name/spec"
done
{
    date -u +"date: %Y-%m-%dT%H:%M:%SZ"
    echo "commit: ${PT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv 2>&1
    echo "host cores: $(nproc)"
    "$NVCC" --version | tail -1
    for n in "${names[@]}"; do echo "variant $n: $(cat "$BUILD/$n/spec")"; done
} 2>&1 | tee "$OUT/env.txt"

# every translation unit of every variant at once (the stub stands in for the MSM, G2 and
# abc parts, which these builds leave out)
t0=$(date +%s)
pids=()
for n in "${names[@]}"; do
    read -r dir flags <"$BUILD/$n/spec"
    for tu in "$dir/harness/h_main.cu" "$dir/harness/h_field.cu" "$dir/harness/h_ntt.cu" cuda/harness/h_stub.cu; do
        "$NVCC" -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 $flags -Xptxas -v -c "$tu" \
            -o "$BUILD/$n/$(basename "$tu" .cu).o" >"$BUILD/$n/$(basename "$tu" .cu).ptxas.log" 2>&1 &
        pids+=($!)
    done
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
for n in "${names[@]}"; do
    cat "$BUILD/$n"/*.ptxas.log >"$OUT/$n-ptxas.log"
    grep -A2 "pt_ntt_pass\|tk_field_bench" "$BUILD/$n/h_ntt.ptxas.log" "$BUILD/$n/h_field.ptxas.log" |
        grep -E "Used|spill" | sed "s/^/$n: /" >>"$OUT/registers.txt"
done
[ $fail = 0 ] || { grep -h -i error "$BUILD"/*/*.ptxas.log | head -20; echo "cuda-ab: build failed" >&2; exit 2; }
for n in "${names[@]}"; do
    "$NVCC" -gencode arch=compute_90,code=sm_90 -L"$(dirname "$(command -v "$NVCC")")/../lib" \
        -o "$BUILD/$n/pt_harness" "$BUILD/$n"/h_*.o || { echo "cuda-ab: link of $n failed" >&2; exit 2; }
done
echo "build took $(($(date +%s) - t0)) s" | tee -a "$OUT/env.txt"

rc=0
for n in "${names[@]}"; do
    echo "== $n"
    "$BUILD/$n/pt_harness" --vectors cuda/harness/vectors --only field,ntt --reps 5 "$@" >"$OUT/$n.log" 2>&1
    r=$?
    grep -E "passed, .* failed" "$OUT/$n.log"
    grep "^\[FAIL\]" "$OUT/$n.log"
    [ $r = 0 ] || rc=1
done
python3 - "$OUT" "${names[@]}" <<'PY' | tee "$OUT/table.md"
import re, sys
out, names = sys.argv[1], sys.argv[2:]
rows, order = {}, []
for n in names:
    for line in open(f"{out}/{n}.log"):
        m = re.match(r"\[time\] (.*?): ([0-9.]+) ms", line)
        if m:
            if m.group(1) not in rows:
                rows[m.group(1)] = {}
                order.append(m.group(1))
            rows[m.group(1)][n] = float(m.group(2))
print(f"| timing (ms, median; × {names[0]}) | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for r in order:
    v = rows[r]
    base = v.get(names[0])
    cells = []
    for n in names:
        if n not in v:
            cells.append("—")
        elif n == names[0] or not base:
            cells.append(f"{v[n]:.3f}")
        else:
            cells.append(f"{v[n]:.3f} ({v[n] / base:.3f})")
    print(f"| {r} | " + " | ".join(cells) + " |")
PY
exit $rc
