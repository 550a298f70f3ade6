//! Everything the views read, built from the event stream alone. `apply` takes events in any
//! order they arrive; `advance` moves the session clock and forgets what is older than the
//! history the dashboard keeps.

mod config;
pub mod form;
mod logs;
mod pipeline;
mod ring;
mod samples;
mod timeline;
pub mod ui;

pub use config::ConfigState;
pub use logs::{LogEntry, Logs};
pub use pipeline::{JobRow, PartRow, Pipeline, StageStats, MEDIAN_OVER};
pub use ring::Ring;
pub use samples::{Samples, Series};
pub use timeline::{
    DeviceTimeline, Gap, Idle, LaneKind, LaneRef, LaneTimeline, SpanRec, Timelines,
};

use std::collections::BTreeMap;

use provetop_telemetry::advice::Verdict;
use provetop_telemetry::gaps::{GapAnalyzer, GapDetail};
use provetop_telemetry::record::Hole;
use provetop_telemetry::report::{KindSummary, ReportBuilder, Segment};
use provetop_telemetry::{Event, LogLine, Nanos, SessionInfo};

/// How often the segments between changes are worked out again.
const SEGMENTS_EVERY: Nanos = 2_000_000_000;

/// How far back the dashboard keeps spans and samples: the widest zoom plus room to scroll.
pub const DEFAULT_HISTORY: Nanos = 20 * 60 * 1_000_000_000;

/// What the views read: the session's events folded, up to the session clock.
pub struct State {
    /// The session as the source described it at its start: devices, config, workload.
    pub session: SessionInfo,
    /// The session clock: the newest time the source vouches for.
    pub now: Nanos,
    /// How far back spans and samples are kept (nanoseconds), [`DEFAULT_HISTORY`] unless set.
    pub history: Nanos,
    /// Spans per device and pool lane, and the idle gaps between them.
    pub timelines: Timelines,
    /// Sample history: one series per (metric, device).
    pub samples: Samples,
    /// Jobs and their partitions through the stages.
    pub pipeline: Pipeline,
    /// The engine's configuration and its history of changes.
    pub config: ConfigState,
    /// Log lines and marks.
    pub logs: Logs,
    /// Events the source says it could not deliver (a slow subscriber loses, never blocks).
    pub dropped: u64,
    /// Where a recording is blind (its recorder fell behind), and the totals.
    pub holes: Ring<Hole>,
    /// What every hole left out, summed.
    pub not_recorded: Hole,
    /// Why each device was idle: the engine's attribution, a pure function of the events.
    gap_causes: GapAnalyzer,
    /// The run report `bench` and `replay --summary` build, fed the same events, for the
    /// segments between changes.
    report: ReportBuilder,
    /// The session split at every change and mark (empty until one), as of `segments_at`.
    pub segments: Vec<Segment>,
    segments_at: Nanos,
    segments_dirty: bool,
    /// The advisor's verdict since the last applied change (or the start), as of `verdict_at`;
    /// `None` until the first proof.
    pub verdict: Option<Verdict>,
    /// Each kind of job over the session (jobs, latency, stage medians, the idle gaps charged
    /// to it), as `replay --summary` gives them; refreshed with the advisor.
    pub kinds: BTreeMap<String, KindSummary>,
    verdict_at: Nanos,
    /// Whether any work (a job, a span) has been seen: idle time counts from the first.
    work_seen: bool,
}

/// One cause of a gap: its label, its share of the gap, and the reason behind it if known.
#[derive(Clone, Debug, PartialEq)]
pub struct GapShare {
    /// The cause's label, as the gap analyser names it.
    pub cause: String,
    /// The fraction of the gap it took, 0 to 1.
    pub share: f64,
    /// The reason behind it (`holder in msm_h`, `short of cores 80 %`); `None` where none is known.
    pub why: Option<String>,
}

impl State {
    /// The state before any event: the clock at 0, nothing seen.
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
            report: ReportBuilder::default(),
            segments: vec![],
            segments_at: 0,
            segments_dirty: false,
            verdict: None,
            kinds: BTreeMap::new(),
            verdict_at: 0,
            work_seen: false,
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

