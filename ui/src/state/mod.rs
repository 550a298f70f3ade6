//! Everything the views read, built from the event stream alone. `apply` takes events in any
//! order they arrive; `advance` moves the session clock and forgets what is older than the
//! history the dashboard keeps.

mod config;
mod logs;
mod pipeline;
mod ring;
mod samples;
mod timeline;

pub use config::ConfigState;
pub use logs::{LogEntry, Logs};
pub use pipeline::{JobRow, PartRow, Pipeline, StageStats, MEDIAN_OVER};
pub use ring::Ring;
pub use samples::{Samples, Series};
pub use timeline::{
    DeviceTimeline, Gap, Idle, LaneKind, LaneRef, LaneTimeline, SpanRec, Timelines,
};

use provetop_telemetry::gaps::GapAnalyzer;
use provetop_telemetry::record::Hole;
use provetop_telemetry::{Event, LogLine, Nanos, SessionInfo};

/// How far back the dashboard keeps spans and samples: the widest zoom plus room to scroll.
pub const DEFAULT_HISTORY: Nanos = 20 * 60 * 1_000_000_000;

pub struct State {
    pub session: SessionInfo,
    /// The session clock: the newest time the source vouches for.
    pub now: Nanos,
    pub history: Nanos,
    pub timelines: Timelines,
    pub samples: Samples,
    pub pipeline: Pipeline,
    pub config: ConfigState,
    pub logs: Logs,
    /// Events the source says it could not deliver (a slow subscriber loses, never blocks).
    pub dropped: u64,
    /// Where a recording is blind (its recorder fell behind), and the totals.
    pub holes: Ring<Hole>,
    pub not_recorded: Hole,
    /// Why each device was idle: the engine's attribution, a pure function of the events.
    gap_causes: GapAnalyzer,
}

impl State {
    pub fn new(session: SessionInfo) -> Self {
        State {
            timelines: Timelines::new(&session.devices),
            config: ConfigState::new(session.config.clone()),
            session,
            now: 0,
            history: DEFAULT_HISTORY,
            samples: Samples::default(),
            pipeline: Pipeline::default(),
            logs: Logs::default(),
            dropped: 0,
            holes: Ring::new(1000),
            not_recorded: Hole::default(),
            gap_causes: GapAnalyzer::new(),
        }
    }

    /// The state after a whole stream, its clock at `now`: how the snapshot tests and the
    /// render benchmark build the dashboard over a made-up session.
    pub fn replayed(session: SessionInfo, events: &[Event], now: Nanos) -> Self {
        let mut st = State::new(session);
        for e in events {
            st.apply(e);
        }
        st.advance(now);
        st
    }

    pub fn apply(&mut self, event: &Event) {
        self.gap_causes.observe(event);
        match event {
            Event::Span(s) => self.timelines.add(s),
            Event::Sample(s) => self.samples.add(s),
            Event::Config(c) => self.config.apply(c),
            Event::Job(j) => self.pipeline.job(j),
            Event::Proof(p) => self.pipeline.proof(p),
            Event::Log(l) => self.logs.log(l.clone()),
            Event::Mark(m) => self.logs.mark(m.clone()),
        }
        self.now = self.now.max(event.time());
    }

    /// A stretch a recording lost events in: drawn on the timeline, counted, and logged.
    pub fn hole(&mut self, h: &Hole) {
        self.holes.insert_sorted(*h, |h| h.from);
        self.not_recorded.add_counts(h);
        self.logs.log(LogLine {
            t: h.to,
            level: "WARN".into(),
            message: format!(
                "not recorded: {} over {} (the recorder fell behind)",
                h.describe(),
                crate::view::fmt::nanos(h.to.saturating_sub(h.from))
            ),
        });
        self.now = self.now.max(h.to);
    }

    /// Moves the clock forward (never back) and drops history older than `history`.
    pub fn advance(&mut self, now: Nanos) {
        self.now = self.now.max(now);
        let cutoff = self.now.saturating_sub(self.history);
        self.timelines.evict(cutoff);
        self.samples.evict(cutoff);
        self.gap_causes.prune(cutoff);
    }

    /// What device `d` waited for during the gap `[start, end)`: each cause with its share,
    /// the largest first, as the contract's gap attribution gives them.
    pub fn gap_causes(&self, d: usize, start: Nanos, end: Nanos) -> Vec<(String, f64)> {
        let Some(dev) = self.timelines.devices.get(d) else {
            return vec![];
        };
        let len = end.saturating_sub(start).max(1);
        let mut by: Vec<(String, Nanos)> = vec![];
        for g in self
            .gap_causes
            .attribute(start, end.max(start + 1))
            .into_iter()
            .filter(|g| g.device == dev.id)
        {
            for seg in g.gaps.iter().flat_map(|g| &g.segments) {
                let n = seg.end.min(end).saturating_sub(seg.start.max(start));
                let name = seg.cause.to_string();
                match by.iter_mut().find(|(c, _)| *c == name) {
                    Some((_, t)) => *t += n,
                    None => by.push((name, n)),
                }
            }
        }
        by.retain(|(_, n)| *n > 0);
        by.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        by.into_iter()
            .map(|(c, n)| (c, n as f64 / len as f64))
            .collect()
    }
}
