//! What gap attribution needs from an event stream, collected as it arrives: per device its
//! compute, copies and preparation, lock waits and workers' regions; the synthesis pool; when
//! partitions were queued and taken; for the reasons behind the causes, each partition's spans,
//! the allocations, the submissions and the sampled levels.

use std::collections::{BTreeMap, HashMap};

use super::levels::Levels;
use super::DeviceGaps;
use crate::{Event, JobState, Lane, Nanos, Sample, Span, Stage};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Activity {
    Alloc = 0,
    Upload = 1,
    Prep = 2,
    Download = 3,
}

fn activity_of(lane: &Lane, stage: Stage) -> Option<Activity> {
    match stage {
        Stage::Alloc => Some(Activity::Alloc),
        Stage::H2d => Some(Activity::Upload),
        Stage::Prep => Some(Activity::Prep),
        Stage::D2h => Some(Activity::Download),
        _ if stage.is_compute() || stage == Stage::LockWait => None,
        // Anything else on a copy engine is a copy.
        _ => match lane {
            Lane::H2d { .. } => Some(Activity::Upload),
            Lane::D2h { .. } => Some(Activity::Download),
            _ => None,
        },
    }
}

/// (start, end, stage) of a span.
pub(super) type StageSpan = (Nanos, Nanos, Stage);

#[derive(Clone, Debug, Default)]
pub(super) struct Track {
    pub(super) compute: Vec<(Nanos, Nanos)>,
    pub(super) activity: Vec<(Nanos, Nanos, Activity)>,
    pub(super) lock_wait: Vec<(Nanos, Nanos, u32)>,
    /// (job, partition) → extent of the partition's spans on its worker's lane and the
    /// device's engines.
    pub(super) regions: HashMap<(u64, u32), (Nanos, Nanos)>,
    /// The worker each partition's region is on, from its spans on a worker's lane.
    pub(super) worker_of: HashMap<(u64, u32), u32>,
    /// Allocations on workers' lanes: (start, end, worker, bytes asked for).
    pub(super) allocs: Vec<(Nanos, Nanos, u32, u64)>,
}

impl Track {
    /// A span of a partition widens that partition's region; one on a worker's lane names the
    /// worker.
    fn widen_region(&mut self, worker: Option<u32>, s: &Span) {
        let (Some(job), Some(p)) = (s.job, s.partition) else {
            return;
        };
        if let Some(w) = worker {
            self.worker_of.insert((job, p), w);
        }
        let r = self.regions.entry((job, p)).or_insert((s.start, s.end));
        r.0 = r.0.min(s.start);
        r.1 = r.1.max(s.end);
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct QueueEntry {
    pub(super) queued: Option<Nanos>,
    pub(super) taken: Option<Nanos>,
}

/// Collects what gap attribution needs from an event stream; `attribute` computes the gaps
/// over any window of what was collected.
#[derive(Clone, Debug, Default)]
pub struct GapAnalyzer {
    pub(super) devices: BTreeMap<String, Track>,
    pub(super) synthesis: Vec<(Nanos, Nanos)>,
    pub(super) queued: Vec<(Nanos, Nanos)>,
    // Ordered by (job, partition): a job's end finds its own entries without a scan of all.
    pub(super) queue_open: BTreeMap<(u64, u32), QueueEntry>,
    pub(super) job_end: HashMap<u64, Nanos>,
    longest: Nanos,
    /// Partitions a worker took whose device spans have not all arrived (a GPU region's come
    /// when it has completed, its read-back last; a cpu region, with no read-back, counts as
    /// open until its proof, which only holds a live horizon back longer): (job, partition) →
    /// time taken.
    open_regions: BTreeMap<(u64, u32), Nanos>,
    /// Jobs submitted with no partition synthesised yet: job → time submitted.
    unsynthesized: HashMap<u64, Nanos>,
    /// (job, partition) → its spans on every lane: what a lock holder was doing.
    pub(super) partition_spans: HashMap<(u64, u32), Vec<StageSpan>>,
    /// When jobs were submitted, sorted (after pruning, the last one before the window stays).
    pub(super) submitted: Vec<Nanos>,
    pub(super) levels: Levels,
}

/// Gaps of every device seen in `events` over [from, to].
pub fn attribute<'a>(
    events: impl IntoIterator<Item = &'a Event>,
    from: Nanos,
    to: Nanos,
) -> Vec<DeviceGaps> {
    let mut a = GapAnalyzer::default();
    for e in events {
        a.observe(e);
    }
    a.attribute(from, to)
}

impl GapAnalyzer {
    /// An analyser that has seen nothing.
    pub fn new() -> Self {
        GapAnalyzer::default()
    }

