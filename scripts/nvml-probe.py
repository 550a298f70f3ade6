#!/usr/bin/env python3
"""What NVML's utilisation and PCIe counters measure, against known GPU activity.

Runs phases of a few seconds each on GPU 0 — idle, host-to-device copies only, device-to-host
copies only, a spinning kernel at several duty cycles and periods — and for each compares the
busy fraction measured with CUDA events against:
  - every utilisation sample the driver kept (nvmlDeviceGetSamples), time-weighted over the
    phase, with the samples' spacing (NVML's own window);
  - nvmlDeviceGetUtilizationRates read every 50 ms;
  - PCIe bytes from nvmlDeviceGetPcieThroughput read every 20 ms, against the bytes copied.
Answers: do copies count as utilisation, how long is a sample's window, how close is NVML at
low duty cycles. Needs cupy and pynvml (the device image has both). Prints a markdown table.

  python3 scripts/nvml-probe.py [seconds per phase, default 3]
"""
import sys
import threading
import time

import cupy as cp
import pynvml as nv

PHASE = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0

nv.nvmlInit()
h = nv.nvmlDeviceGetHandleByIndex(0)

spin = cp.RawKernel(
    r"""
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}
""",
    "spin",
)
stream = cp.cuda.Stream(non_blocking=True)
spin((1,), (32,), (cp.int64(1000),), stream=stream)
stream.synchronize()


def cycles_for(ms):
    """Spin cycles that take `ms` at the current clock, calibrated with events."""
    n = 10_000_000
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    e0.record(stream)
    spin((1,), (32,), (cp.int64(n),), stream=stream)
    e1.record(stream)
    e1.synchronize()
    per_ms = n / cp.cuda.get_elapsed_time(e0, e1)
    return int(per_ms * ms)


# Background readers: point utilisation every 50 ms, PCIe throughput every 20 ms.
points, pcie = [], []
stop = threading.Event()


def reader():
    last_pcie = 0.0
    while not stop.is_set():
        t = time.time()
        u = nv.nvmlDeviceGetUtilizationRates(h)
        points.append((t, u.gpu))
        if t - last_pcie >= 0.02:
            tx = nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_TX_BYTES)
            rx = nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_RX_BYTES)
            pcie.append((t, tx * 1024.0, rx * 1024.0))
            last_pcie = t
        time.sleep(0.01)


th = threading.Thread(target=reader, daemon=True)
th.start()

host = cp.cuda.alloc_pinned_memory(1 << 30)
dev = cp.cuda.alloc(1 << 30)
CHUNK = 256 << 20


def phase_copy(direction):
    """Copies 256 MiB pieces back to back; returns (busy seconds, bytes)."""
    busy, nbytes = 0.0, 0
    end = time.time() + PHASE
    while time.time() < end:
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(stream)
        for _ in range(4):
            if direction == "h2d":
                cp.cuda.runtime.memcpyAsync(dev.ptr, host.ptr, CHUNK, 1, stream.ptr)
            else:
                cp.cuda.runtime.memcpyAsync(host.ptr, dev.ptr, CHUNK, 2, stream.ptr)
            nbytes += CHUNK
        e1.record(stream)
        e1.synchronize()
        busy += cp.cuda.get_elapsed_time(e0, e1) / 1e3
    return busy, nbytes


def phase_duty(on_ms, period_ms):
    cyc = cycles_for(on_ms)
    busy = 0.0
    end = time.time() + PHASE
    while time.time() < end:
        t0 = time.time()
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(stream)
        spin((1,), (32,), (cp.int64(cyc),), stream=stream)
        e1.record(stream)
        e1.synchronize()
        busy += cp.cuda.get_elapsed_time(e0, e1) / 1e3
        rest = period_ms / 1e3 - (time.time() - t0)
        if rest > 0:
            time.sleep(rest)
    return busy, 0


def phase_idle():
    time.sleep(PHASE)
    return 0.0, 0


phases = [
    ("idle", phase_idle),
    ("h2d copies only", lambda: phase_copy("h2d")),
    ("d2h copies only", lambda: phase_copy("d2h")),
    ("kernel 10% (10 of 100 ms)", lambda: phase_duty(10, 100)),
    ("kernel 25% (25 of 100 ms)", lambda: phase_duty(25, 100)),
    ("kernel 50% (50 of 100 ms)", lambda: phase_duty(50, 100)),
    ("kernel 20% (2 of 10 ms)", lambda: phase_duty(2, 10)),
    ("kernel 25% (250 of 1000 ms)", lambda: phase_duty(250, 1000)),
    ("kernel 100%", lambda: phase_duty(100, 100)),
]

last_ts = 0
rows = []
all_samples = []
for name, f in phases:
    time.sleep(0.5)  # let the previous phase's windows close
    t0 = time.time()
    busy, nbytes = f()
    t1 = time.time()
    time.sleep(1.2)  # samples for the phase's last window arrive late
    try:
        _, samples = nv.nvmlDeviceGetSamples(h, nv.NVML_GPU_UTILIZATION_SAMPLES, last_ts)
    except nv.NVMLError as e:
        samples = []
        print(f"nvmlDeviceGetSamples: {e}", file=sys.stderr)
    ss = sorted((s.timeStamp / 1e6, s.sampleValue.uiVal) for s in samples)
    if ss:
        last_ts = int(ss[-1][0] * 1e6)
    all_samples += ss
    # A sample describes the window that ends at its timestamp: weight by the gap to the
    # previous one, counting the part inside [t0, t1].
    num = den = 0.0
    prev = None
    gaps = []
    for t, v in all_samples:
        if prev is not None:
            a, b = max(prev, t0), min(t, t1)
            if b > a:
                num += v * (b - a)
                den += b - a
            gaps.append(t - prev)
        prev = t
    inphase = [g for (t, _), g in zip(all_samples[1:], gaps) if t0 <= t <= t1]
    window = sorted(inphase)[len(inphase) // 2] if inphase else float("nan")
    pts = [v for t, v in points if t0 + 0.2 <= t <= t1]
    pc = [(t, tx, rx) for t, tx, rx in pcie if t0 <= t <= t1]
    rx = sum(r for _, _, r in pc) / len(pc) * (t1 - t0) if pc else 0.0
    tx = sum(x for _, x, _ in pc) / len(pc) * (t1 - t0) if pc else 0.0
    rows.append(
        (name, 100 * busy / (t1 - t0), num / den if den else float("nan"), window * 1e3,
         sum(pts) / len(pts) if pts else float("nan"), nbytes / 1e9, rx / 1e9, tx / 1e9)
    )
stop.set()
th.join()

print(f"# NVML probe on {nv.nvmlDeviceGetName(h)}, driver {nv.nvmlSystemGetDriverVersion()}\n")
print(f"{PHASE:.0f} s a phase; busy = kernel or copy time by CUDA events over the phase.\n")
print("| phase | busy (events) | NVML samples mean | sample spacing ms | NVML point reads mean "
      "| bytes copied GB | NVML rx GB | NVML tx GB |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]:.1f} % | {r[2]:.1f} % | {r[3]:.0f} | {r[4]:.1f} % | {r[5]:.2f} | "
          f"{r[6]:.2f} | {r[7]:.2f} |")
