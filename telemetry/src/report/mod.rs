//! The run report of `bench --json` (and of `replay --summary`): built from the same events
//! the dashboard sees, so a live run and its recording summarise alike.
//!
//! `builder` collects what a report needs from the events, `devices` turns it into the device
//! and host summaries, `series` holds the sampled metrics they read.

mod builder;
mod devices;
mod segments;
mod series;
#[cfg(test)]
mod tests;

pub use builder::ReportBuilder;
pub use segments::{Segment, SegmentChange, SegmentDevice};

use serde::Serialize;
use std::collections::BTreeMap;

use crate::Nanos;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Stat {
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

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProofRow {
    /// When the proof was done, in seconds on the run's clock.
    pub done_at: f64,
    pub job: u64,
    pub partition: u32,
    pub device: String,
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stage seconds, and for a partition on a device `device_wall` (its first device operation's start
    /// to its last one's end: uploads, kernels, downloads) and `device_kernels` (the sum of its
    /// kernel spans).
    pub stages: BTreeMap<&'static str, f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub proofs: usize,
    pub verified: usize,
    pub failed: usize,
    pub wall_seconds: f64,
    pub proofs_per_hour: f64,
    /// Verified proofs per hour between the first verified proof and the last: the rate once
    /// the pipeline is full, without the time to the first proof (0 with fewer than 3).
    pub steady_proofs_per_hour: f64,
    pub stages: BTreeMap<&'static str, Stat>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceReport {
    pub id: String,
    /// Merged compute spans over the wall time of the run.
    pub busy_ratio: f64,
    /// Merged compute spans from the device's first kernel to its last: the steady state,
    /// without the run's start (first synthesis, parameter upload) and end (last finalize).
    pub steady_busy_ratio: f64,
    pub busy_seconds: f64,
    /// The rest of the wall time: the sum of the gaps.
    pub idle_seconds: f64,
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
    pub window_seconds: f64,
    /// Mean utilisation (0..1) over the window.
    pub util_mean: f64,
    pub samples: usize,
    /// The engine's merged compute spans over the window: comparable to `util_mean`.
    pub engine_busy_ratio: f64,
    /// Compute and copy spans merged: what NVML would report if copies counted as busy.
    pub engine_active_ratio: f64,
    /// The engine's copy accounting over the window, by direction.
    pub engine_h2d_bytes: f64,
    pub engine_d2h_bytes: f64,
    /// PCIe bytes by NVML's throughput counters over the window (TX leaves the GPU).
    pub pcie_tx_bytes: f64,
    pub pcie_rx_bytes: f64,
    /// The same from Hopper's GPM metrics, where the driver allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpm_pcie_tx_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpm_pcie_rx_bytes: Option<f64>,
    pub power_mean_watts: f64,
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
    /// DDR bandwidth pressure, 0 (idle) .. 1 (saturated), and the bandwidth read or probed.
    pub ddr_pressure_mean: f64,
    pub ddr_pressure_max: f64,
    pub ddr_bytes_per_second_mean: f64,
    /// Host memory traffic the engine accounts for itself.
    pub engine_bytes_per_second_mean: f64,
    pub samples: usize,
}

/// The engine's own PCIe byte counts over the run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PcieSummary {
    pub h2d_bytes: f64,
    pub d2h_bytes: f64,
    /// The sum of the bytes of the h2d and d2h spans, for comparison.
    pub h2d_span_bytes: u64,
    pub d2h_span_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TimelineCheck {
    /// Pairs of compute spans on the device's compute lane that overlap without one
    /// containing the other.
    pub compute_overlaps: usize,
    /// Copy spans (h2d, d2h) found on the compute lane.
    pub copies_on_compute_lane: usize,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConfigEventRow {
    pub t: f64,
    pub key: String,
    pub from: String,
    pub to: String,
    pub by: String,
    pub applied: bool,
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
