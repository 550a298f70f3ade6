//! Idle-gap attribution: for each device, every interval in which no compute span runs on its
//! compute lane is a gap, and each moment of a gap gets the cause the event stream shows.
//!
//! It is a pure function of the events (their order of arrival does not matter), so a live
//! session, its recording and a replay give the same answer. The inputs it reads:
//!
//! - compute spans on `Lane::Compute { device }` (stages for which `Stage::is_compute`);
//! - `alloc`, `h2d`, `prep` and `d2h` spans on any lane of the device (its copy lanes, its
//!   compute lane, its workers' lanes);
//! - `lock_wait` spans on a worker's lane; a worker's partition region is the extent of its
//!   lane's spans for that partition, and the worker that most recently finished a lock wait
//!   inside its current region is taken as the lock's holder;
//! - `synthesis` spans on the `synthesis` pool;
//! - job events: a partition is queued from `synthesized` to `proving` (or to the end of its
//!   job, when the job is cancelled).
//!
//! When several causes apply at once, the first in this order wins (most specific first; what
//! the device itself is doing before what it waits for elsewhere):
//!
//! 1. `alloc` — a worker of the device is allocating device memory;
//! 2. `upload` — a host-to-device copy is in flight;
//! 3. `prep` — a worker is preparing inputs on the CPU inside its region;
//! 4. `download` — a device-to-host copy is in flight;
//! 5. `lock_held` — a worker of the device waits for its lock while another worker holds it
//!    (the holder's worker number is kept on the gap);
//! 6. `unattributed` — a worker is inside a partition's region but no span says what it does;
//! 7. `queued` — synthesised partitions are waiting but no worker of this device has one;
//! 8. `imbalance` — nothing is queued, but a worker of another device holds a partition it
//!    waits to compute (for its device's lock): work this device could have run;
//! 9. `waiting_synthesis` — nothing is ready and partitions are being synthesised;
//! 10. `no_work` — nothing is ready and nothing is being synthesised: no work was
//!     submitted, or every open partition is past this device.

use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

use super::{Event, JobState, Lane, Nanos, Span, Stage};

/// Why a device had no compute running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum GapCause {
    Alloc,
    Upload,
    Prep,
    Download,
    LockHeld { holder: Option<u32> },
    Unattributed,
    Queued,
    Imbalance,
    WaitingSynthesis,
    NoWork,
}

impl GapCause {
    /// Every cause key, in priority order: the keys of `devices[].gaps` in `bench --json` and
    /// the `cause` label of `provetop_gpu_idle_seconds_total`.
    pub const KEYS: [&'static str; 10] = [
        "alloc",
        "upload",
        "prep",
        "download",
        "lock_held",
        "unattributed",
        "queued",
        "imbalance",
        "waiting_synthesis",
        "no_work",
    ];

    pub fn key(&self) -> &'static str {
        Self::KEYS[self.index()]
    }

    fn index(&self) -> usize {
        match self {
            GapCause::Alloc => 0,
            GapCause::Upload => 1,
            GapCause::Prep => 2,
            GapCause::Download => 3,
            GapCause::LockHeld { .. } => 4,
            GapCause::Unattributed => 5,
            GapCause::Queued => 6,
            GapCause::Imbalance => 7,
            GapCause::WaitingSynthesis => 8,
            GapCause::NoWork => 9,
        }
    }
}

impl std::fmt::Display for GapCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GapCause::LockHeld { holder: Some(w) } => write!(f, "lock held by worker {w}"),
            GapCause::LockHeld { holder: None } => f.write_str("lock held"),
            GapCause::Alloc => f.write_str("allocation"),
            GapCause::Upload => f.write_str("upload in flight"),
            GapCause::Prep => f.write_str("CPU prep"),
            GapCause::Download => f.write_str("download in flight"),
            GapCause::Unattributed => f.write_str("in a region, no span"),
            GapCause::Queued => f.write_str("partitions queued, no worker took one"),
            GapCause::Imbalance => f.write_str("another device holds queued work"),
            GapCause::WaitingSynthesis => f.write_str("waiting for synthesis"),
            GapCause::NoWork => f.write_str("no work"),
        }
    }
}

/// A stretch of a gap with one cause.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GapSegment {
    pub start: Nanos,
    pub end: Nanos,
    #[serde(flatten)]
    pub cause: GapCause,
}

/// A maximal interval with no compute on a device, cut into segments by cause.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gap {
    pub start: Nanos,
    pub end: Nanos,
    pub segments: Vec<GapSegment>,
}