    /// Folds one event in, in whatever order events arrive; the clock moves to its time if later.
    pub fn apply(&mut self, event: &Event) {
        self.gap_causes.observe(event);
        self.report.observe(event);
        if matches!(event, Event::Config(c) if c.applied) || matches!(event, Event::Mark(_)) {
            self.segments_dirty = true;
        }
        if !self.work_seen {
            let began = match event {
                Event::Span(s) => Some(s.start),
                Event::Job(j) => Some(j.t),
                _ => None,
            };
            if let Some(t) = began {
                self.work_seen = true;
                self.timelines.work_began(t);
            }
        }
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
                crate::fmt::nanos(h.to.saturating_sub(h.from))
            ),
        });
        self.now = self.now.max(h.to);
    }

    /// Moves the clock forward (never back) and drops history older than `history`.
    pub fn advance(&mut self, now: Nanos) {
        self.now = self.now.max(now);
        // Segments exist once something split the session. Working them out costs with the
        // session's length, so a longer session (or a fast replay) refreshes them less often.
        let due = self.now >= self.segments_at + SEGMENTS_EVERY.max(self.segments_at / 50);
        if self.segments_dirty || (!self.segments.is_empty() && due) {
            self.segments = self.report.segments(0, self.now);
            self.segments_at = self.now;
            self.segments_dirty = false;
        }
        // The advisor and the kinds' figures cost what the segments cost: refreshed as rarely.
        let due = self.now >= self.verdict_at + SEGMENTS_EVERY.max(self.verdict_at / 50);
        if due && !self.report.proofs().is_empty() {
            self.verdict = Some(self.advise());
            if self.report.has_kinds() {
                self.kinds = self.report.summary(0, self.now).kinds;
            }
            self.verdict_at = self.now;
        }
        let cutoff = self.now.saturating_sub(self.history);
        self.timelines.evict(cutoff);
        self.samples.evict(cutoff);
        self.gap_causes.prune(cutoff);
    }

    /// Works the advisor's verdict out again now, over the window as it is after a jump of the
    /// clock (a replay's seek): the verdict from before it judged another stretch.
    pub fn refresh_advice(&mut self) {
        self.verdict = None;
        if !self.report.proofs().is_empty() {
            self.verdict = Some(self.advise());
            self.verdict_at = self.now;
        }
    }

    /// The advisor over the stretch since the last applied change, against the configuration
    /// in force: what the dashboard's advisor line shows and its key applies.
    fn advise(&self) -> Verdict {
        let since = self
            .config
            .history
            .iter()
            .filter(|c| c.applied)
            .map(|c| c.t)
            .max()
            .unwrap_or(0);
        let cores = self.session.machine.cores.max(1);
        self.report
            .verdict(since, self.now, &self.config.current, cores, None)
    }

    /// What device `d` waited for during the gap `[start, end)`: each cause with its share,
    /// the largest first, as the contract's gap attribution gives them (causes under half a
    /// percent left out), and the reason behind each where the analyser knows one
    /// (`gap_detail`).
    pub fn gap_causes(&self, d: usize, start: Nanos, end: Nanos) -> Vec<GapShare> {
        let Some(dev) = self.timelines.devices.get(d) else {
            return vec![];
        };
        // Nothing past the clock: a paused replay's playhead is its now.
        let end = end.min(self.now);
        let len = end.saturating_sub(start).max(1);
        let mut by: Vec<(String, &'static str, Nanos)> = vec![];
        let mut detail = GapDetail::default();
        for g in self
            .gap_causes
            .attribute(start, end.max(start + 1))
            .into_iter()
            .filter(|g| g.device == dev.id)
        {
            detail = g.detail.clone();
            for seg in g.gaps.iter().flat_map(|g| &g.segments) {
                let n = seg.end.min(end).saturating_sub(seg.start.max(start));
                let name = seg.cause.to_string();
                match by.iter_mut().find(|(c, _, _)| *c == name) {
                    Some((_, _, t)) => *t += n,
                    None => by.push((name, seg.cause.key(), n)),
                }
            }
        }
        // A cause under half a percent would read `0%` and push the real ones off the line.
        by.retain(|(_, _, n)| *n * 200 >= len);
        by.sort_by_key(|(_, _, n)| std::cmp::Reverse(*n));
        by.into_iter()
            .map(|(cause, key, n)| GapShare {
                cause,
                share: n as f64 / len as f64,
                why: detail.why(key),
            })
            .collect()
    }
}
