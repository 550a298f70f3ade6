//! One device's window cut into busy time and gaps: every start and end of what the analyzer
//! collected becomes a change, and between two changes the state says busy, or the cause of
//! the gap, and `reasons` what lies behind it.

use std::collections::BTreeMap;

use super::analyzer::{Activity, Track};
use super::{DeviceGaps, Gap, GapAnalyzer, GapCause, GapDetail, GapSegment};
use crate::Nanos;

/// Who holds a region: the worker its spans name, or (a region with no span on a worker's
/// lane: no lock to wait for, nothing done on the worker's own thread) its partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Who {
    Worker(u32),
    Partition(u64, u32),
}

impl Who {
    pub(super) fn worker(self) -> Option<u32> {
        match self {
            Who::Worker(w) => Some(w),
            Who::Partition(..) => None,
        }
    }
}

/// One worker of the device as the sweep passes a moment.
#[derive(Default)]
pub(super) struct Worker {
    pub(super) regions: i32,
    pub(super) region_start: Nanos,
    /// The partition of its current region.
    pub(super) partition: Option<(u64, u32)>,
    pub(super) waits: i32,
    pub(super) acquired: Option<Nanos>,
    pub(super) allocating: i32,
    /// Bytes its current allocation asks for.
    pub(super) wanted: u64,
}

impl GapAnalyzer {
    pub(super) fn device_gaps(
        &self,
        name: &str,
        track: &Track,
        from: Nanos,
        to: Nanos,
    ) -> DeviceGaps {
        #[derive(Clone, Copy)]
        enum Change {
            Compute(i32),
            Activity(Activity, i32),
            Lock(Who, i32),
            Region(Who, i32, Nanos, (u64, u32)),
            Alloc(Who, i32, u64),
            Synthesis(i32),
            Queue(i32),
            Elsewhere(i32),
            /// Something a reason reads changes (a holder's span, a submission, a level).
            Mark,
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
            let w = Who::Worker(w);
            both(s, e, Change::Lock(w, 1), Change::Lock(w, -1));
        }
        for (&k, &(s, e)) in &track.regions {
            let w = track
                .worker_of
                .get(&k)
                .map_or(Who::Partition(k.0, k.1), |w| Who::Worker(*w));
            both(
                s,
                e,
                Change::Region(w, 1, s, k),
                Change::Region(w, -1, s, k),
            );
        }
        for &(s, e, w, bytes) in &track.allocs {
            let w = Who::Worker(w);
            both(
                s,
                e,
                Change::Alloc(w, 1, bytes),
                Change::Alloc(w, -1, bytes),
            );
        }
        for &(s, e, _) in self.partition_spans.values().flatten() {
            both(s, e, Change::Mark, Change::Mark);
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
        ch.extend(self.submitted.iter().map(|t| (*t, Change::Mark)));
        ch.extend(self.levels.changes(name).map(|t| (t, Change::Mark)));
        ch.sort_by_key(|c| c.0);

        let mut compute = 0i32;
        let mut activity = [0i32; 4];
        let mut synthesis = 0i32;
        let mut queue = 0i32;
        let mut elsewhere = 0i32;
        let mut workers: BTreeMap<Who, Worker> = BTreeMap::new();

        let classify = |activity: &[i32; 4],
                        workers: &BTreeMap<Who, Worker>,
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
                    .and_then(|(_, n)| n.worker());
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
            detail: GapDetail::default(),
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
                    Change::Region(w, d, s, k) => {
                        let wk = workers.entry(w).or_default();
                        wk.regions += d;
                        if d > 0 {
                            (wk.region_start, wk.partition) = (s, Some(k));
                        }
                    }
                    Change::Alloc(w, d, bytes) => {
                        let wk = workers.entry(w).or_default();
                        wk.allocating += d;
                        if d > 0 {
                            wk.wanted = bytes;
                        }
                    }
                    Change::Mark => {}
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
                let at = super::reasons::Moment {
                    device: name,
                    workers: &workers,
                    from: cur,
                    to: next,
                };
                self.explain(cause, &at, &mut out.detail);
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