impl Gap {
    pub fn duration(&self) -> Nanos {
        self.end - self.start
    }

    /// The cause that covers most of the gap (the earliest in priority order on a tie).
    pub fn cause(&self) -> GapCause {
        let mut totals: Vec<(GapCause, Nanos)> = vec![];
        for s in &self.segments {
            match totals.iter_mut().find(|(c, _)| *c == s.cause) {
                Some((_, n)) => *n += s.end - s.start,
                None => totals.push((s.cause, s.end - s.start)),
            }
        }
        totals
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.index().cmp(&a.0.index())))
            .map_or(GapCause::NoWork, |(c, _)| c)
    }

    /// The cause at time `t`, if `t` is inside the gap.
    pub fn cause_at(&self, t: Nanos) -> Option<GapCause> {
        self.segments
            .iter()
            .find(|s| s.start <= t && t < s.end)
            .map(|s| s.cause)
    }
}

/// One device's gaps over a window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceGaps {
    pub device: String,
    pub from: Nanos,
    pub to: Nanos,
    /// Time with at least one compute span.
    pub busy: Nanos,
    /// Time without: the sum of the gaps.
    pub idle: Nanos,
    /// Idle time per cause key (every key of `GapCause::KEYS`, zero included).
    pub by_cause: BTreeMap<&'static str, Nanos>,
    pub gaps: Vec<Gap>,
}

