#!/usr/bin/env python3
"""Prints one table row per `provetop bench --json` file: proofs, throughput (over the run and,
in brackets, from the first proof to the last), the GPU region's stage medians (ms) and each
device's busy fraction."""
import json
import os
import sys

STAGES = ["synthesis", "abc_eval", "queue_wait", "lock_wait", "prep", "h2d", "device_wall", "device_kernels", "ntt_h", "msm_h", "msm_l",
          "msm_a", "msm_b_g1", "batch_add", "msm_b_g2", "verify"]

def row(path):
    try:
        d = json.load(open(path))
    except Exception as e:  # a failed run leaves an empty or partial file
        return f"| {path} | failed: {e} |"
    s = d["summary"]
    med = lambda k: s["stages"].get(k, {}).get("median")
    stages = " | ".join("-" if med(k) is None else f"{med(k) * 1e3:.1f}" for k in STAGES)
    busy = ", ".join(
        f"{x['id']} {x['busy_ratio'] * 100:.1f}%"
        + (f" (steady {x['steady_busy_ratio'] * 100:.1f}%)" if "steady_busy_ratio" in x else "")
        for x in d.get("devices", []))
    cfg = d["config"]
    label = f"{os.path.basename(path).removesuffix('.json')}: {d['workload']['label']} {cfg['lock']} w{cfg['gpu_workers_per_device']} pre={cfg['prestage']} db={cfg['msm_double_buffer']} g2={cfg.get('b_g2_on', '?')} sw={cfg.get('synthesis_workers', '?')} pc={cfg.get('precompiled', '-')} c={d['workload'].get('concurrency', '?')}"
    fc = d.get("filecoin")
    if fc:
        label += f" verify_seal {fc.get('verified')}/{fc.get('verified', 0) + fc.get('failed', 0)}"
    # Each device's three largest idle-gap causes, seconds.
    gaps = "; ".join(
        f"{x['id']} " + ", ".join(f"{c} {t:.1f}" for c, t in
                                  sorted(x.get("gaps", {}).items(), key=lambda ct: -ct[1])[:3])
        for x in d.get("devices", []))
    # The host: mean core busy, the synthesis pool's, DDR pressure (0 idle .. 1 saturated).
    h = d.get("host")
    host = "-" if not h else (f"cpu {100 * h['cpu_busy_mean']:.0f}%, synthesis "
                             f"{100 * h['pools_busy_mean'].get('synthesis', 0):.0f}%, "
                             f"ddr {h['ddr_pressure_mean']:.2f}")
    # Once the pipeline is full: from the first verified proof to the last (newer JSONs).
    steady = f" ({s['steady_proofs_per_hour']:.0f})" if s.get("steady_proofs_per_hour") else ""
    return f"| {label} | {s['verified']}/{s['proofs']} | {s['proofs_per_hour']:.0f}{steady} | {stages} | {busy} | {gaps} | {host} |"

print("| run | verified | proofs/h (steady) | " + " | ".join(STAGES) + " | busy | idle s (top causes) | host |")
print("|" + "---|" * (len(STAGES) + 6))
for p in sys.argv[1:]:
    print(row(p))
