//! NVML, per GPU: memory, utilisation, clocks, power, temperature, PCIe throughput and link,
//! and on Hopper the GPM metrics where the driver allows. Without a driver, `Nvml::init`
//! fails cleanly (the library is loaded at run time): the sampler logs once and stops.
//!
//! Devices are named `gpu<N>` by NVML index, which is the CUDA ordinal when
//! `CUDA_DEVICE_ORDER=PCI_BUS_ID`.

use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter, Sampling, TemperatureSensor};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::{Device, GpmSample, Nvml};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::Ctx;
use crate::telemetry::metrics;

const PERIOD: Duration = Duration::from_millis(500);
const GPM_PERIOD: Duration = Duration::from_secs(1);

/// Bytes per second one lane carries in each direction, by PCIe generation, after line
/// encoding (8b/10b to gen 2, 128b/130b from gen 3, FLIT from gen 6).
pub fn lane_bytes_per_second(generation: u32) -> Option<f64> {
    let gt = match generation {
        1 => 2.5e9 * 0.8,
        2 => 5.0e9 * 0.8,
        3 => 8.0e9 * 128.0 / 130.0,
        4 => 16.0e9 * 128.0 / 130.0,
        5 => 32.0e9 * 128.0 / 130.0,
        6 => 64.0e9 * 242.0 / 256.0,
        _ => return None,
    };
    Some(gt / 8.0)
}

/// The link's ceiling in one direction (bytes per second).
pub fn pcie_ceiling(generation: u32, width: u32) -> Option<f64> {
    lane_bytes_per_second(generation).map(|b| b * width as f64)
}

struct Gpu<'n> {
    id: String,
    dev: Device<'n>,
    gpm: Option<GpmSample<'n>>,
    gpm_ok: bool,
    /// The newest utilisation sample taken from the driver's buffer (µs, wall clock); `None`
    /// once the driver refuses `nvmlDeviceGetSamples` (then point reads instead).
    util_seen: Option<u64>,
}

pub(super) fn run(ctx: &Ctx, wanted: &[u32]) {
    let nvml = match Nvml::init() {
        Ok(n) => n,
        Err(e) => {
            tracing::info!("NVML not available ({e}); the GPU sampler is off");
            return;
        }
    };
    let count = match nvml.device_count() {
        Ok(n) => n,
        Err(e) => {
            tracing::info!("NVML: no device count ({e}); the GPU sampler is off");
            return;
        }
    };
    let mut gpus: Vec<Gpu> = (0..count)
        .filter(|i| wanted.is_empty() || wanted.contains(i))
        .filter_map(|i| match nvml.device_by_index(i) {
            Ok(dev) => Some(Gpu {
                id: format!("gpu{i}"),
                gpm_ok: matches!(dev.gpm_support(), Ok(true)),
                dev,
                gpm: None,
                util_seen: Some(0),
            }),
            Err(e) => {
                tracing::warn!("NVML: gpu{i}: {e}");
                None
            }
        })
        .collect();
    if gpus.is_empty() {
        tracing::info!("NVML: no GPU to watch; the GPU sampler is off");
        return;
    }
    let mut last_gpm = Instant::now() - GPM_PERIOD;
    loop {
        for g in &mut gpus {
            sample(ctx, g);
        }
        let stopping = !ctx.sleep(PERIOD);
        // On stop, one more of everything: NVML's windows then cover the run to its end.
        if stopping || last_gpm.elapsed() >= GPM_PERIOD {
            last_gpm = Instant::now();
            for g in &mut gpus {
                sample_gpm(ctx, &nvml, g);
            }
        }
        if stopping {
            for g in &mut gpus {
                sample(ctx, g);
            }
            return;
        }
    }
}

/// Every utilisation sample the driver took since the last call, each at its own time: the
/// driver averages over short windows (about 1/6 s), and reading one value every 500 ms
/// would see only some of them.
fn utilisation_samples(ctx: &Ctx, g: &mut Gpu) -> bool {
    let Some(seen) = g.util_seen else {
        return false;
    };
    let samples = match g.dev.samples(Sampling::GpuUtilization, seen) {
        Ok(s) => s,
        Err(e) => {
            tracing::info!(
                "NVML on {}: no utilisation samples ({e}); point reads instead",
                g.id
            );
            g.util_seen = None;
            return false;
        }
    };
    // Session time of a wall-clock timestamp in µs.
    let wall_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i128);
    let offset_ns = wall_us * 1000 - ctx.now() as i128;
    let mut newest = seen;
    for s in samples {
        let t = s.timestamp as i128 * 1000 - offset_ns;
        if s.timestamp <= seen || t < 0 {
            continue;
        }
        newest = newest.max(s.timestamp);
        let v = match s.value {
            SampleValue::U32(v) => v as f64,
            SampleValue::U64(v) => v as f64,
            SampleValue::I64(v) => v as f64,
            SampleValue::F64(v) => v,
        };
        ctx.emit_at(
            t as super::super::Nanos,
            metrics::GPU_UTIL,
            Some(&g.id),
            v / 100.0,
        );
    }
    g.util_seen = Some(newest);
    true
}