impl DeviceGaps {
    /// Seconds lost per cause.
    pub fn seconds_by_cause(&self) -> BTreeMap<&'static str, f64> {
        self.by_cause
            .iter()
            .map(|(k, v)| (*k, *v as f64 / 1e9))
            .collect()
    }

    /// The gap containing `t`, if any (gaps are sorted, so this is a binary search).
    pub fn gap_at(&self, t: Nanos) -> Option<&Gap> {
        let i = self.gaps.partition_point(|g| g.end <= t);
        self.gaps.get(i).filter(|g| g.start <= t)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Activity {
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

#[derive(Clone, Debug, Default)]
struct Track {
    compute: Vec<(Nanos, Nanos)>,
    activity: Vec<(Nanos, Nanos, Activity)>,
    lock_wait: Vec<(Nanos, Nanos, u32)>,
    /// (worker, job, partition) → extent of the worker's spans for that partition.
    regions: HashMap<(u32, u64, u32), (Nanos, Nanos)>,
}

#[derive(Clone, Copy, Debug, Default)]
struct QueueEntry {
    queued: Option<Nanos>,
    taken: Option<Nanos>,
}

/// Collects what gap attribution needs from an event stream; `attribute` computes the gaps
/// over any window of what was collected.
#[derive(Clone, Debug, Default)]
pub struct GapAnalyzer {
    devices: BTreeMap<String, Track>,
    synthesis: Vec<(Nanos, Nanos)>,
    queued: Vec<(Nanos, Nanos)>,
    queue_open: HashMap<(u64, u32), QueueEntry>,
    job_end: HashMap<u64, Nanos>,
    longest: Nanos,
    /// Partitions a worker took whose spans have not arrived (they come when its region
    /// ends): (job, partition) → time taken.
    open_regions: HashMap<(u64, u32), Nanos>,
    /// Jobs submitted with no partition synthesised yet: job → time submitted.
    unsynthesized: HashMap<u64, Nanos>,
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
    pub fn new() -> Self {
        GapAnalyzer::default()
    }

    pub fn observe(&mut self, ev: &Event) {
        match ev {
            Event::Span(s) => self.add_span(s),
            Event::Proof(p) => {
                self.open_regions.remove(&(p.job, p.partition));
            }
            Event::Job(j) => match (j.state, j.partition) {
                (JobState::Submitted, None) => {
                    self.unsynthesized.insert(j.job, j.t);
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
                    self.open_regions.retain(|k, _| k.0 != j.job);
                    let open: Vec<_> = self
                        .queue_open
                        .iter()
                        .filter(|(k, e)| k.0 == j.job && e.queued.is_some() && e.taken.is_none())
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

    pub fn add_span(&mut self, s: &Span) {
        if s.end <= s.start {
            return;
        }
        self.longest = self.longest.max(s.end - s.start);
        match &s.lane {
            Lane::Pool { name } => {
                // Prestaging right after synthesis is part of making the partition ready.
                if name == "synthesis" && matches!(s.stage, Stage::Synthesis | Stage::Prep) {
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
            }
            Lane::H2d { device } | Lane::D2h { device } => {
                if let Some(a) = activity_of(&s.lane, s.stage) {
                    self.track(device).activity.push((s.start, s.end, a));
                }
            }
            Lane::Worker { device, worker } => {
                let (worker, stage) = (*worker, s.stage);
                let activity = activity_of(&s.lane, stage);
                if let (Some(job), Some(p)) = (s.job, s.partition) {
                    self.open_regions.remove(&(job, p));
                }
                let t = self.track(device);
                if let (Some(job), Some(p)) = (s.job, s.partition) {
                    let r = t
                        .regions
                        .entry((worker, job, p))
                        .or_insert((s.start, s.end));
                    r.0 = r.0.min(s.start);
                    r.1 = r.1.max(s.end);
                }
                if stage == Stage::LockWait {
                    t.lock_wait.push((s.start, s.end, worker));
                } else if let Some(a) = activity {
                    t.activity.push((s.start, s.end, a));
                }
            }
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
        }
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

    fn device_gaps(&self, name: &str, track: &Track, from: Nanos, to: Nanos) -> DeviceGaps {
        #[derive(Clone, Copy)]
        enum Change {
            Compute(i32),
            Activity(Activity, i32),
            Lock(u32, i32),
            Region(u32, i32, Nanos),
            Synthesis(i32),
            Queue(i32),
            Elsewhere(i32),
        }
        let mut ch: Vec<(Nanos, Change)> = Vec::new();
        let mut both = |s: Nanos, e: Nanos, on: Change, off: Change| {
            ch.push((s, on));
            ch.push((e, off));
        };
        for &(s, e) in &track.compute {
            both(s, e, Change::Compute(1), Change::Compute(-1));
        }
        for &(s, e, a) in &track.activity {
            both(s, e, Change::Activity(a, 1), Change::Activity(a, -1));
        }
        for &(s, e, w) in &track.lock_wait {
            both(s, e, Change::Lock(w, 1), Change::Lock(w, -1));
        }
        for (&(w, _, _), &(s, e)) in &track.regions {
            both(s, e, Change::Region(w, 1, s), Change::Region(w, -1, s));
        }
        for &(s, e) in &self.synthesis {
            both(s, e, Change::Synthesis(1), Change::Synthesis(-1));
        }
        for &(s, e) in &self.queued {
            both(s, e, Change::Queue(1), Change::Queue(-1));
        }
        // Partitions other devices' workers hold while they wait for their locks.
        for (_, other) in self.devices.iter().filter(|(n, _)| n.as_str() != name) {
            for &(s, e, _) in &other.lock_wait {
                both(s, e, Change::Elsewhere(1), Change::Elsewhere(-1));
            }
        }
        // Partitions still queued at the end of what was seen: until their job ended, or on.
        for (k, e) in &self.queue_open {
            if let (Some(q), None) = (e.queued, e.taken) {
                let end = self.job_end.get(&k.0).copied().unwrap_or(Nanos::MAX);
                both(q, end.max(q), Change::Queue(1), Change::Queue(-1));
            }
        }
        ch.sort_by_key(|c| c.0);

        #[derive(Default)]
        struct Worker {
            regions: i32,
            region_start: Nanos,
            waits: i32,
            acquired: Option<Nanos>,
        }
        let mut compute = 0i32;
        let mut activity = [0i32; 4];
        let mut synthesis = 0i32;
        let mut queue = 0i32;
        let mut elsewhere = 0i32;
        let mut workers: BTreeMap<u32, Worker> = BTreeMap::new();

        let classify = |activity: &[i32; 4],
                        workers: &BTreeMap<u32, Worker>,
                        queue: i32,
                        elsewhere: i32,
                        synthesis: i32|
         -> GapCause {
            for (i, cause) in [
                GapCause::Alloc,
                GapCause::Upload,
                GapCause::Prep,
                GapCause::Download,
            ]
            .into_iter()
            .enumerate()
            {
                if activity[i] > 0 {
                    return cause;
                }
            }
            if workers.values().any(|w| w.waits > 0) {
                let holder = workers
                    .iter()
                    .filter(|(_, w)| w.regions > 0 && w.waits == 0)
                    .filter_map(|(n, w)| {
                        w.acquired.filter(|a| *a >= w.region_start).map(|a| (a, *n))
                    })
                    .max()
                    .map(|(_, n)| n);
                return GapCause::LockHeld { holder };
            }
            if workers.values().any(|w| w.regions > 0) {
                GapCause::Unattributed
            } else if queue > 0 {
                GapCause::Queued
            } else if elsewhere > 0 {
                GapCause::Imbalance
            } else if synthesis > 0 {
                GapCause::WaitingSynthesis
            } else {
                GapCause::NoWork
            }
        };

        let mut out = DeviceGaps {
            device: name.to_string(),
            from,
            to,
            busy: 0,
            idle: 0,
            by_cause: GapCause::KEYS.iter().map(|k| (*k, 0)).collect(),
            gaps: vec![],
        };
        let mut open: Option<Gap> = None;
        let mut cur = from;
        let mut i = 0;
        loop {
            // Apply every change at or before `cur`.
            while i < ch.len() && ch[i].0 <= cur {
                let (t, c) = ch[i];
                match c {
                    Change::Compute(d) => compute += d,
                    Change::Activity(a, d) => activity[a as usize] += d,
                    Change::Lock(w, d) => {
                        let wk = workers.entry(w).or_default();
                        wk.waits += d;
                        if d < 0 {
                            wk.acquired = Some(wk.acquired.map_or(t, |a| a.max(t)));
                        }
                    }
                    Change::Region(w, d, s) => {
                        let wk = workers.entry(w).or_default();
                        wk.regions += d;
                        if d > 0 {
                            wk.region_start = s;
                        }
                    }
                    Change::Synthesis(d) => synthesis += d,
                    Change::Queue(d) => queue += d,
                    Change::Elsewhere(d) => elsewhere += d,
                }
                i += 1;
            }
            if cur >= to {
                break;
            }
            let next = ch.get(i).map_or(to, |c| c.0.min(to));
            if compute > 0 {
                out.busy += next - cur;
                if let Some(g) = open.take() {
                    out.gaps.push(g);
                }
            } else {
                let cause = classify(&activity, &workers, queue, elsewhere, synthesis);
                out.idle += next - cur;
                *out.by_cause.get_mut(cause.key()).expect("every key") += next - cur;
                let g = open.get_or_insert_with(|| Gap {
                    start: cur,
                    end: cur,
                    segments: vec![],
                });
                g.end = next;
                match g.segments.last_mut() {
                    Some(s) if s.cause == cause => s.end = next,
                    _ => g.segments.push(GapSegment {
                        start: cur,
                        end: next,
                        cause,
                    }),
                }
            }
            cur = next;
        }
        if let Some(g) = open.take() {
            out.gaps.push(g);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::JobEvent;

    const MS: Nanos = 1_000_000;

    fn span(lane: Lane, stage: Stage, start: Nanos, end: Nanos, job: u64) -> Event {
        Event::Span(Span {
            lane,
            stage,
            start: start * MS,
            end: end * MS,
            job: Some(job),
            partition: Some(0),
            bytes: 0,
        })
    }

    fn compute(d: &str) -> Lane {
        Lane::Compute { device: d.into() }
    }

    fn worker(d: &str, w: u32) -> Lane {
        Lane::Worker {
            device: d.into(),
            worker: w,
        }
    }

    fn synth() -> Lane {
        Lane::Pool {
            name: "synthesis".into(),
        }
    }

    fn job(t: Nanos, job: u64, state: JobState, partition: Option<u32>) -> Event {
        Event::Job(JobEvent {
            t: t * MS,
            job,
            partition,
            state,
            detail: (state == JobState::Proving).then(|| "gpu0".to_string()),
        })
    }

    fn ms(by: &BTreeMap<&'static str, Nanos>, k: &str) -> Nanos {
        by[k] / MS
    }

    /// Two workers under one lock: worker 1 uploads while worker 0's kernels run, then waits
    /// for the lock that worker 0 holds while it does host work; synthesis feeds them.
    fn scenario() -> Vec<Event> {
        vec![
            job(0, 0, JobState::Submitted, None),
            span(synth(), Stage::Synthesis, 0, 10, 0),
            job(10, 0, JobState::Synthesized, Some(0)),
            job(12, 0, JobState::Proving, Some(0)),
            // worker 0: lock 12..13, upload 13..16, prep 16..18, kernels 18..30, d2h 30..32
            span(worker("gpu0", 0), Stage::LockWait, 12, 13, 0),
            span(worker("gpu0", 0), Stage::H2d, 13, 16, 0),
            span(
                Lane::H2d {
                    device: "gpu0".into(),
                },
                Stage::H2d,
                13,
                16,
                0,
            ),
            span(worker("gpu0", 0), Stage::Prep, 16, 18, 0),
            span(compute("gpu0"), Stage::NttH, 18, 24, 0),
            span(worker("gpu0", 0), Stage::NttH, 18, 24, 0),
            span(compute("gpu0"), Stage::MsmH, 24, 30, 0),
            span(worker("gpu0", 0), Stage::MsmH, 24, 30, 0),
            // host-side work of worker 0 under the lock, with no span: 30..33 region only
            span(worker("gpu0", 0), Stage::D2h, 33, 35, 0),
            // job 1: synthesised 20, taken at 25 by worker 1 which waits on the lock 25..35
            job(5, 1, JobState::Submitted, None),
            span(synth(), Stage::Synthesis, 10, 20, 1),
            job(20, 1, JobState::Synthesized, Some(0)),
            job(25, 1, JobState::Proving, Some(0)),
            span(worker("gpu0", 1), Stage::LockWait, 25, 35, 1),
            span(compute("gpu0"), Stage::MsmL, 35, 40, 1),
            span(worker("gpu0", 1), Stage::MsmL, 35, 40, 1),
            job(45, 0, JobState::Verified, None),
            job(46, 1, JobState::Verified, None),
        ]
    }

    #[test]
    fn causes_follow_the_spans_and_the_priority() {
        let r = attribute(&scenario(), 0, 50 * MS);
        assert_eq!(r.len(), 1);
        let d = &r[0];
        assert_eq!(d.device, "gpu0");
        assert_eq!(d.busy / MS, 17);
        assert_eq!(d.idle / MS, 33);
        assert_eq!(d.busy + d.idle, 50 * MS, "busy and gaps tile the window");
        let by = &d.by_cause;
        assert_eq!(
            ms(by, "waiting_synthesis"),
            10,
            "0..10 synthesis, nothing queued"
        );
        assert_eq!(ms(by, "queued"), 2, "10..12 ready, no worker yet");
        assert_eq!(ms(by, "upload"), 3, "13..16");
        assert_eq!(ms(by, "prep"), 2, "16..18");
        // 12..13: worker 0 waits for the lock (no holder in sight); 30..33: worker 1 waits
        // while worker 0 holds it.
        assert_eq!(ms(by, "lock_held"), 1 + 3);
        assert_eq!(
            ms(by, "download"),
            2,
            "33..35 the holder's d2h is more specific"
        );
        assert_eq!(ms(by, "no_work"), 10, "40..50 nothing left");
        assert_eq!(ms(by, "unattributed"), 0);
        assert_eq!(by.values().sum::<Nanos>(), d.idle);
        let g = d.gap_at(31 * MS).expect("a gap at 31 ms");
        assert_eq!((g.start / MS, g.end / MS), (30, 35));
        assert_eq!(
            g.cause_at(31 * MS),
            Some(GapCause::LockHeld { holder: Some(0) })
        );
        assert_eq!(g.cause(), GapCause::LockHeld { holder: Some(0) });
        assert!(d.gap_at(20 * MS).is_none(), "kernels run at 20 ms");
        let first = &d.gaps[0];
        assert_eq!(first.cause(), GapCause::WaitingSynthesis);
        assert_eq!(
            first.cause_at(12 * MS + 1),
            Some(GapCause::LockHeld { holder: None })
        );
    }

    #[test]
    fn a_device_idle_while_another_holds_waiting_work_shows_imbalance() {
        // gpu1 runs kernels 0..40 with worker 0; its worker 1 holds job 1's partition from 10,
        // waiting for gpu1's lock until 40. gpu0 has nothing to do but would have run it.
        let mut events = scenario();
        let w1 = |w| worker("gpu1", w);
        events.extend([
            span(compute("gpu1"), Stage::MsmH, 0, 40, 2),
            span(w1(0), Stage::MsmH, 0, 40, 2),
            span(w1(1), Stage::LockWait, 10, 40, 3),
            span(compute("gpu1"), Stage::MsmL, 40, 45, 3),
            span(w1(1), Stage::MsmL, 40, 45, 3),
        ]);
        let r = attribute(&events, 0, 50 * MS);
        let gpu0 = r.iter().find(|d| d.device == "gpu0").unwrap();
        // While gpu1 waits (10..40) gpu0 always has a more specific cause of its own (its
        // queue, its lock, its copies); after 40 nobody waits, so 40..50 stays no work.
        assert_eq!(ms(&gpu0.by_cause, "imbalance"), 0);
        assert_eq!(ms(&gpu0.by_cause, "no_work"), 10);
        // A window where gpu0 is idle with nothing queued or synthesising, gpu1 waiting.
        let mut quiet = vec![
            span(compute("gpu1"), Stage::MsmH, 0, 40, 2),
            span(w1(1), Stage::LockWait, 10, 40, 3),
            span(compute("gpu0"), Stage::MsmH, 0, 5, 4),
        ];
        quiet.push(span(worker("gpu0", 0), Stage::MsmH, 0, 5, 4));
        let r = attribute(&quiet, 0, 40 * MS);
        let gpu0 = r.iter().find(|d| d.device == "gpu0").unwrap();
        assert_eq!(ms(&gpu0.by_cause, "imbalance"), 30, "10..40");
        assert_eq!(ms(&gpu0.by_cause, "no_work"), 5, "5..10");
        let gpu1 = r.iter().find(|d| d.device == "gpu1").unwrap();
        assert_eq!(
            gpu1.by_cause["imbalance"], 0,
            "its own waits are not imbalance"
        );
        let g = gpu0.gap_at(20 * MS).unwrap();
        assert_eq!(g.cause(), GapCause::Imbalance);
        assert_eq!(g.cause().to_string(), "another device holds queued work");
    }

    #[test]
    fn arrival_order_does_not_matter() {
        let events = scenario();
        let forward = attribute(&events, 0, 50 * MS);
        let mut rev = events.clone();
        rev.reverse();
        assert_eq!(attribute(&rev, 0, 50 * MS), forward);
        // An interleaving as the bus delivers it: spans at their end, the rest at their time.
        let mut by_time = events;
        by_time.sort_by_key(|e| e.time());
        assert_eq!(attribute(&by_time, 0, 50 * MS), forward);
    }

    #[test]
    fn windows_clip_and_split_consistently() {
        let events = scenario();
        let whole = attribute(&events, 0, 50 * MS);
        let a = attribute(&events, 0, 31 * MS);
        let b = attribute(&events, 31 * MS, 50 * MS);
        for k in GapCause::KEYS {
            assert_eq!(
                whole[0].by_cause[k],
                a[0].by_cause[k] + b[0].by_cause[k],
                "{k}"
            );
        }
        assert_eq!(whole[0].busy, a[0].busy + b[0].busy);
    }

    #[test]
    fn pruning_keeps_later_windows_exact() {
        let events = scenario();
        let whole = attribute(&events, 32 * MS, 50 * MS);
        let mut a = GapAnalyzer::new();
        events.iter().for_each(|e| a.observe(e));
        a.prune(32 * MS);
        assert_eq!(a.attribute(32 * MS, 50 * MS), whole);
    }

    #[test]
    fn open_regions_and_first_syntheses_hold_a_live_horizon_back() {
        let mut a = GapAnalyzer::new();
        assert_eq!(a.incomplete_since(), None);
        a.observe(&job(1, 0, JobState::Submitted, None));
        assert_eq!(a.incomplete_since(), Some(MS));
        a.observe(&job(4, 0, JobState::Synthesized, Some(0)));
        assert_eq!(
            a.incomplete_since(),
            None,
            "the first partition is synthesised"
        );
        a.observe(&job(5, 0, JobState::Proving, Some(0)));
        assert_eq!(
            a.incomplete_since(),
            Some(5 * MS),
            "a region without its spans"
        );
        a.observe(&span(worker("gpu0", 0), Stage::LockWait, 5, 6, 0));
        assert_eq!(a.incomplete_since(), None, "its spans arrived");
    }

    #[test]
    fn synthesis_running_is_told_from_no_work() {
        let events = vec![
            span(synth(), Stage::Synthesis, 5, 8, 0),
            span(compute("cpu0"), Stage::MsmH, 10, 12, 0),
        ];
        let d = &attribute(&events, 0, 20 * MS)[0];
        assert_eq!(ms(&d.by_cause, "no_work"), 5 + 2 + 8);
        assert_eq!(ms(&d.by_cause, "waiting_synthesis"), 3);
    }

    #[test]
    fn a_cancelled_job_leaves_the_queue_when_it_ends() {
        let events = vec![
            span(compute("cpu0"), Stage::MsmH, 0, 1, 9),
            job(2, 3, JobState::Synthesized, Some(0)),
            job(6, 3, JobState::Cancelled, None),
        ];
        let d = &attribute(&events, 0, 10 * MS)[0];
        assert_eq!(ms(&d.by_cause, "queued"), 4);
        assert_eq!(ms(&d.by_cause, "no_work"), 1 + 4);
    }
}