    /// Takes in one event, in any order; events it has no use for are ignored.
    pub fn observe(&mut self, ev: &Event) {
        match ev {
            Event::Span(s) => self.add_span(s),
            Event::Proof(p) => {
                self.open_regions.remove(&(p.job, p.partition));
            }
            Event::Sample(s) => self.add_sample(s),
            Event::Job(j) => match (j.state, j.partition) {
                (JobState::Submitted, None) => {
                    self.unsynthesized.insert(j.job, j.t);
                    let i = self.submitted.partition_point(|t| *t <= j.t);
                    self.submitted.insert(i, j.t);
                }
                (JobState::Synthesized, Some(p)) => {
                    self.unsynthesized.remove(&j.job);
                    self.queue_open.entry((j.job, p)).or_default().queued = Some(j.t);
                    self.settle_queue((j.job, p));
                }
                (JobState::Proving, Some(p)) => {
                    self.unsynthesized.remove(&j.job);
                    self.open_regions.insert((j.job, p), j.t);
                    if let Some(d) = &j.detail {
                        self.track(d);
                    }
                    self.queue_open.entry((j.job, p)).or_default().taken = Some(j.t);
                    self.settle_queue((j.job, p));
                }
                (JobState::Verified | JobState::Failed | JobState::Cancelled, None) => {
                    self.job_end.insert(j.job, j.t);
                    self.unsynthesized.remove(&j.job);
                    // Only this job's entries: a scan of every open one made a recording of
                    // many jobs quadratic (50,000 jobs: 104 s).
                    let mine = (j.job, 0)..=(j.job, u32::MAX);
                    let regions: Vec<_> = self
                        .open_regions
                        .range(mine.clone())
                        .map(|(k, _)| *k)
                        .collect();
                    for k in regions {
                        self.open_regions.remove(&k);
                    }
                    let open: Vec<_> = self
                        .queue_open
                        .range(mine)
                        .filter(|(_, e)| e.queued.is_some() && e.taken.is_none())
                        .map(|(k, _)| *k)
                        .collect();
                    for k in open {
                        if let Some(e) = self.queue_open.remove(&k) {
                            let q = e.queued.unwrap_or(j.t);
                            self.queued.push((q, j.t.max(q)));
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    fn track(&mut self, device: &str) -> &mut Track {
        if !self.devices.contains_key(device) {
            self.devices.insert(device.to_string(), Track::default());
        }
        self.devices.get_mut(device).expect("inserted")
    }

    fn settle_queue(&mut self, key: (u64, u32)) {
        if let Some(QueueEntry {
            queued: Some(q),
            taken: Some(t),
        }) = self.queue_open.get(&key).copied()
        {
            self.queue_open.remove(&key);
            self.queued.push((q, t.max(q)));
        }
    }

    /// A sample: the few levels the reasons of a gap read are kept, the rest ignored.
    pub fn add_sample(&mut self, s: &Sample) {
        self.levels.add(s);
    }

    /// A span: compute, copies, preparation, lock waits and regions, by its lane's device.
    pub fn add_span(&mut self, s: &Span) {
        if s.end <= s.start {
            return;
        }
        self.longest = self.longest.max(s.end - s.start);
        // Pieces of an upload lie inside it.
        let own = s.stage != Stage::Dma;
        if let (Some(job), Some(p), true) = (s.job, s.partition, own) {
            self.partition_spans
                .entry((job, p))
                .or_default()
                .push((s.start, s.end, s.stage));
        }
        match &s.lane {
            Lane::Pool { name } => {
                // abc_eval and prestaging right after synthesis are part of making the partition
                // ready.
                if name == "synthesis"
                    && matches!(s.stage, Stage::Synthesis | Stage::AbcEval | Stage::Prep)
                {
                    self.synthesis.push((s.start, s.end));
                }
            }
            Lane::Compute { device } => {
                let compute = s.stage.is_compute();
                let activity = activity_of(&s.lane, s.stage);
                let t = self.track(device);
                if compute {
                    t.compute.push((s.start, s.end));
                } else if let Some(a) = activity {
                    t.activity.push((s.start, s.end, a));
                }
                t.widen_region(None, s);
            }
            Lane::H2d { device } | Lane::D2h { device } => {
                let activity = activity_of(&s.lane, s.stage);
                let t = self.track(device);
                if let Some(a) = activity {
                    t.activity.push((s.start, s.end, a));
                }
                t.widen_region(None, s);
            }
            Lane::Worker { device, worker } => {
                let (worker, stage) = (*worker, s.stage);
                let activity = activity_of(&s.lane, stage);
                let t = self.track(device);
                if stage == Stage::Alloc {
                    t.allocs.push((s.start, s.end, worker, s.bytes));
                }
                t.widen_region(Some(worker), s);
                if stage == Stage::LockWait {
                    t.lock_wait.push((s.start, s.end, worker));
                } else if let Some(a) = activity {
                    t.activity.push((s.start, s.end, a));
                }
            }
        }
        // The read-back ends a region: its spans are all in.
        if let (Some(job), Some(p), Stage::D2h) = (s.job, s.partition, s.stage) {
            self.open_regions.remove(&(job, p));
        }
    }

    /// Devices seen so far.
    pub fn devices(&self) -> impl Iterator<Item = &str> {
        self.devices.keys().map(String::as_str)
    }

    /// The longest span seen: how late a span can still arrive relative to its start.
    pub fn longest_span(&self) -> Nanos {
        self.longest
    }

    /// The earliest time spans may still be missing for: a region a worker started whose
    /// spans have not arrived, or a job none of whose partitions has been synthesised. A live
    /// consumer attributes no time past it.
    pub fn incomplete_since(&self) -> Option<Nanos> {
        self.open_regions
            .values()
            .chain(self.unsynthesized.values())
            .min()
            .copied()
    }

    /// Forgets what can no longer affect any window starting at or after `before`.
    pub fn prune(&mut self, before: Nanos) {
        // A lock wait that ended before `before` still names the holder of a region that
        // spans it: keep a margin of the longest span.
        let keep = before.saturating_sub(2 * self.longest);
        for t in self.devices.values_mut() {
            t.compute.retain(|i| i.1 >= before);
            t.activity.retain(|i| i.1 >= before);
            t.lock_wait.retain(|i| i.1 >= keep);
            t.regions.retain(|_, r| r.1 >= keep);
            let regions = &t.regions;
            t.worker_of.retain(|k, _| regions.contains_key(k));
            t.allocs.retain(|i| i.1 >= before);
        }
        self.partition_spans
            .retain(|_, v| v.iter().any(|s| s.1 >= keep));
        let last_before = self.submitted.partition_point(|t| *t < before);
        self.submitted.drain(..last_before.saturating_sub(1));
        self.levels.prune(before);
        self.synthesis.retain(|i| i.1 >= before);
        self.queued.retain(|i| i.1 >= before);
        self.job_end.retain(|_, t| *t >= keep);
    }

    /// Gaps of every device seen, over [from, to].
    pub fn attribute(&self, from: Nanos, to: Nanos) -> Vec<DeviceGaps> {
        self.devices
            .iter()
            .map(|(name, t)| self.device_gaps(name, t, from, to))
            .collect()
    }
}
