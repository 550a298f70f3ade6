//! Host DDR bandwidth. Two kinds of source, and the engine's own byte accounting beside them:
//!
//! - Hardware counters, where the machine exposes them: Intel uncore IMC (`uncore_imc_N`,
//!   its `cas_count_read`/`cas_count_write` events), AMD UMC (`amd_umc_N`, CAS commands for
//!   reads and writes), both through `perf_event_open` on the CPUs of the PMU's cpumask, or
//!   resctrl memory bandwidth monitoring (`mbm_total_bytes`). The source is named in
//!   `host.ddr.source.<name>`. Opening uncore events needs `perf_event_paranoid` ≤ 0 or
//!   CAP_PERFMON; without either, or in a VM (no uncore PMU), the counters are absent.
//! - A software probe, always: one thread streams a small buffer (8 MiB) once a period and
//!   measures the bandwidth it achieves, in its own CPU time (so being descheduled on a busy
//!   host does not read as memory pressure). Between bursts the buffer is flushed from the
//!   caches (x86-64), so every burst reads DRAM whatever the LLC size; elsewhere the probe
//!   walks a buffer four times the LLC. Its idle calibration (bursts at start, raised later
//!   when the median of recent bursts beats it) against the bandwidth it achieves now gives
//!   `host.ddr.pressure` (0 idle … 1 starved). Its own cost is published: the fraction of
//!   one core it uses (`host.ddr.probe.duty`) and the bytes per second it reads
//!   (`host.ddr.probe.bytes`).
//!
//! `host.ddr` is the counters' total bandwidth where they exist, else what the probe
//! achieves. `host.engine_bytes` is the host memory traffic the engine accounts for itself.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Ctx;
use crate::telemetry::accounting::Accounting;
use crate::telemetry::metrics;

mod counters;
mod probe;

use counters::*;
pub use counters::{find_pmu_events, PmuEvent};
pub use probe::{Burst, Pressure, Probe};

const PERIOD: Duration = Duration::from_secs(1);
const BURST_BYTES: usize = 8 << 20;
const CALIBRATION_BURSTS: usize = 5;

pub(super) fn run(ctx: &Ctx, acc: Option<&'static Accounting>) {
    let mut counters = open_counters();
    let source = counters.as_ref().map_or("probe", |c| c.0);
    let source_metric = format!("{}{source}", metrics::HOST_DDR_SOURCE_PREFIX);
    tracing::info!("host DDR bandwidth from: {source}");
    let mut probe = Probe::new(BURST_BYTES);
    let mut pressure = Pressure::new(probe.calibrate(CALIBRATION_BURSTS));
    let mut last_counter = counters.as_mut().and_then(|c| c.1.total_bytes());
    let mut last_engine = acc.map_or(0, engine_bytes);
    let mut last_t = ctx.now();
    while ctx.sleep(PERIOD) {
        let b = probe.burst();
        let t = ctx.now();
        let dt = (t - last_t) as f64 / 1e9;
        let achieved = b.bytes_per_second();
        let p = pressure.observe(achieved);
        let counted = match (counters.as_mut(), last_counter) {
            (Some(c), Some(before)) => c.1.total_bytes().map(|now| {
                last_counter = Some(now);
                (now - before).max(0.0) / dt
            }),
            _ => None,
        };
        ctx.emit_at(t, &source_metric, None, 1.0);
        ctx.emit_at(t, metrics::HOST_DDR, None, counted.unwrap_or(achieved));
        ctx.emit_at(t, metrics::HOST_DDR_PRESSURE, None, p);
        ctx.emit_at(t, metrics::HOST_DDR_IDLE, None, pressure.idle());
        ctx.emit_at(t, metrics::HOST_DDR_PROBE_ACHIEVED, None, achieved);
        ctx.emit_at(
            t,
            metrics::HOST_DDR_PROBE_DUTY,
            None,
            b.cost_ns as f64 / 1e9 / dt,
        );
        ctx.emit_at(t, metrics::HOST_DDR_PROBE_BYTES, None, b.bytes as f64 / dt);
        let engine = acc.map_or(0, engine_bytes);
        ctx.emit_at(
            t,
            metrics::HOST_ENGINE_BYTES,
            None,
            engine.saturating_sub(last_engine) as f64 / dt,
        );
        ctx.emit_at(t, metrics::HOST_ENGINE_BYTES_TOTAL, None, engine as f64);
        (last_engine, last_t) = (engine, t);
    }
}

