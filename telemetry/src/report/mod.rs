//! The run report of `bench --json` (and of `replay --summary`): built from the same events
//! the dashboard sees, so a live run and its recording summarise alike.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::telemetry::gaps::{DeviceGaps, GapAnalyzer};
use crate::telemetry::{
    metrics, ConfigChange, Event, Lane, Nanos, ProofRecord, Sample, Span, Stage,
};

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

/// A sampled series over the run. Rates and utilisations describe the interval that ends at
/// their sample (NVML reports over its past window); counters are cumulative.
#[derive(Clone, Debug, Default)]
struct Series {
    points: Vec<(Nanos, f64)>,
}

impl Series {
    fn add(&mut self, t: Nanos, v: f64) {
        // Samplers publish in time order; a late one is dropped rather than reordering.
        if self.points.last().is_none_or(|&(lt, _)| t >= lt) {
            self.points.push((t, v));
        }
    }

    fn first_t(&self) -> Option<Nanos> {
        self.points.first().map(|p| p.0)
    }

    fn last_t(&self) -> Option<Nanos> {
        self.points.last().map(|p| p.0)
    }

    /// ∫ value dt over [a, b] in seconds, each value holding over the interval before its
    /// sample.
    fn integral(&self, a: Nanos, b: Nanos) -> f64 {
        self.points
            .windows(2)
            .map(|w| {
                let (lo, hi) = (w[0].0.max(a), w[1].0.min(b));
                if hi > lo {
                    w[1].1 * (hi - lo) as f64 / 1e9
                } else {
                    0.0
                }
            })
            .sum()
    }

    fn mean(&self, a: Nanos, b: Nanos) -> f64 {
        if b > a {
            self.integral(a, b) / ((b - a) as f64 / 1e9)
        } else {
            self.points.last().map_or(0.0, |p| p.1)
        }
    }

    fn max(&self) -> f64 {
        self.points.iter().map(|p| p.1).fold(0.0, f64::max)
    }

    /// A cumulative counter at `t`, linear between samples, held outside them.
    fn at(&self, t: Nanos) -> f64 {
        let i = self.points.partition_point(|p| p.0 <= t);
        match (i.checked_sub(1).map(|j| self.points[j]), self.points.get(i)) {
            (Some((t0, v0)), Some(&(t1, v1))) => {
                v0 + (v1 - v0) * (t - t0) as f64 / (t1 - t0).max(1) as f64
            }
            (Some((_, v)), None) | (None, Some(&(_, v))) => v,
            (None, None) => 0.0,
        }
    }

