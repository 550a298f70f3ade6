//! The run report of `bench --json` (and of `replay --summary`): built from the same events
//! the dashboard sees, so a live run and its recording summarise alike.
//!
//! `builder` collects what a report needs from the events, `devices` turns it into the device
//! and host summaries, `series` holds the sampled metrics they read, `kinds` summarises each
//! kind of job and `kind_gaps` charges the devices' idle gaps to kinds.

mod builder;
mod devices;
pub mod effect;
mod kind_gaps;
mod kinds;
mod segments;
mod series;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_window;
mod window;

pub use builder::ReportBuilder;
pub use kinds::{kinds_tell, DEFAULT_KIND};
pub use segments::{Segment, SegmentChange, SegmentDevice};
pub use window::MIN_PROOFS;

use serde::Serialize;
use std::collections::BTreeMap;

use crate::Nanos;

/// Median and range of a set of values (a stage's seconds over the run's proofs).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Stat {
    /// The middle value; the mean of the two middle ones for an even count.
    pub median: f64,
    /// The least value (the fastest, for a stage's seconds).
    pub min: f64,
    /// The greatest value (the slowest, for a stage's seconds).
    pub max: f64,
}

impl Stat {
    /// The statistics of `values` (sorted in place); `None` when there are none.
    pub fn of(values: &mut [f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: values[0],
            max: values[n - 1],
        })
    }
}

/// One finished partition: a row of `proofs` in `bench --json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProofRow {
    /// When the proof was done, in seconds on the run's clock.
    pub done_at: f64,
    /// The job's id, as in its `JobEvent`s.
    pub job: u64,
    /// The partition of the job, from 0.
    pub partition: u32,
    /// The device id that proved it; empty when it failed before reaching one.
    pub device: String,
    /// Whether the proof was made and verified.
    pub verified: bool,
    /// Why it failed (at most 1 KiB kept); absent when verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stage seconds, and for a partition on a device `device_wall` (its first device operation's start
    /// to its last one's end: uploads, kernels, downloads) and `device_kernels` (the sum of its
    /// kernel spans).
    pub stages: BTreeMap<&'static str, f64>,
}

/// The run as a whole: counts, rates and each stage's statistics.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// Partitions finished, verified or failed.
    pub proofs: usize,
    /// Partitions whose proof verified.
    pub verified: usize,
    /// Partitions that failed (`proofs - verified`).
    pub failed: usize,
    /// The run's wall time (seconds), as its caller measured it.
    pub wall_seconds: f64,
    /// Verified proofs per hour over `wall_seconds` (0 when it is 0).
    pub proofs_per_hour: f64,
    /// Verified proofs per hour between the first verified proof and the last: the rate once
    /// the pipeline is full, without the time to the first proof (0 with fewer than 3).
    pub steady_proofs_per_hour: f64,
    /// Seconds per stage key (with `device_wall`, `device_kernels`) over the proofs that had it.
    pub stages: BTreeMap<&'static str, Stat>,
    /// The same per kind of job (`porep`, `window-post`, `synthetic`, …), where job events
    /// named their kinds (telemetry on; recordings of format 2); absent otherwise.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub kinds: BTreeMap<String, KindSummary>,
}

/// One kind of job over the run: what an operator mixing proofs asks of each.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KindSummary {
    /// Jobs of the kind that ended (verified, failed or cancelled).
    pub jobs: usize,
    /// Its partitions finished, verified or failed.
    pub proofs: usize,
    /// Its partitions whose proof verified.
    pub verified: usize,
    /// Its verified proofs per hour over the run's wall time.
    pub proofs_per_hour: f64,
    /// Seconds per stage key over its proofs, as `Summary::stages`.
    pub stages: BTreeMap<&'static str, Stat>,
    /// Seconds from a job's submission to its end, over its ended jobs: what a deadline
    /// (WinningPoSt's epoch) is measured against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<Stat>,
    /// Idle seconds per cause (the keys of `DeviceReport::gaps`) charged to the kind: each
    /// moment of a device's gap goes to the kind of the partition it computed next (see
    /// `kind_gaps`); the run's end gap belongs to no kind.
    pub gaps: BTreeMap<&'static str, f64>,
}

