//! Per-device timelines: a lane per engine (compute, copy engines) and per worker, plus the
//! CPU pools. Spans are kept sorted by start so a window is found by binary search. Idle gaps
//! are derived from the compute lane on demand; their causes are the contract's attribution
//! (`State::gap_causes`).

use std::collections::BTreeMap;

use provetop_telemetry::{DeviceInfo, Lane, Nanos, Span, Stage};

use super::Ring;

/// Spans kept per lane at most, whatever their age: bounds memory on a very busy lane.
const LANE_CAP: usize = 400_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpanRec {
    pub start: Nanos,
    pub end: Nanos,
    pub stage: Stage,
    pub job: Option<u64>,
    pub partition: Option<u32>,
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

    pub fn len(&self) -> usize {
        self.spans.len()
    }

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

    pub fn last(&self) -> Option<&SpanRec> {
        self.spans.back()
    }
}

/// An interval with no compute on a device. `open` while it lasts.
#[derive(Clone, Debug, PartialEq)]
pub struct Gap {
    pub start: Nanos,
    pub end: Nanos,
    pub open: bool,
}

impl Gap {
    pub fn len(&self) -> Nanos {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

pub struct DeviceTimeline {
    pub id: String,
    pub name: String,
    pub kind: String,
    /// When the device joined the session: gaps start no earlier.
    pub since: Nanos,
    pub compute: LaneTimeline,
    pub h2d: LaneTimeline,
    pub d2h: LaneTimeline,
    pub workers: BTreeMap<u32, LaneTimeline>,
}

impl DeviceTimeline {
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
    pub window: Nanos,
    pub idle: Nanos,
    /// Gaps at least the asked length, and the longest of them: (start, length).
    pub gaps: usize,
    pub longest: Option<(Nanos, Nanos)>,
}

impl Idle {
    pub fn busy(&self) -> f64 {
        if self.window == 0 {
            0.0
        } else {
            1.0 - self.idle as f64 / self.window as f64
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneKind {
    Compute,
    H2d,
    D2h,
    Worker(u32),
}

/// One row of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneRef {
    Device(usize, LaneKind),
    Pool(usize),
}

#[derive(Default)]
pub struct Timelines {
    pub devices: Vec<DeviceTimeline>,
    pub pools: Vec<(String, LaneTimeline)>,
}

impl Timelines {
    pub fn new(devices: &[DeviceInfo]) -> Self {
        Timelines {
            devices: devices
                .iter()
                .map(|d| DeviceTimeline::new(&d.id, &d.name, &d.kind, 0))
                .collect(),
            pools: vec![],
        }
    }

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
