//! Per-device timelines: a lane per engine (compute, copy engines) and per worker, plus the
//! CPU pools. Spans are kept sorted by start so a window is found by binary search. Idle gaps
//! are derived from the compute lane on demand; their causes are the contract's attribution
//! (`State::gap_causes`).

use std::collections::BTreeMap;

use provetop_telemetry::{DeviceInfo, Lane, Nanos, Span, Stage};

use super::Ring;

/// Spans kept per lane at most, whatever their age: bounds memory on a very busy lane.
const LANE_CAP: usize = 400_000;

/// A span as a lane keeps it: times in session nanoseconds, `end` never before `start`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpanRec {
    /// Session time it began (nanoseconds).
    pub start: Nanos,
    /// Session time it ended (nanoseconds), at least `start`.
    pub end: Nanos,
    /// The stage it ran.
    pub stage: Stage,
    /// The job it was part of; `None` for work of no one job.
    pub job: Option<u64>,
    /// The partition within the job; `None` for work of no one partition.
    pub partition: Option<u32>,
    /// Bytes it moved (copies) or allocated (`alloc`); 0 otherwise.
    pub bytes: u64,
}

impl SpanRec {
    fn of(s: &Span) -> Self {
        SpanRec {
            start: s.start,
            end: s.end.max(s.start),
            stage: s.stage,
            job: s.job,
            partition: s.partition,
            bytes: s.bytes,
        }
    }
}

/// One lane's spans, sorted by start, at most 400000 of them.
pub struct LaneTimeline {
    spans: Ring<SpanRec>,
    /// The longest span ever seen: every span overlapping `t` starts after `t - max_len`.
    max_len: Nanos,
}

impl Default for LaneTimeline {
    fn default() -> Self {
        LaneTimeline {
            spans: Ring::new(LANE_CAP),
            max_len: 0,
        }
    }
}

impl LaneTimeline {
    fn add(&mut self, s: SpanRec) {
        self.max_len = self.max_len.max(s.end - s.start);
        self.spans.insert_sorted(s, |s| s.start);
    }

    fn evict(&mut self, cutoff: Nanos) {
        self.spans.pop_front_while(|s| s.end < cutoff);
    }

    /// Spans held.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether no span is held.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    fn first_candidate(&self, t0: Nanos) -> usize {
        let from = t0.saturating_sub(self.max_len);
        self.spans.partition_point(|s| s.start < from)
    }

    /// Spans overlapping `[t0, t1)`, in start order.
    pub fn in_window(&self, t0: Nanos, t1: Nanos) -> impl Iterator<Item = &SpanRec> {
        self.spans
            .range(self.first_candidate(t0))
            .take_while(move |s| s.start < t1)
            .filter(move |s| s.end > t0)
    }

    /// Time covered by spans in `[t0, t1)`, overlapping spans counted once each.
    pub fn covered(&self, t0: Nanos, t1: Nanos) -> Nanos {
        self.in_window(t0, t1)
            .map(|s| s.end.min(t1) - s.start.max(t0))
            .sum()
    }

    /// The span that starts last; `None` when the lane is empty.
    pub fn last(&self) -> Option<&SpanRec> {
        self.spans.back()
    }
}

/// An interval with no compute on a device. `open` while it lasts.
#[derive(Clone, Debug, PartialEq)]
pub struct Gap {
    /// Session time the gap begins (nanoseconds): the end of the compute before it.
    pub start: Nanos,
    /// Session time it ends (nanoseconds): the next compute's start, or now while open.
    pub end: Nanos,
    /// Whether it lasts still: nothing has run on the compute lane since it began.
    pub open: bool,
}

impl Gap {
    /// Its length in nanoseconds.
    pub fn len(&self) -> Nanos {
        self.end - self.start
    }

