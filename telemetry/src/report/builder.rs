//! What a report needs from the event stream, collected as it arrives: proofs, config changes,
//! the inputs of gap attribution, each device's compute and copy spans and the sampled metrics
//! the summaries read.

use std::collections::BTreeMap;

use super::kind_gaps::{self, NextCompute};
use super::kinds::JobKinds;
use super::series::Series;
use super::{merged_length, ConfigEventRow, ProofRow, Stat, Summary};
use crate::gaps::{DeviceGaps, GapAnalyzer};
use crate::text::clip;
use crate::{
    metrics, ConfigChange, Event, JobState, Lane, Mark, Nanos, ProofRecord, Sample, Span, Stage,
};

/// The longest string of a proof or a config change a report keeps: a crafted file's 64 KiB
/// strings, one per record, would otherwise be held and printed whole, again and again.
const KEPT: usize = 1024;

/// Collects what a report needs from the event stream.
#[derive(Default)]
pub struct ReportBuilder {
    pub(super) proofs: Vec<ProofRecord>,
    gaps: GapAnalyzer,
    pub(super) config: Vec<ConfigChange>,
    /// User annotations: with config changes, where segments split.
    pub(super) marks: Vec<Mark>,
    /// (metric, device) → series, for the few metrics the device summary uses.
    pub(super) series: BTreeMap<(&'static str, String), Series>,
    /// Per device: compute spans and copy spans seen on the compute lane, span bytes.
    pub(super) compute: BTreeMap<String, Vec<(Nanos, Nanos)>>,
    pub(super) copies_on_compute: BTreeMap<String, usize>,
    pub(super) span_bytes: BTreeMap<String, (u64, u64)>,
    /// Per device: spans on its copy lanes, for the busy-or-copying fraction.
    pub(super) copies: BTreeMap<String, Copies>,
    /// Host samples (cores, pools, DDR) as (metric, time, value).
    pub(super) host: Vec<(String, Nanos, f64)>,
    /// Per (job, partition): its device operations' first start, last end, and kernel time.
    regions: BTreeMap<(u64, u32), Region>,
    /// Jobs submitted and not yet ended, and the most there were at once.
    open_jobs: std::collections::BTreeSet<u64>,
    most_open_jobs: u64,
    /// Jobs' kinds and times, where their events named a kind.
    pub(super) jobs: JobKinds,
    /// Per device, which job each compute span is for: who ends a gap, for each kind's gaps.
    pub(super) next_compute: NextCompute,
    /// When there was work: the advisor judges only that part of a window.
    pub(super) work: super::window::WorkLog,
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
pub(super) struct Copies {
    h2d: Vec<(Nanos, Nanos)>,
    d2h: Vec<(Nanos, Nanos)>,
    dma: Vec<(Nanos, Nanos)>,
}

impl Copies {
    /// When the copy engines were moving data: the pieces where known, else whole uploads.
    pub(super) fn engine_busy(&self) -> impl Iterator<Item = &(Nanos, Nanos)> {
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
    /// Takes in one event; logs are ignored.
    pub fn observe(&mut self, ev: &Event) {
        match ev {
            Event::Span(s) => self.add_span(s),
            Event::Job(_) => self.add_job_event(ev),
            Event::Proof(p) => self.add_proof(p.clone()),
            Event::Config(c) => self.add_config(c.clone()),
            Event::Sample(s) => self.add_sample(s),
            Event::Mark(m) => self.add_mark(m.clone()),
            _ => {}
        }
    }

    /// A user annotation: with config changes, where segments split.
    pub fn add_mark(&mut self, m: Mark) {
        self.marks.push(m);
    }

    /// The marks seen, in arrival order.
    pub fn marks(&self) -> &[Mark] {
        &self.marks
    }

    /// A span: compute spans make devices busy; the others explain their gaps.
    pub fn add_span(&mut self, s: &Span) {
        self.work.saw(s.start);
        self.gaps.add_span(s);
        self.add_region_span(s);
        match &s.lane {
            Lane::Compute { device } => {
                if s.stage.is_compute() {
                    self.compute
                        .entry(device.clone())
                        .or_default()
                        .push((s.start, s.end));
                    self.next_compute.add(device, s.start, s.job);
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
                        bytes.0 = bytes.0.saturating_add(s.bytes);
                        copies.h2d.push((s.start, s.end));
                    }
                    _ => {
                        bytes.1 = bytes.1.saturating_add(s.bytes);
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
        self.gaps.add_sample(s);
        let host = [
            metrics::CPU_CORE_PREFIX,
            metrics::CPU_POOL_PREFIX,
            metrics::HOST_DDR,
            metrics::HOST_ENGINE_BYTES,
            metrics::PROCESS_RSS,
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

    /// A job lifecycle event (queueing tells "waiting for synthesis" from "no work").
    pub fn add_job_event(&mut self, ev: &Event) {
        if let Event::Job(j) = ev {
            self.gaps.observe(ev);
            self.work.saw(j.t);
            if j.partition.is_none() {
                match j.state {
                    JobState::Submitted => {
                        self.work.job(j.t, true);
                        self.open_jobs.insert(j.job);
                        if let Some(kind) = &j.kind {
                            self.jobs.submitted(j.job, kind, j.t);
                        }
                    }
                    JobState::Verified | JobState::Failed | JobState::Cancelled => {
                        self.work.job(j.t, false);
                        self.open_jobs.remove(&j.job);
                        self.jobs.ended(j.job, j.t);
                    }
                    _ => {}
                }
                self.most_open_jobs = self.most_open_jobs.max(self.open_jobs.len() as u64);
            }
        }
    }

    /// The most jobs open at once (submitted, not ended): the run's jobs in flight; 0 when no
    /// job event was seen.
    pub fn most_jobs_in_flight(&self) -> u64 {
        self.most_open_jobs
    }

    /// A finished partition; its device and error are clipped to 1 KiB.
    pub fn add_proof(&mut self, mut p: ProofRecord) {
        clip(&mut p.device, KEPT);
        if let Some(e) = &mut p.error {
            clip(e, KEPT);
        }
        self.proofs.push(p);
    }

    /// A configuration change; its strings are clipped to 1 KiB.
    pub fn add_config(&mut self, mut c: ConfigChange) {
        for s in [&mut c.key, &mut c.from, &mut c.to, &mut c.by] {
            clip(s, KEPT);
        }
        if let Some(e) = &mut c.error {
            clip(e, KEPT);
        }
        self.config.push(c);
    }

    /// Whether any job's events named its kind: whether a summary has `kinds`.
    pub fn has_kinds(&self) -> bool {
        !self.jobs.is_empty()
    }

    /// The finished partitions seen, in arrival order.
    pub fn proofs(&self) -> &[ProofRecord] {
        &self.proofs
    }

    /// A row per finished partition, by job and partition, with its device region's keys.
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

    /// The run over [from, to]: counts and stage statistics of every proof seen, the rates over
    /// the window's length, each kind's idle gaps over the window (the devices' window).
    pub fn summary(&self, from: Nanos, to: Nanos) -> Summary {
        let gaps = self.kind_gaps(from, to);
        self.summary_of(
            self.proofs.iter(),
            seconds(from, to),
            (0, Nanos::MAX),
            &gaps,
        )
    }

    /// The same over the proofs finished inside (from, to]: the stretch since a change, for
    /// the advisor in the dashboard.
    pub fn summary_between(&self, from: Nanos, to: Nanos) -> Summary {
        self.summary_inside(from, to, &self.gap_details(from, to))
    }

    /// `summary_between` over `devices`, the gaps already worked out for the window.
    pub(super) fn summary_inside(&self, from: Nanos, to: Nanos, devices: &[DeviceGaps]) -> Summary {
        let inside = self.proofs.iter().filter(|p| p.t > from && p.t <= to);
        let gaps = self.charge(devices);
        self.summary_of(inside, seconds(from, to), (from, to), &gaps)
    }

    /// Each kind's idle time per cause over [from, to]; nothing without kinds, whose gaps
    /// would be worked out for no one.
    fn kind_gaps(&self, from: Nanos, to: Nanos) -> BTreeMap<Option<&str>, kind_gaps::CauseTimes> {
        match self.jobs.is_empty() {
            true => BTreeMap::new(),
            false => self.charge(&self.gap_details(from, to)),
        }
    }

    fn charge(&self, devices: &[DeviceGaps]) -> BTreeMap<Option<&str>, kind_gaps::CauseTimes> {
        kind_gaps::charge(devices, &self.next_compute, |j| self.jobs.kind_of(j))
    }

    fn summary_of<'a>(
        &'a self,
        proofs: impl Iterator<Item = &'a ProofRecord> + Clone,
        wall_seconds: f64,
        window: (Nanos, Nanos),
        gaps: &BTreeMap<Option<&str>, kind_gaps::CauseTimes>,
    ) -> Summary {
        let mut per_stage: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
        for p in proofs.clone() {
            for (stage, v) in self.stage_keys(p) {
                per_stage.entry(stage).or_default().push(v);
            }
        }
        let all = proofs.clone().count();
        let verified = proofs.clone().filter(|p| p.verified).count();
        Summary {
            proofs: all,
            verified,
            failed: all - verified,
            wall_seconds,
            proofs_per_hour: if wall_seconds > 0.0 {
                verified as f64 * 3600.0 / wall_seconds
            } else {
                0.0
            },
            steady_proofs_per_hour: steady_rate(proofs.clone()),
            stages: per_stage
                .into_iter()
                .filter_map(|(k, mut v)| Stat::of(&mut v).map(|s| (k, s)))
                .collect(),
            kinds: self
                .jobs
                .summaries(proofs, |p| self.stage_keys(p), wall_seconds, window, gaps),
        }
    }

    /// Every gap of every device over [from, to], with its causes: what the dashboard shows
    /// for a selected gap.
    pub fn gap_details(&self, from: Nanos, to: Nanos) -> Vec<DeviceGaps> {
        self.gaps.attribute(from, to)
    }

    /// The configuration changes in arrival order, times in seconds.
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

/// The length of [from, to] in seconds.
fn seconds(from: Nanos, to: Nanos) -> f64 {
    to.saturating_sub(from) as f64 / 1e9
}

/// Verified proofs per hour between the first verified proof and the last (0 with fewer than 3).
fn steady_rate<'a>(proofs: impl Iterator<Item = &'a ProofRecord>) -> f64 {
    let done = proofs.filter(|p| p.verified).map(|p| p.t);
    let (n, first, last) = done.fold((0usize, Nanos::MAX, 0), |(n, f, l), t| {
        (n + 1, f.min(t), l.max(t))
    });
    match n >= 3 && last > first {
        true => (n - 1) as f64 * 3600.0 * 1e9 / (last - first) as f64,
        false => 0.0,
    }
}
