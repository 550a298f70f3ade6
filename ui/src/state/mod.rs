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
pub use timeline::{DeviceTimeline, Gap, LaneKind, LaneRef, LaneTimeline, SpanRec, Timelines};

use provetop_engine::telemetry::{Event, Nanos, SessionInfo};

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
        }
    }

    pub fn apply(&mut self, event: &Event) {
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

    /// Moves the clock forward (never back) and drops history older than `history`.
    pub fn advance(&mut self, now: Nanos) {
        self.now = self.now.max(now);
        let cutoff = self.now.saturating_sub(self.history);
        self.timelines.evict(cutoff);
        self.samples.evict(cutoff);
    }
}
