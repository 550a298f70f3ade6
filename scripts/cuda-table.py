#!/usr/bin/env python3
"""Issue 4's figures from one `scripts/h200-cuda.sh` call, against sppark 0.1.16 on the same
H200 (the bar), the targets and the physical floors (docs/floors.md: multiplies over the rates
measured on the card).

    scripts/cuda-table.py WORK_DIR      (check.txt, harness/harness.log, setup-26.json, setup-27.json)
"""
import json
import math
import os
import re
import sys

# Fp / Fr multiplies per second on the H200 (Fr: 5.24e10 before issue 40 fused its reduction rows)
FP_RATE, FR_RATE = 2.73e10, 5.92e10
SPPARK = {("MSM", 20): 22, ("MSM", 24): 155, ("MSM", 26): 559, ("NTT", 24): 4.6, ("NTT", 27): 43}
TARGET = {("MSM", 20): 12, ("MSM", 24): 80, ("MSM", 26): 300, ("NTT", 24): 3.5, ("NTT", 27): 32,
          ("partition", 26): 400, ("partition", 27): 700}
# A partition's floor with XYZZ arithmetic (docs/floors.md, H over shifted bases where they fit)
PARTITION_FLOOR = {26: 505, 27: 1102}


def msm_floor(lg, c, shifted, affine):
    """N·W additions into buckets (XYZZ mixed: 10 Fp multiplies; batch-affine: ~6.9 with its
    share of the inversions) and the running sums (2 additions of 14 a bucket)."""
    w = math.ceil(255 / c)
    sums = 2 * 2 ** (c - 1) * (1 if shifted else w)
    return (2 ** lg * w * (6.9 if affine else 10) + sums * 14) / FP_RATE * 1e3


def ntt_floor(lg):
    """One Fr multiply per butterfly after the first stage."""
    return (lg - 1) * 2 ** (lg - 1) / FR_RATE * 1e3


def main(work):
    rows = []
    log = os.path.join(work, "harness", "harness.log")
    text = open(log).read() if os.path.exists(log) else ""
    for m in re.finditer(r"^\[time\] MSM 2\^(\d+) \[(.*?)\]: ([\d.]+) ms .*?c=(\d+)", text, re.M):
        lg, path, ms, c = int(m[1]), m[2], float(m[3]), int(m[4])
        if ("MSM", lg) in SPPARK:
            shifted, affine = path.startswith("shifted"), "batch-affine" in path
            name = f"MSM 2^{lg}, {path}" + (" (opt-in)" if affine else "")
            rows.append((name, ms, SPPARK[("MSM", lg)], TARGET[("MSM", lg)], msm_floor(lg, c, shifted, affine)))
    for m in re.finditer(r"^\[time\] NTT 2\^(\d+) forward: ([\d.]+) ms", text, re.M):
        lg, ms = int(m[1]), float(m[2])
        if ("NTT", lg) in SPPARK:
            rows.append((f"NTT 2^{lg} forward", ms, SPPARK[("NTT", lg)], TARGET[("NTT", lg)], ntt_floor(lg)))
    for lg in (26, 27):
        path = os.path.join(work, f"setup-{lg}.json")
        if not os.path.exists(path):
            continue
        st = json.load(open(path))["summary"]["stages"]
        for key in ("device_wall", "device_kernels"):
            if key in st:
                rows.append((f"partition 2^{lg} {key}", st[key]["median"] * 1e3, None,
                             TARGET[("partition", lg)], PARTITION_FLOOR[lg]))
    print("| figure | measured ms | sppark ms | target ms | floor ms | beats sppark | target |")
    print("|---|---|---|---|---|---|---|")
    for name, ms, bar, target, floor in rows:
        beats = "-" if bar is None else ("yes" if ms < bar else "**no**")
        met = "met" if ms <= target else "not met"
        sp = "-" if bar is None else f"{bar:g}"
        print(f"| {name} | {ms:.2f} | {sp} | {target:g} | {floor:.1f} | {beats} | {met} |")
    check = os.path.join(work, "check.txt")
    if os.path.exists(check):
        lines = open(check).read().splitlines()
        print()
        for line in lines:
            if "GB/s" in line or re.match(r"check: \d+/\d+ passed", line):
                print(f"- {line.strip()}")
    m = re.search(r"^(\d+) passed, (\d+) failed", text, re.M)
    if m:
        print(f"- harness: {m[1]} checks passed, {m[2]} failed")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/provetop-call-work")