    /// The counter's increase over the whole series.
    fn delta(&self) -> f64 {
        match (self.points.first(), self.points.last()) {
            (Some(a), Some(b)) => b.1 - a.1,
            _ => 0.0,
        }
    }
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

/// Collects what a report needs from the event stream.
#[derive(Default)]
pub struct ReportBuilder {
    proofs: Vec<ProofRecord>,
    gaps: GapAnalyzer,
    config: Vec<ConfigChange>,
    /// (metric, device) → series, for the few metrics the device summary uses.
    series: BTreeMap<(&'static str, String), Series>,
    /// Per device: compute spans and copy spans seen on the compute lane, span bytes.
    compute: BTreeMap<String, Vec<(Nanos, Nanos)>>,
    copies_on_compute: BTreeMap<String, usize>,
    span_bytes: BTreeMap<String, (u64, u64)>,
    /// Per device: spans on its copy lanes, for the busy-or-copying fraction.
    copies: BTreeMap<String, Copies>,
    /// Host samples (cores, pools, DDR) as (metric, time, value).
    host: Vec<(String, Nanos, f64)>,
    /// Per (job, partition): its device operations' first start, last end, and kernel time.
    regions: BTreeMap<(u64, u32), Region>,
}

#[derive(Default)]
struct Region {
    first: Nanos,
    last: Nanos,
    kernels: Vec<(Nanos, Nanos)>,
}

impl Region {
    /// The keys a partition's device region adds to its stages, in seconds (kernel spans
    /// merged: a backend may nest the transforms inside `ntt_h`).
    fn stages(&self) -> [(&'static str, f64); 2] {
        let kernels = merged_length(&self.kernels, self.first, self.last);
        [
            ("device_wall", (self.last - self.first) as f64 / 1e9),
            ("device_kernels", kernels as f64 / 1e9),
        ]
    }
}

/// A device's copy spans: whole uploads and downloads, and the copy engine's pieces of the
/// uploads where the backend times them.
#[derive(Default)]
struct Copies {
    h2d: Vec<(Nanos, Nanos)>,
    d2h: Vec<(Nanos, Nanos)>,
    dma: Vec<(Nanos, Nanos)>,
}

impl Copies {
    /// When the copy engines were moving data: the pieces where known, else whole uploads.
    fn engine_busy(&self) -> impl Iterator<Item = &(Nanos, Nanos)> {
        let up = if self.dma.is_empty() {
            &self.h2d
        } else {
            &self.dma
        };
        up.iter().chain(&self.d2h)
    }
}

/// Sampled metrics a device summary uses.
const SUMMARY_METRICS: [&str; 9] = [
    metrics::GPU_UTIL,
    metrics::NVML_PCIE_TX,
    metrics::NVML_PCIE_RX,
    metrics::NVML_GPM_PCIE_TX,
    metrics::NVML_GPM_PCIE_RX,
    metrics::GPU_POWER,
    metrics::VRAM_RESERVED,
    metrics::PCIE_H2D_TOTAL,
    metrics::PCIE_D2H_TOTAL,
];

impl ReportBuilder {
    pub fn observe(&mut self, ev: &Event) {
        match ev {
            Event::Span(s) => self.add_span(s),
            Event::Job(_) => self.gaps.observe(ev),
            Event::Proof(p) => self.add_proof(p.clone()),
            Event::Config(c) => self.add_config(c.clone()),
            Event::Sample(s) => self.add_sample(s),
            _ => {}
        }
    }

    /// A span: compute spans make devices busy; the others explain their gaps.
    pub fn add_span(&mut self, s: &Span) {
        self.gaps.add_span(s);
        self.add_region_span(s);
        match &s.lane {
            Lane::Compute { device } => {
                if s.stage.is_compute() {
                    self.compute
                        .entry(device.clone())
                        .or_default()
                        .push((s.start, s.end));
                } else if matches!(s.stage, Stage::H2d | Stage::D2h) {
                    *self.copies_on_compute.entry(device.clone()).or_default() += 1;
                }
            }
            Lane::H2d { device } | Lane::D2h { device } => {
                let copies = self.copies.entry(device.clone()).or_default();
                let bytes = self.span_bytes.entry(device.clone()).or_default();
                match (&s.lane, s.stage) {
                    // Pieces of an upload already counted whole.
                    (_, Stage::Dma) => copies.dma.push((s.start, s.end)),
                    (Lane::H2d { .. }, _) => {
                        bytes.0 += s.bytes;
                        copies.h2d.push((s.start, s.end));
                    }
                    _ => {
                        bytes.1 += s.bytes;
                        copies.d2h.push((s.start, s.end));
                    }
                }
            }
            _ => {}
        }
    }

    /// A device operation of a partition (a kernel, an upload, a download) widens its region.
    fn add_region_span(&mut self, s: &Span) {
        let device_op = match s.lane {
            Lane::Compute { .. } => s.stage.is_compute(),
            Lane::H2d { .. } | Lane::D2h { .. } => true,
            _ => false,
        };
        let (Some(job), Some(partition), true) = (s.job, s.partition, device_op) else {
            return;
        };
        let r = self.regions.entry((job, partition)).or_insert(Region {
            first: s.start,
            last: s.end,
            kernels: vec![],
        });
        r.first = r.first.min(s.start);
        r.last = r.last.max(s.end);
        if matches!(s.lane, Lane::Compute { .. }) {
            r.kernels.push((s.start, s.end));
        }
    }

