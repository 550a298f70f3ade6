#!/usr/bin/env python3
"""Prints, from one `provetop bench --json` file, where its parameters came from and how long
they took, then each partition's GPU time: device_wall (first device operation to last),
device_kernels (sum of kernel spans) and the GPU stages, in ms, and their medians."""
import json
import sys

STAGES = ["device_wall", "device_kernels", "h2d", "ntt_h", "msm_h", "msm_l", "msm_a", "msm_b_g1",
          "batch_add", "msm_b_g2", "d2h"]

d = json.load(open(sys.argv[1]))
p = d["workload"].get("params", {})
print(f"- workload {d['workload']['label']}: params {p.get('source')} in {p.get('seconds', 0):.1f} s"
      f" (path {p.get('path')})")
s = d["summary"]
print(f"- proofs {s['verified']}/{s['proofs']} verified")
print()
print("| partition | " + " | ".join(STAGES) + " |")
print("|" + "---|" * (len(STAGES) + 1))
for r in d["proofs"]:
    cells = " | ".join(f"{r['stages'][k] * 1e3:.1f}" if k in r["stages"] else "-" for k in STAGES)
    print(f"| job {r['job']} part {r['partition']} | {cells} |")
med = lambda k: s["stages"].get(k, {}).get("median")
print("| **median** | " + " | ".join("-" if med(k) is None else f"**{med(k) * 1e3:.1f}**" for k in STAGES) + " |")