fn sample(ctx: &Ctx, g: &mut Gpu) {
    let from_samples = utilisation_samples(ctx, g);
    let dev = Some(g.id.as_str());
    let t = ctx.now();
    let d = &g.dev;
    if let Ok(m) = d.memory_info() {
        ctx.emit_at(t, metrics::VRAM_RESERVED, dev, m.used as f64);
        ctx.emit_at(t, metrics::VRAM_TOTAL, dev, m.total as f64);
    }
    if let Ok(u) = d.utilization_rates() {
        if !from_samples {
            ctx.emit_at(t, metrics::GPU_UTIL, dev, u.gpu as f64 / 100.0);
        }
        ctx.emit_at(t, metrics::GPU_MEM_UTIL, dev, u.memory as f64 / 100.0);
    }
    if let Ok(mhz) = d.clock_info(Clock::SM) {
        ctx.emit_at(t, metrics::GPU_SM_CLOCK, dev, mhz as f64 * 1e6);
    }
    if let Ok(mhz) = d.clock_info(Clock::Memory) {
        ctx.emit_at(t, metrics::GPU_MEM_CLOCK, dev, mhz as f64 * 1e6);
    }
    if let Ok(mw) = d.power_usage() {
        ctx.emit_at(t, metrics::GPU_POWER, dev, mw as f64 / 1e3);
    }
    if let Ok(c) = d.temperature(TemperatureSensor::Gpu) {
        ctx.emit_at(t, metrics::GPU_TEMP, dev, c as f64);
    }
    // NVML reports KB/s over a short window; TX leaves the GPU, RX enters it.
    if let Ok(kb) = d.pcie_throughput(PcieUtilCounter::Send) {
        ctx.emit_at(t, metrics::NVML_PCIE_TX, dev, kb as f64 * 1024.0);
    }
    if let Ok(kb) = d.pcie_throughput(PcieUtilCounter::Receive) {
        ctx.emit_at(t, metrics::NVML_PCIE_RX, dev, kb as f64 * 1024.0);
    }
    if let (Ok(gen), Ok(width)) = (d.current_pcie_link_gen(), d.current_pcie_link_width()) {
        ctx.emit_at(t, metrics::PCIE_LINK_GEN, dev, gen as f64);
        ctx.emit_at(t, metrics::PCIE_LINK_WIDTH, dev, width as f64);
        if let Some(c) = pcie_ceiling(gen, width) {
            ctx.emit_at(t, metrics::PCIE_CEILING, dev, c);
        }
    }
}

/// GPM metrics come from two samples; each call takes a new one and reports against the last.
fn sample_gpm<'n>(ctx: &Ctx, nvml: &'n Nvml, g: &mut Gpu<'n>) {
    if !g.gpm_ok {
        return;
    }
    let next = match g.dev.gpm_sample() {
        Ok(s) => s,
        Err(e) => {
            tracing::info!("NVML GPM on {}: {e}; GPM metrics off", g.id);
            g.gpm_ok = false;
            return;
        }
    };
    let Some(prev) = g.gpm.replace(next) else {
        return;
    };
    let ids = [
        GpmMetricId::PcieTxPerSec,
        GpmMetricId::PcieRxPerSec,
        GpmMetricId::DramBwUtil,
        GpmMetricId::SmUtil,
        GpmMetricId::SmOccupancy,
    ];
    let cur = g.gpm.as_ref().expect("just stored");
    let results = match nvml_wrapper::gpm::gpm_metrics_get(nvml, &prev, cur, &ids) {
        Ok(r) => r,
        Err(e) => {
            tracing::info!("NVML GPM on {}: {e}; GPM metrics off", g.id);
            g.gpm_ok = false;
            return;
        }
    };
    let t = ctx.now();
    let dev = Some(g.id.as_str());
    for (id, r) in ids.iter().zip(results) {
        let Ok(r) = r else { continue };
        let (metric, value) = match id {
            // MiB/s
            GpmMetricId::PcieTxPerSec => (metrics::NVML_GPM_PCIE_TX, r.value * 1048576.0),
            GpmMetricId::PcieRxPerSec => (metrics::NVML_GPM_PCIE_RX, r.value * 1048576.0),
            // percent
            GpmMetricId::DramBwUtil => (metrics::GPU_DRAM_UTIL, r.value / 100.0),
            GpmMetricId::SmUtil => (metrics::GPU_SM_UTIL, r.value / 100.0),
            GpmMetricId::SmOccupancy => (metrics::GPU_SM_OCCUPANCY, r.value / 100.0),
            _ => continue,
        };
        ctx.emit_at(t, metric, dev, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_ceilings() {
        // Gen 5 x16: 63 GB/s per direction; gen 4 x16: 31.5 GB/s; gen 3 x8: 7.9 GB/s.
        let gb = |g, w| pcie_ceiling(g, w).unwrap() / 1e9;
        assert!((gb(5, 16) - 63.0).abs() < 0.1);
        assert!((gb(4, 16) - 31.5).abs() < 0.1);
        assert!((gb(3, 8) - 7.88).abs() < 0.01);
        assert!(pcie_ceiling(0, 16).is_none());
    }
}