    /// A proof's stages with its device region's, by key.
    fn stage_keys(&self, p: &ProofRecord) -> BTreeMap<&'static str, f64> {
        let mut stages: BTreeMap<_, _> = p.stages.iter().map(|(k, v)| (k.key(), *v)).collect();
        if let Some(r) = self.regions.get(&(p.job, p.partition)) {
            stages.extend(r.stages());
        }
        stages
    }

    /// A sample: NVML and the engine's PCIe counters feed the device summary.
    pub fn add_sample(&mut self, s: &Sample) {
        let host = [
            metrics::CPU_CORE_PREFIX,
            metrics::CPU_POOL_PREFIX,
            metrics::HOST_DDR,
            metrics::HOST_ENGINE_BYTES,
        ];
        if s.device.is_none() && host.iter().any(|m| s.metric.starts_with(m)) {
            self.host.push((s.metric.clone(), s.t, s.value));
            return;
        }
        let (Some(device), Some(metric)) =
            (&s.device, SUMMARY_METRICS.iter().find(|m| **m == s.metric))
        else {
            return;
        };
        self.series
            .entry((metric, device.clone()))
            .or_default()
            .add(s.t, s.value);
    }

    /// NVML and the engine over the part of [from, to] that NVML's utilisation samples cover.
    fn nvml_summary(&self, device: &str, from: Nanos, to: Nanos) -> Option<NvmlSummary> {
        let get = |m: &'static str| self.series.get(&(m, device.to_string()));
        let util = get(metrics::GPU_UTIL)?;
        let (a, b) = (util.first_t()?.max(from), util.last_t()?.min(to).max(from));
        let bytes = |m| get(m).map(|s: &Series| s.integral(a, b));
        let counted = |m| get(m).map_or(0.0, |s: &Series| s.at(b) - s.at(a));
        let compute = self.compute.get(device).cloned().unwrap_or_default();
        let mut active = compute.clone();
        if let Some(c) = self.copies.get(device) {
            active.extend(c.engine_busy());
        }
        let ratio = |spans: &[(Nanos, Nanos)]| {
            merged_length(spans, a, b) as f64 / b.saturating_sub(a).max(1) as f64
        };
        Some(NvmlSummary {
            window_seconds: b.saturating_sub(a) as f64 / 1e9,
            util_mean: util.mean(a, b),
            samples: util.points.len(),
            engine_busy_ratio: ratio(&compute),
            engine_active_ratio: ratio(&active),
            engine_h2d_bytes: counted(metrics::PCIE_H2D_TOTAL),
            engine_d2h_bytes: counted(metrics::PCIE_D2H_TOTAL),
            pcie_tx_bytes: bytes(metrics::NVML_PCIE_TX).unwrap_or(0.0),
            pcie_rx_bytes: bytes(metrics::NVML_PCIE_RX).unwrap_or(0.0),
            gpm_pcie_tx_bytes: bytes(metrics::NVML_GPM_PCIE_TX),
            gpm_pcie_rx_bytes: bytes(metrics::NVML_GPM_PCIE_RX),
            power_mean_watts: get(metrics::GPU_POWER).map_or(0.0, |s| s.mean(a, b)),
            memory_used_max_bytes: get(metrics::VRAM_RESERVED).map_or(0.0, Series::max),
        })
    }

    fn pcie_summary(&self, device: &str) -> Option<PcieSummary> {
        let get = |m: &'static str| self.series.get(&(m, device.to_string()));
        let (h2d, d2h) = (get(metrics::PCIE_H2D_TOTAL), get(metrics::PCIE_D2H_TOTAL));
        if h2d.is_none() && d2h.is_none() {
            return None;
        }
        let spans = self.span_bytes.get(device).copied().unwrap_or_default();
        Some(PcieSummary {
            h2d_bytes: h2d.map_or(0.0, Series::delta),
            d2h_bytes: d2h.map_or(0.0, Series::delta),
            h2d_span_bytes: spans.0,
            d2h_span_bytes: spans.1,
        })
    }