/// One device over the run's window: busy time, gaps by cause and the counters' view.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceReport {
    /// The device id (`gpu0`, `cpu0`).
    pub id: String,
    /// Merged compute spans over the wall time of the run.
    pub busy_ratio: f64,
    /// Merged compute spans from the device's first kernel to its last: the steady state,
    /// without the run's start (first synthesis, parameter upload) and end (last finalize).
    pub steady_busy_ratio: f64,
    /// Merged compute spans over the window (seconds).
    pub busy_seconds: f64,
    /// The rest of the wall time: the sum of the gaps.
    pub idle_seconds: f64,
    /// Partitions it finished, verified or failed.
    pub partitions: usize,
    /// Idle seconds per cause (every key of `GapCause::KEYS`), see `telemetry::gaps`.
    pub gaps: BTreeMap<&'static str, f64>,
    /// What lies behind the causes that have reasons, in seconds, see `telemetry::gaps::detail`.
    pub gap_detail: crate::gaps::GapDetail<f64>,
    /// What NVML said over the run, where it could be asked (GPUs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvml: Option<NvmlSummary>,
    /// Bytes the engine's copy accounting counted over the run, where it counts (GPUs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcie: Option<PcieSummary>,
    /// Checks of the device's timeline: kernels of one stream never overlap (a kernel group
    /// may contain its kernels), copies are on copy lanes.
    pub timeline: TimelineCheck,
}

/// NVML against the engine over one window: the span of NVML's utilisation samples inside
/// the run, so both sides count the same seconds. NVML's samples each describe the interval
/// that ends at their timestamp; the engine's figures are clipped to the same window.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct NvmlSummary {
    /// The window's length (seconds).
    pub window_seconds: f64,
    /// Mean utilisation (0..1) over the window.
    pub util_mean: f64,
    /// NVML utilisation samples seen for the device, the whole run's.
    pub samples: usize,
    /// The engine's merged compute spans over the window: comparable to `util_mean`.
    pub engine_busy_ratio: f64,
    /// Compute and copy spans merged: what NVML would report if copies counted as busy.
    pub engine_active_ratio: f64,
    /// Bytes the engine's copy accounting counted host-to-device over the window.
    pub engine_h2d_bytes: f64,
    /// Bytes the engine's copy accounting counted device-to-host over the window.
    pub engine_d2h_bytes: f64,
    /// Bytes out of the GPU by NVML's throughput counters over the window.
    pub pcie_tx_bytes: f64,
    /// Bytes into the GPU by NVML's throughput counters over the window.
    pub pcie_rx_bytes: f64,
    /// Bytes out of the GPU by Hopper's GPM metrics; `None` where the driver gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpm_pcie_tx_bytes: Option<f64>,
    /// Bytes into the GPU by Hopper's GPM metrics; `None` where the driver gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpm_pcie_rx_bytes: Option<f64>,
    /// Mean board power over the window (watts; 0 without power samples).
    pub power_mean_watts: f64,
    /// The most device memory NVML saw reserved, all processes, over the run (bytes).
    pub memory_used_max_bytes: f64,
}

/// The host over a run: how busy its cores and the engine's pools were and how hard its memory
/// was pressed (means of the samples inside the run; absent where telemetry was off).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct HostReport {
    /// Mean busy fraction over every core.
    pub cpu_busy_mean: f64,
    /// Busy fraction of each engine pool (`synthesis`, `prover`, `cpu0`, …).
    pub pools_busy_mean: BTreeMap<String, f64>,
    /// Mean DDR bandwidth pressure, 0 (idle) .. 1 (saturated).
    pub ddr_pressure_mean: f64,
    /// Highest DDR bandwidth pressure sampled (0..1).
    pub ddr_pressure_max: f64,
    /// Mean host memory bandwidth, read from counters or probed (bytes per second).
    pub ddr_bytes_per_second_mean: f64,
    /// Mean host memory traffic the engine accounts for itself (bytes per second).
    pub engine_bytes_per_second_mean: f64,
    /// The engine process's largest resident memory sampled during the run (bytes; 0 where
    /// the sampler could not read it). Samples are a second apart, so a shorter peak
    /// can be missed.
    pub process_rss_max_bytes: f64,
    /// Host samples inside the run that these means come from.
    pub samples: usize,
}