    /// Whether it has no length.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// One device's lanes: compute, the two copy engines and each worker.
pub struct DeviceTimeline {
    /// The name lanes and samples use: `gpu0`, `cpu0`.
    pub id: String,
    /// The device's own name: `NVIDIA H200`, `CPU executor (8 threads)`.
    pub name: String,
    /// `cpu` or a GPU's kind, as the session reports it.
    pub kind: String,
    /// When the device joined the session: gaps start no earlier.
    pub since: Nanos,
    /// Kernels and CPU compute: what counts as busy for gaps.
    pub compute: LaneTimeline,
    /// Copies from host to device.
    pub h2d: LaneTimeline,
    /// Copies from device to host.
    pub d2h: LaneTimeline,
    /// Each worker's own lane by its index on the device: lock waits, allocations, planning.
    pub workers: BTreeMap<u32, LaneTimeline>,
}

impl DeviceTimeline {
    /// A device with empty lanes that joined at `since` (session nanoseconds).
    pub fn new(id: &str, name: &str, kind: &str, since: Nanos) -> Self {
        DeviceTimeline {
            id: id.to_string(),
            name: name.to_string(),
            kind: kind.to_string(),
            since,
            compute: LaneTimeline::default(),
            h2d: LaneTimeline::default(),
            d2h: LaneTimeline::default(),
            workers: BTreeMap::new(),
        }
    }

    /// Whether it is a GPU (any kind but `cpu`).
    pub fn is_gpu(&self) -> bool {
        self.kind != "cpu"
    }

    /// Calls `f(start, end, open)` for every gap that intersects `[t0, t1)`, whole (not
    /// clipped to the window); the last one is open when nothing has run since it began. Only
    /// compute stages count as busy. Allocates nothing: the views call it every frame.
    pub fn each_gap(
        &self,
        t0: Nanos,
        t1: Nanos,
        now: Nanos,
        mut f: impl FnMut(Nanos, Nanos, bool),
    ) {
        let lane = &self.compute;
        let idx = lane.first_candidate(t0);
        // Spans before `idx` end before t0; the frontier is the latest end among the last few.
        let mut frontier = lane
            .spans
            .range(idx.saturating_sub(16))
            .take(idx.min(16))
            .filter(|s| s.stage.is_compute())
            .map(|s| s.end)
            .max()
            .unwrap_or(self.since)
            .max(self.since);
        let mut emit = |start: Nanos, end: Nanos, open: bool| {
            if end > start && end > t0 && start < t1 {
                f(start, end, open);
            }
        };
        for s in lane.spans.range(idx).filter(|s| s.stage.is_compute()) {
            if s.start > frontier {
                emit(frontier, s.start, false);
            }
            frontier = frontier.max(s.end);
            if s.start >= t1 {
                return;
            }
        }
        emit(frontier, now, true);
    }

    /// Every gap that intersects `[t0, t1)`, whole.
    pub fn gaps(&self, t0: Nanos, t1: Nanos, now: Nanos) -> Vec<Gap> {
        let mut out = vec![];
        self.each_gap(t0, t1, now, |start, end, open| {
            out.push(Gap { start, end, open })
        });
        out
    }

    /// Idle time over `[t0, t1)`, and the gaps at least `min` long: how many, the longest.
    pub fn idle(&self, t0: Nanos, t1: Nanos, now: Nanos, min: Nanos) -> Idle {
        let end = t1.min(now);
        let start = t0.max(self.since);
        let mut idle = Idle::default();
        if end <= start {
            return idle;
        }
        idle.window = end - start;
        self.each_gap(start, end, now, |a, b, _| {
            idle.idle += b.min(end).saturating_sub(a.max(start));
            if b - a >= min {
                idle.gaps += 1;
                if idle.longest.is_none_or(|(_, l)| b - a > l) {
                    idle.longest = Some((a, b - a));
                }
            }
        });
        idle
    }

    /// Busy fraction of the compute lane over `[t0, t1)`: one minus the idle share.
    pub fn compute_busy(&self, t0: Nanos, t1: Nanos, now: Nanos) -> f64 {
        self.idle(t0, t1, now, Nanos::MAX).busy()
    }
}

/// A device's idle time over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Idle {
    /// Length of the window measured (nanoseconds), clipped to the device's start and to now.
    pub window: Nanos,
    /// Time with no compute in that window (nanoseconds).
    pub idle: Nanos,
    /// Gaps at least the asked length.
    pub gaps: usize,
    /// The longest of those gaps, as (start, length) in nanoseconds; `None` when there is none.
    pub longest: Option<(Nanos, Nanos)>,
}