    fn timeline(&self, device: &str) -> TimelineCheck {
        let mut spans = self.compute.get(device).cloned().unwrap_or_default();
        spans.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        // Sweep with a stack of open spans: a span must end inside every span it starts in.
        let mut open: Vec<Nanos> = vec![];
        let mut overlaps = 0;
        for (s, e) in spans {
            while open.last().is_some_and(|&end| end <= s) {
                open.pop();
            }
            if open.last().is_some_and(|&end| e > end) {
                overlaps += 1;
            }
            open.push(e);
        }
        TimelineCheck {
            compute_overlaps: overlaps,
            copies_on_compute_lane: self.copies_on_compute.get(device).copied().unwrap_or(0),
        }
    }

    /// A job lifecycle event (queueing tells "waiting for synthesis" from "no work").
    pub fn add_job_event(&mut self, ev: &Event) {
        if let Event::Job(_) = ev {
            self.gaps.observe(ev);
        }
    }

    pub fn add_proof(&mut self, p: ProofRecord) {
        self.proofs.push(p);
    }

    pub fn add_config(&mut self, c: ConfigChange) {
        self.config.push(c);
    }

    pub fn proofs(&self) -> &[ProofRecord] {
        &self.proofs
    }

    pub fn rows(&self) -> Vec<ProofRow> {
        let mut rows: Vec<ProofRow> = self
            .proofs
            .iter()
            .map(|p| ProofRow {
                done_at: p.t as f64 / 1e9,
                job: p.job,
                partition: p.partition,
                device: p.device.clone(),
                verified: p.verified,
                error: p.error.clone(),
                stages: self.stage_keys(p),
            })
            .collect();
        rows.sort_by_key(|r| (r.job, r.partition));
        rows
    }

    pub fn summary(&self, wall_seconds: f64) -> Summary {
        let mut per_stage: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
        for p in &self.proofs {
            for (stage, v) in self.stage_keys(p) {
                per_stage.entry(stage).or_default().push(v);
            }
        }
        let verified = self.proofs.iter().filter(|p| p.verified).count();
        Summary {
            proofs: self.proofs.len(),
            verified,
            failed: self.proofs.len() - verified,
            wall_seconds,
            proofs_per_hour: if wall_seconds > 0.0 {
                verified as f64 * 3600.0 / wall_seconds
            } else {
                0.0
            },
            steady_proofs_per_hour: self.steady_rate(),
            stages: per_stage
                .into_iter()
                .filter_map(|(k, mut v)| Stat::of(&mut v).map(|s| (k, s)))
                .collect(),
        }
    }

    fn steady_rate(&self) -> f64 {
        let done = self.proofs.iter().filter(|p| p.verified).map(|p| p.t);
        let (n, first, last) = done.fold((0usize, Nanos::MAX, 0), |(n, f, l), t| {
            (n + 1, f.min(t), l.max(t))
        });
        match n >= 3 && last > first {
            true => (n - 1) as f64 * 3600.0 * 1e9 / (last - first) as f64,
            false => 0.0,
        }
    }

    /// Busy fraction and idle time per cause, per device, over the window [from, to].
    pub fn devices(&self, from: Nanos, to: Nanos) -> Vec<DeviceReport> {
        let wall = to.saturating_sub(from).max(1) as f64;
        self.gap_details(from, to)
            .into_iter()
            .map(|g| DeviceReport {
                busy_ratio: g.busy as f64 / wall,
                steady_busy_ratio: self.steady_busy(&g.device, from, to),
                busy_seconds: g.busy as f64 / 1e9,
                idle_seconds: g.idle as f64 / 1e9,
                partitions: self.proofs.iter().filter(|p| p.device == g.device).count(),
                gaps: g.seconds_by_cause(),
                nvml: self.nvml_summary(&g.device, from, to),
                pcie: self.pcie_summary(&g.device),
                timeline: self.timeline(&g.device),
                id: g.device,
            })
            .collect()
    }

