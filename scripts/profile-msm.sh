#!/usr/bin/env bash
# Nsight Compute over one MSM of the CUDA harness on the device machine: every kernel's
# duration for the XYZZ and the batch-affine accumulation (durations.txt, summed by kernel),
# then the full sections of level 0's batch-affine kernels and of XYZZ's chunk kernel
# (full.txt, per-instruction counters in source-*.csv).
#
#   OUT=$OUT/profile LG=22 scripts/profile-msm.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/profile-msm}
LG=${LG:-22}
H=${H:-.carry/cuda-bench/pt_harness}
mkdir -p "$OUT"
NCU=(ncu --clock-control none)

for path in 0 1; do
  "${NCU[@]}" --metrics gpu__time_duration.sum --csv \
    "$H" --vectors cuda/harness/vectors --profile-msm "$LG" --msm-affine $path --msm-shifted 0 \
    >"$OUT/durations-$path.csv" 2>"$OUT/durations-$path.log"
  echo "ncu durations, path $path: exit $?" >&2
done
python3 - "$OUT"/durations-0.csv "$OUT"/durations-1.csv <<'EOF' | tee "$OUT/durations.txt"
import csv, sys, collections
for f in sys.argv[1:]:
    rows = [r for r in csv.reader(l for l in open(f) if l.startswith('"'))]
    head, rows = rows[0], rows[1:]
    k, v = head.index("Kernel Name"), head.index("Metric Value")
    unit = head.index("Metric Unit")
    tot, cnt = collections.defaultdict(float), collections.Counter()
    for r in rows:
        scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0}[r[unit]]
        name = r[k].split("(")[0]
        tot[name] += float(r[v].replace(",", "")) * scale
        cnt[name] += 1
    print(f"== {f}: {sum(tot.values()):.3f} ms in {sum(cnt.values())} launches")
    for name, ms in sorted(tot.items(), key=lambda x: -x[1]):
        print(f"{name:32s} {cnt[name]:5d} launches {ms:10.3f} ms")
EOF

# full sections: level 0's fwd and bwd of the batch-affine path, the XYZZ chunk kernel
for spec in "1 ^pt_msm_aff_(fwd|bwd)$ 2" "0 ^pt_msm_chunks$ 1"; do
  read -r path re count <<<"$spec"
  "${NCU[@]}" --set full -k "regex:$re" --launch-count "$count" -f -o "$OUT/full-$path" \
    "$H" --vectors cuda/harness/vectors --profile-msm "$LG" --msm-affine "$path" --msm-shifted 0 \
    >"$OUT/full-$path.log" 2>&1
  echo "ncu full, path $path: exit $?" >&2
  ncu --import "$OUT/full-$path.ncu-rep" --page details >>"$OUT/full.txt" 2>&1
  ncu --import "$OUT/full-$path.ncu-rep" --page source --csv --print-source sass >"$OUT/source-$path.csv" 2>/dev/null
done
grep -E "^  pt_|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Executed Ipc A|No Eligible|Local Memory" \
  "$OUT/full.txt" | head -120