impl Idle {
    /// The busy fraction of the window, 0 to 1; 0 for an empty window.
    pub fn busy(&self) -> f64 {
        if self.window == 0 {
            0.0
        } else {
            1.0 - self.idle as f64 / self.window as f64
        }
    }
}

/// Which of a device's lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneKind {
    /// The compute lane.
    Compute,
    /// The host-to-device copy engine.
    H2d,
    /// The device-to-host copy engine.
    D2h,
    /// A worker's lane, by its index on the device.
    Worker(u32),
}

/// One row of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneRef {
    /// A lane of `Timelines::devices[i]`.
    Device(usize, LaneKind),
    /// The CPU pool `Timelines::pools[i]`.
    Pool(usize),
}

/// Every device's lanes and the CPU pools', as the timeline draws them.
#[derive(Default)]
pub struct Timelines {
    /// Devices in the session's order, then those that appeared mid-session.
    pub devices: Vec<DeviceTimeline>,
    /// CPU pools by name, in the order their first span came.
    pub pools: Vec<(String, LaneTimeline)>,
}

impl Timelines {
    /// A timeline per device of the session, from time 0; no pool yet.
    pub fn new(devices: &[DeviceInfo]) -> Self {
        Timelines {
            devices: devices
                .iter()
                .map(|d| DeviceTimeline::new(&d.id, &d.name, &d.kind, 0))
                .collect(),
            pools: vec![],
        }
    }

    /// Work began at `t` (the first job, or the first span a recording holds): the devices'
    /// idle time counts from then, so setup and the time before a recording are not idle.
    pub fn work_began(&mut self, t: Nanos) {
        for d in &mut self.devices {
            d.since = d.since.max(t);
        }
    }

    /// The index of device `id` (`gpu0`) in `devices`; `None` when it has not been seen.
    pub fn device_index(&self, id: &str) -> Option<usize> {
        self.devices.iter().position(|d| d.id == id)
    }

    /// A device that appears mid-session (more cpu executors) gets a timeline from then.
    fn device_mut(&mut self, id: &str, t: Nanos) -> &mut DeviceTimeline {
        let i = match self.device_index(id) {
            Some(i) => i,
            None => {
                let kind = if id.starts_with("cpu") { "cpu" } else { "gpu" };
                self.devices.push(DeviceTimeline::new(id, id, kind, t));
                self.devices.len() - 1
            }
        };
        &mut self.devices[i]
    }

    /// Adds a span to its lane, making the device or pool when it is the first one's.
    pub fn add(&mut self, s: &Span) {
        let rec = SpanRec::of(s);
        let lane = match &s.lane {
            Lane::Compute { device } => &mut self.device_mut(device, s.start).compute,
            Lane::H2d { device } => &mut self.device_mut(device, s.start).h2d,
            Lane::D2h { device } => &mut self.device_mut(device, s.start).d2h,
            Lane::Worker { device, worker } => self
                .device_mut(device, s.start)
                .workers
                .entry(*worker)
                .or_default(),
            Lane::Pool { name } => match self.pools.iter().position(|(n, _)| n == name) {
                Some(i) => &mut self.pools[i].1,
                None => {
                    self.pools.push((name.clone(), LaneTimeline::default()));
                    &mut self.pools.last_mut().expect("just pushed").1
                }
            },
        };
        lane.add(rec);
    }

    /// Drops spans that ended before `cutoff` (session nanoseconds), on every lane.
    pub fn evict(&mut self, cutoff: Nanos) {
        for d in &mut self.devices {
            for l in [&mut d.compute, &mut d.h2d, &mut d.d2h] {
                l.evict(cutoff);
            }
            for l in d.workers.values_mut() {
                l.evict(cutoff);
            }
        }
        for (_, l) in &mut self.pools {
            l.evict(cutoff);
        }
    }