    /// The host's samples inside [from, to], summarised; None without any.
    pub fn host(&self, from: Nanos, to: Nanos) -> Option<HostReport> {
        let inside: Vec<_> = self
            .host
            .iter()
            .filter(|(_, t, _)| *t > from && *t <= to)
            .collect();
        if inside.is_empty() {
            return None;
        }
        let values = |want: &dyn Fn(&str) -> bool| -> Vec<f64> {
            inside
                .iter()
                .filter(|(m, _, _)| want(m))
                .map(|(_, _, v)| *v)
                .collect()
        };
        let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let pressure = values(&|m| m == metrics::HOST_DDR_PRESSURE);
        let mut pools = BTreeMap::new();
        for (m, _, _) in &inside {
            if let Some(pool) = m.strip_prefix(metrics::CPU_POOL_PREFIX) {
                pools
                    .entry(pool.to_string())
                    .or_insert_with(|| mean(values(&|x| x == m.as_str())));
            }
        }
        Some(HostReport {
            cpu_busy_mean: mean(values(&|m| m.starts_with(metrics::CPU_CORE_PREFIX))),
            pools_busy_mean: pools,
            ddr_pressure_max: pressure.iter().copied().fold(0.0, f64::max),
            ddr_pressure_mean: mean(pressure),
            ddr_bytes_per_second_mean: mean(values(&|m| m == metrics::HOST_DDR)),
            engine_bytes_per_second_mean: mean(values(&|m| m == metrics::HOST_ENGINE_BYTES)),
            samples: inside.len(),
        })
    }

    fn steady_busy(&self, device: &str, from: Nanos, to: Nanos) -> f64 {
        let spans = self.compute.get(device).map_or(&[][..], Vec::as_slice);
        let first = spans.iter().map(|s| s.0).min().unwrap_or(from).max(from);
        let last = spans.iter().map(|s| s.1).max().unwrap_or(to).min(to);
        if last <= first {
            return 0.0;
        }
        merged_length(spans, first, last) as f64 / (last - first) as f64
    }

    /// Every gap of every device over [from, to], with its causes: what the dashboard shows
    /// for a selected gap.
    pub fn gap_details(&self, from: Nanos, to: Nanos) -> Vec<DeviceGaps> {
        self.gaps.attribute(from, to)
    }