/// The engine's own PCIe byte counts over the run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PcieSummary {
    /// Bytes copied host-to-device, from the first `pcie.h2d.total` sample to the last.
    pub h2d_bytes: f64,
    /// Bytes copied device-to-host, from the first `pcie.d2h.total` sample to the last.
    pub d2h_bytes: f64,
    /// The sum of the bytes of the device's h2d spans, for comparison.
    pub h2d_span_bytes: u64,
    /// The sum of the bytes of the device's d2h spans, for comparison.
    pub d2h_span_bytes: u64,
}

/// Checks of a device's timeline; both counts are 0 for a sound one.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TimelineCheck {
    /// Pairs of compute spans on the device's compute lane that overlap without one
    /// containing the other.
    pub compute_overlaps: usize,
    /// Copy spans (h2d, d2h) found on the compute lane.
    pub copies_on_compute_lane: usize,
}

/// A configuration change as `bench --json`'s `config_events` lists it (strings clipped to 1 KiB).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConfigEventRow {
    /// When it was applied or refused (seconds since session start).
    pub t: f64,
    /// The `[engine]` field.
    pub key: String,
    /// The value before, as the config file writes it.
    pub from: String,
    /// The value asked for, as the config file writes it.
    pub to: String,
    /// `schedule`, `ui`, `api` or `config`.
    pub by: String,
    /// Whether the engine now runs with `to`.
    pub applied: bool,
    /// Why it was refused; absent when applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Length of the union of intervals, clipped to [from, to].
pub fn merged_length(spans: &[(Nanos, Nanos)], from: Nanos, to: Nanos) -> Nanos {
    let mut v: Vec<(Nanos, Nanos)> = spans
        .iter()
        .map(|&(s, e)| (s.max(from), e.min(to)))
        .filter(|(s, e)| e > s)
        .collect();
    v.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(Nanos, Nanos)> = None;
    for (s, e) in v {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

impl ReportBuilder {
    /// The advisor's verdict over [from, to]: the proofs finished in it, each device's gaps and
    /// the host's samples there, against `config` (the configuration in force). `jobs_in_flight`
    /// where the caller knows it, else the most jobs seen open at once.
    pub fn verdict(
        &self,
        from: Nanos,
        to: Nanos,
        config: &crate::config::EngineConfig,
        cores: usize,
        jobs_in_flight: Option<u64>,
    ) -> crate::advice::Verdict {
        use crate::advice::Verdict;
        let names = |a: Nanos, b: Nanos| format!("{}–{}", window::clock(a), window::clock(b));
        // Only the part with work: setup, a drained run and time before a recording are not
        // idle time a knob removes.
        let Some((from, to)) = self.work.trim(from, to) else {
            return Verdict {
                bottleneck: format!("no work in {}: nothing to judge", names(from, to)),
                advice: vec![],
                window: None,
            };
        };
        let window = Some((from as f64 / 1e9, to as f64 / 1e9));
        let proofs = self
            .proofs
            .iter()
            .filter(|p| p.t >= from && p.t <= to)
            .count();
        if proofs < MIN_PROOFS {
            return Verdict {
                bottleneck: format!(
                    "too few proofs to judge: {proofs} finished in {} ({MIN_PROOFS} needed)",
                    names(from, to)
                ),
                advice: vec![],
                window,
            };
        }
        // One attribution serves the summary's kinds and the devices.
        let gaps = self.gap_details(from, to);
        let summary = self.summary_inside(from, to, &gaps);
        let devices = self.device_reports(gaps, from, to);
        let host = self.host(from, to);
        let seen = self.most_jobs_in_flight();
        let mut v = crate::advice::advise(&crate::advice::Evidence {
            summary: &summary,
            devices: &devices,
            host: host.as_ref(),
            config,
            cores,
            jobs_in_flight: jobs_in_flight.or((seen > 0).then_some(seen)),
        });
        v.window = window;
        v
    }

    /// `start` with every applied change seen so far: the configuration in force at the end.
    pub fn config_in_force(
        &self,
        start: &crate::config::EngineConfig,
    ) -> crate::config::EngineConfig {
        let mut cfg = start.clone();
        for c in self.config.iter().filter(|c| c.applied) {
            // A value the engine applied is one `set` takes; a recording's odd one is skipped.
            let _ = cfg.set(&c.key, &c.to);
        }
        cfg
    }
}