fn engine_bytes(acc: &Accounting) -> u64 {
    acc.snapshot().iter().map(|s| s.host_bytes()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_fields_encode_into_config_words() {
        assert_eq!(parse_format("config:0-7"), Some((0, vec![(0, 7)])));
        assert_eq!(
            parse_format("config1:0-3,32-35\n"),
            Some((1, vec![(0, 3), (32, 35)]))
        );
        assert_eq!(parse_format("config:8"), Some((0, vec![(8, 8)])));
        assert_eq!(parse_format("bogus:1"), None);
        assert_eq!(encode(0x04, &[(0, 7)]), 0x04);
        assert_eq!(encode(0x03, &[(8, 15)]), 0x0300);
        assert_eq!(encode(0xab, &[(0, 3), (32, 35)]), 0xb | (0xa << 32));
        assert_eq!(
            parse_terms("event=0x04,umask=0x03\n"),
            Some(vec![("event".into(), 4), ("umask".into(), 3)])
        );
        assert_eq!(parse_cpus("0,56\n"), vec![0, 56]);
        assert_eq!(parse_cpus("0-2"), vec![0, 1, 2]);
    }

    fn write(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    #[test]
    fn intel_imc_events_are_found_in_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        let imc = dir.path().join("uncore_imc_0");
        write(&imc.join("type"), "14\n");
        write(&imc.join("cpumask"), "0,56\n");
        write(&imc.join("format/event"), "config:0-7\n");
        write(&imc.join("format/umask"), "config:8-15\n");
        write(
            &imc.join("events/cas_count_read"),
            "event=0x04,umask=0x03\n",
        );
        write(&imc.join("events/cas_count_read.scale"), "6.103515625e-5\n");
        write(&imc.join("events/cas_count_read.unit"), "MiB\n");
        write(
            &imc.join("events/cas_count_write"),
            "event=0x04,umask=0x0c\n",
        );
        write(&dir.path().join("software/type"), "1\n");
        let (name, events) = find_pmu_events(dir.path()).unwrap();
        assert_eq!(name, "intel_imc");
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].pmu_type, 14);
        assert_eq!(events[0].config[0], 0x0304);
        assert_eq!(events[1].config[0], 0x0c04);
        assert_eq!(events[0].bytes_per_count, 64.0);
        assert_eq!(events[0].cpus, vec![0, 56]);
    }

    #[test]
    fn amd_umc_events_are_built_from_the_format() {
        let dir = tempfile::tempdir().unwrap();
        let umc = dir.path().join("amd_umc_3");
        write(&umc.join("type"), "22\n");
        write(&umc.join("cpumask"), "0\n");
        write(&umc.join("format/event"), "config:0-7\n");
        write(&umc.join("format/rdwrmask"), "config:8-9\n");
        let (name, events) = find_pmu_events(dir.path()).unwrap();
        assert_eq!(name, "amd_umc");
        assert_eq!(events[0].config[0], 0x10a);
        assert_eq!(events[1].config[0], 0x20a);
    }

    #[test]
    fn no_pmu_means_no_counters() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("software/type"), "1\n");
        write(&dir.path().join("uncore_imc_free_running_0/type"), "20\n");
        assert!(find_pmu_events(dir.path()).is_none());
        assert!(find_pmu_events(&dir.path().join("missing")).is_none());
    }

    #[test]
    fn the_probe_streams_and_pressure_follows() {
        let mut p = Probe::new(1 << 20);
        let b = p.burst();
        assert_eq!(b.bytes, 1 << 20);
        assert!(b.read_ns > 0 && b.cost_ns >= b.read_ns);
        let bw = b.bytes_per_second();
        assert!(bw > 1e8, "a streaming read of at least 100 MB/s, got {bw}");
        let mut pr = Pressure::new(10e9);
        assert_eq!(pr.observe(10e9), 0.0);
        assert!((pr.observe(5e9) - 0.5).abs() < 1e-9);
        assert_eq!(pr.observe(20e9), 0.0);
        // Five bursts faster than the calibration raise it to their median.
        for _ in 0..5 {
            pr.observe(12e9);
        }
        assert_eq!(pr.idle(), 12e9);
    }
}