    pub fn config_events(&self) -> Vec<ConfigEventRow> {
        self.config
            .iter()
            .map(|c| ConfigEventRow {
                t: c.t as f64 / 1e9,
                key: c.key.clone(),
                from: c.from.clone(),
                to: c.to.clone(),
                by: c.by.clone(),
                applied: c.applied,
                error: c.error.clone(),
            })
            .collect()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn msm_span(lane: Lane, start: Nanos, end: Nanos) -> Span {
        Span {
            lane,
            stage: Stage::MsmH,
            start,
            end,
            job: None,
            partition: None,
            bytes: 0,
        }
    }

    #[test]
    fn merged_length_counts_overlaps_once() {
        assert_eq!(merged_length(&[(0, 10), (5, 15), (20, 30)], 0, 100), 25);
        assert_eq!(merged_length(&[(0, 10), (5, 15), (20, 30)], 8, 25), 12);
        assert_eq!(merged_length(&[], 0, 10), 0);
    }

    #[test]
    fn timeline_checks_allow_nesting_and_count_overlaps() {
        let mut r = ReportBuilder::default();
        let mut span = |stage, start, end| {
            r.add_span(&Span {
                lane: Lane::Compute {
                    device: "gpu0".into(),
                },
                stage,
                start,
                end,
                job: None,
                partition: None,
                bytes: 0,
            })
        };
        span(Stage::NttH, 0, 10);
        span(Stage::Intt, 0, 4); // inside ntt_h
        span(Stage::CosetNtt, 4, 10);
        span(Stage::MsmH, 10, 20);
        span(Stage::MsmL, 15, 25); // overlaps msm_h without nesting
        span(Stage::H2d, 30, 31); // a copy on the compute lane
        let t = r.timeline("gpu0");
        assert_eq!((t.compute_overlaps, t.copies_on_compute_lane), (1, 1));
    }

    #[test]
    fn a_partitions_device_region_spans_its_first_to_last_device_operation() {
        let mut r = ReportBuilder::default();
        let mut span = |lane: Lane, stage, start, end, partition| {
            r.add_span(&Span {
                lane,
                stage,
                start,
                end,
                job: Some(7),
                partition: Some(partition),
                bytes: 0,
            })
        };
        let compute = || Lane::Compute {
            device: "gpu0".into(),
        };
        let h2d = Lane::H2d {
            device: "gpu0".into(),
        };
        let d2h = Lane::D2h {
            device: "gpu0".into(),
        };
        span(h2d, Stage::H2d, 100, 150, 0);
        span(compute(), Stage::Prep, 50, 90, 0); // host work: not a device operation
        span(compute(), Stage::NttH, 160, 200, 0);
        span(compute(), Stage::Intt, 160, 180, 0); // nested: counted once
        span(compute(), Stage::MsmH, 210, 300, 0);
        span(d2h, Stage::D2h, 300, 310, 0);
        span(compute(), Stage::MsmH, 1000, 1100, 1);
        r.add_proof(ProofRecord {
            t: 400,
            job: 7,
            partition: 0,
            device: "gpu0".into(),
            verified: true,
            error: None,
            stages: Default::default(),
        });
        let row = &r.rows()[0];
        assert!((row.stages["device_wall"] - 210e-9).abs() < 1e-15);
        assert!((row.stages["device_kernels"] - 130e-9).abs() < 1e-15);
        assert!((r.summary(1.0).stages["device_wall"].median - 210e-9).abs() < 1e-15);
    }

    #[test]
    fn nvml_and_engine_figures_share_one_window() {
        let mut r = ReportBuilder::default();
        let s = |metric: &str, t: Nanos, value: f64| Sample {
            t,
            metric: metric.into(),
            device: Some("gpu0".into()),
            value,
        };
        const S: Nanos = 1_000_000_000;
        // Each NVML value describes the second before it: busy 100 %, then 50 %, then idle.
        for (t, util, rate) in [
            (0, 0.2, 0.0),
            (S, 1.0, 100.0),
            (2 * S, 0.5, 300.0),
            (3 * S, 0.0, 0.0),
        ] {
            r.add_sample(&s(metrics::GPU_UTIL, t, util));
            r.add_sample(&s(metrics::NVML_PCIE_RX, t, rate));
        }
        // The engine's counter, sampled at other times: 100 bytes a second from 0.5 s.
        for (t, total) in [(S / 2, 0.0), (3 * S / 2, 100.0), (7 * S / 2, 300.0)] {
            r.add_sample(&s(metrics::PCIE_H2D_TOTAL, t, total));
        }
        let span = msm_span;
        let dev = || "gpu0".to_string();
        r.add_span(&span(Lane::Compute { device: dev() }, 0, 3 * S / 2));
        r.add_span(&span(Lane::H2d { device: dev() }, 3 * S / 2, 3 * S));
        // The copy engine moved data for half a second of that upload; the rest was staging.
        let mut piece = span(Lane::H2d { device: dev() }, 3 * S / 2, 2 * S);
        piece.stage = Stage::Dma;
        r.add_span(&piece);
        // The run's window [0.5 s, 10 s] clips NVML's [0, 3 s] to [0.5 s, 3 s].
        let n = r.nvml_summary("gpu0", S / 2, 10 * S).unwrap();
        assert_eq!(n.window_seconds, 2.5);
        assert_eq!(n.util_mean, (0.5 * 1.0 + 0.5) / 2.5);
        assert_eq!(n.pcie_rx_bytes, 50.0 + 300.0);
        assert_eq!(n.engine_busy_ratio, 1.0 / 2.5);
        assert_eq!(n.engine_active_ratio, 1.5 / 2.5);
        assert_eq!(n.engine_h2d_bytes, 250.0);
        assert_eq!(n.samples, 4);
        let p = r.pcie_summary("gpu0").unwrap();
        assert_eq!((p.h2d_bytes, p.d2h_bytes), (300.0, 0.0));
        assert!(r.nvml_summary("cpu0", 0, S).is_none() && r.pcie_summary("cpu0").is_none());
    }

    #[test]
    fn steady_busy_leaves_out_the_run_before_the_first_kernel_and_after_the_last() {
        let mut r = ReportBuilder::default();
        for (start, end) in [(10, 20), (30, 40), (15, 18)] {
            let lane = Lane::Compute {
                device: "gpu0".into(),
            };
            r.add_span(&msm_span(lane, start, end));
        }
        assert_eq!(r.steady_busy("gpu0", 0, 100), 20.0 / 30.0);
        assert_eq!(r.steady_busy("gpu0", 35, 100), 1.0, "clipped to the window");
        assert_eq!(r.steady_busy("cpu0", 0, 100), 0.0, "no kernels");
    }

    #[test]
    fn the_steady_rate_counts_from_the_first_verified_proof_to_the_last() {
        let mut r = ReportBuilder::default();
        const S: Nanos = 1_000_000_000;
        // The first proof after 10 s of filling, then one every 2 s; a failed one in between.
        for (t, verified) in [
            (10 * S, true),
            (11 * S, false),
            (12 * S, true),
            (14 * S, true),
        ] {
            r.proofs.push(ProofRecord {
                t,
                job: 0,
                partition: 0,
                device: "gpu0".into(),
                verified,
                error: None,
                stages: Default::default(),
            });
        }
        let s = r.summary(14.0);
        assert_eq!(s.proofs_per_hour, 3.0 * 3600.0 / 14.0);
        assert_eq!(s.steady_proofs_per_hour, 2.0 * 3600.0 / 4.0);
        r.proofs.truncate(2);
        assert_eq!(
            r.summary(14.0).steady_proofs_per_hour,
            0.0,
            "too few to tell"
        );
    }

    #[test]
    fn the_host_summary_averages_the_samples_inside_the_run() {
        let mut r = ReportBuilder::default();
        let sample = |metric: &str, t: Nanos, value: f64| Sample {
            t,
            metric: metric.into(),
            device: None,
            value,
        };
        for (m, t, v) in [
            ("cpu.core.0", 5, 0.9), // before the run: left out
            ("cpu.core.0", 10, 0.5),
            ("cpu.core.1", 10, 1.0),
            ("cpu.pool.synthesis", 10, 0.75),
            ("host.ddr.pressure", 10, 0.2),
            ("host.ddr.pressure", 20, 0.6),
            ("host.ddr", 20, 4e10),
            ("host.ram.used", 20, 1e9), // not a host summary metric
        ] {
            r.add_sample(&sample(m, t, v));
        }
        assert!(r.host(100, 200).is_none());
        let h = r.host(6, 20).unwrap();
        assert_eq!(h.cpu_busy_mean, 0.75);
        assert_eq!(h.pools_busy_mean["synthesis"], 0.75);
        assert!((h.ddr_pressure_mean - 0.4).abs() < 1e-12);
        assert_eq!(h.ddr_pressure_max, 0.6);
        assert_eq!(h.ddr_bytes_per_second_mean, 4e10);
        assert_eq!(h.samples, 6);
    }

    #[test]
    fn stat_median() {
        assert_eq!(
            Stat::of(&mut [3.0, 1.0, 2.0]).unwrap(),
            Stat {
                median: 2.0,
                min: 1.0,
                max: 3.0
            }
        );
        assert_eq!(Stat::of(&mut [4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert!(Stat::of(&mut []).is_none());
    }
}