    /// The rows to draw, in order: per device its compute lane, its copy engines (always on a
    /// GPU, on a CPU executor only when used), its workers; then the CPU pools.
    pub fn lanes(&self) -> Vec<LaneRef> {
        let mut out = vec![];
        for (i, d) in self.devices.iter().enumerate() {
            out.push(LaneRef::Device(i, LaneKind::Compute));
            if d.is_gpu() || !d.h2d.is_empty() {
                out.push(LaneRef::Device(i, LaneKind::H2d));
            }
            if d.is_gpu() || !d.d2h.is_empty() {
                out.push(LaneRef::Device(i, LaneKind::D2h));
            }
            for w in d.workers.keys() {
                out.push(LaneRef::Device(i, LaneKind::Worker(*w)));
            }
        }
        out.extend((0..self.pools.len()).map(LaneRef::Pool));
        out
    }

    /// The spans of lane `r`; `None` for a lane there is not (a worker that has not run).
    pub fn lane(&self, r: LaneRef) -> Option<&LaneTimeline> {
        match r {
            LaneRef::Device(i, k) => {
                let d = self.devices.get(i)?;
                match k {
                    LaneKind::Compute => Some(&d.compute),
                    LaneKind::H2d => Some(&d.h2d),
                    LaneKind::D2h => Some(&d.d2h),
                    LaneKind::Worker(w) => d.workers.get(&w),
                }
            }
            LaneRef::Pool(i) => self.pools.get(i).map(|(_, l)| l),
        }
    }

    /// `(device or pool name, lane name)` for the label column.
    pub fn label(&self, r: LaneRef) -> (String, String) {
        match r {
            LaneRef::Device(i, k) => {
                let id = self.devices.get(i).map_or("?", |d| d.id.as_str());
                let lane = match k {
                    LaneKind::Compute => "compute".to_string(),
                    LaneKind::H2d => "h2d".to_string(),
                    LaneKind::D2h => "d2h".to_string(),
                    LaneKind::Worker(w) => format!("w{w}"),
                };
                (id.to_string(), lane)
            }
            LaneRef::Pool(i) => (
                "pool".to_string(),
                self.pools.get(i).map_or("?".into(), |(n, _)| n.clone()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compute(device: &str, stage: Stage, start: Nanos, end: Nanos) -> Span {
        Span {
            lane: Lane::Compute {
                device: device.into(),
            },
            stage,
            start,
            end,
            job: None,
            partition: None,
            bytes: 0,
        }
    }

    #[test]
    fn gaps_are_the_complement_of_compute_spans() {
        let mut t = Timelines::default();
        // Out of order, overlapping, and a non-compute stage that does not count as busy.
        t.add(&compute("gpu0", Stage::MsmH, 50, 60));
        t.add(&compute("gpu0", Stage::NttH, 10, 20));
        t.add(&compute("gpu0", Stage::MsmL, 15, 30));
        t.add(&compute("gpu0", Stage::Prep, 30, 45));
        let d = &mut t.devices[0];
        d.since = 0;
        let g = d.gaps(0, 100, 100);
        let iv: Vec<_> = g.iter().map(|g| (g.start, g.end, g.open)).collect();
        assert_eq!(iv, vec![(0, 10, false), (30, 50, false), (60, 100, true)]);
        // A gap that began before the window is reported whole.
        assert_eq!(d.gaps(40, 45, 100)[0].start, 30);
        assert!((d.compute_busy(0, 100, 100) - 0.3).abs() < 1e-9);
    }

    #[test]
    fn window_finds_long_spans_that_started_before_it() {
        let mut l = LaneTimeline::default();
        l.add(SpanRec {
            start: 0,
            end: 1000,
            stage: Stage::Synthesis,
            job: None,
            partition: None,
            bytes: 0,
        });
        for i in 0..100 {
            l.add(SpanRec {
                start: 100 + i,
                end: 101 + i,
                stage: Stage::Synthesis,
                job: None,
                partition: None,
                bytes: 0,
            });
        }
        assert_eq!(l.in_window(500, 600).count(), 1);
        assert_eq!(l.covered(150, 160), 10 + 10);
    }
}
