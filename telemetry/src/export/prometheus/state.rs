//! What the exporter knows, folded from the bus: proof counters, stage histograms, the latest
//! samples, the configuration, and the settled busy and idle-gap counters.

use std::collections::{BTreeMap, VecDeque};

use super::families::{classify, Labels};
use crate::config::EngineConfig;
use crate::gaps::{GapAnalyzer, GapCause};
use crate::{metrics, Event, Nanos};

pub(super) const STAGE_BUCKETS: [f64; 18] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0,
    100.0, 250.0, 500.0,
];

#[derive(Clone, Debug, Default)]
pub(super) struct Histogram {
    pub(super) buckets: [u64; STAGE_BUCKETS.len()],
    pub(super) count: u64,
    pub(super) sum: f64,
}

impl Histogram {
    fn observe(&mut self, v: f64) {
        for (i, le) in STAGE_BUCKETS.iter().enumerate() {
            if v <= *le {
                self.buckets[i] += 1;
            }
        }
        self.count += 1;
        self.sum += v;
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct DeviceTotals {
    pub(super) busy: Nanos,
    pub(super) idle: [Nanos; GapCause::KEYS.len()],
    /// Settled idle time by (cause, reason), for the causes whose reasons never wait on later
    /// events (`no_work`'s do: whether another job comes): lock_held, alloc, waiting_synthesis.
    pub(super) reasons: BTreeMap<(&'static str, String), Nanos>,
    /// Settled steps of the last 30 s: (busy, wall).
    pub(super) recent: VecDeque<(Nanos, Nanos)>,
}

/// Everything the exporter knows, updated from the bus.
pub struct MetricsState {
    pub(super) verified: u64,
    pub(super) failed: u64,
    pub(super) stages: BTreeMap<&'static str, Histogram>,
    pub(super) samples: BTreeMap<(usize, Option<String>, Labels), f64>,
    pub(super) ddr_source: String,
    pub(super) config: BTreeMap<String, String>,
    pub(super) gaps: GapAnalyzer,
    pub(super) horizon: Nanos,
    pub(super) devices: BTreeMap<String, DeviceTotals>,
    pub(super) dropped: u64,
}

const BUSY_WINDOW: Nanos = 30_000_000_000;
const MIN_SETTLE_LAG: Nanos = 2_000_000_000;

fn config_labels(cfg: &EngineConfig) -> BTreeMap<String, String> {
    crate::config::KEYS
        .iter()
        .map(|k| {
            let v = cfg.get(k).unwrap_or_default();
            let v = if *k == "devices" && v.is_empty() {
                "all".to_string()
            } else {
                v
            };
            (k.to_string(), v)
        })
        .collect()
}

impl MetricsState {
    /// State for a session that starts at `start` with `config`.
    pub fn new(config: &EngineConfig, start: Nanos) -> Self {
        MetricsState {
            verified: 0,
            failed: 0,
            stages: BTreeMap::new(),
            samples: BTreeMap::new(),
            ddr_source: "probe".into(),
            config: config_labels(config),
            gaps: GapAnalyzer::new(),
            horizon: start,
            devices: BTreeMap::new(),
            dropped: 0,
        }
    }

    /// Takes in one event: proofs, samples and applied changes now; gaps once settled.
    pub fn observe(&mut self, ev: &Event) {
        match ev {
            Event::Proof(p) => {
                self.gaps.observe(ev);
                if p.verified {
                    self.verified += 1;
                } else {
                    self.failed += 1;
                }
                for (stage, secs) in &p.stages {
                    self.stages.entry(stage.key()).or_default().observe(*secs);
                }
            }
            Event::Sample(s) => {
                self.gaps.add_sample(s);
                if let Some(src) = s.metric.strip_prefix(metrics::HOST_DDR_SOURCE_PREFIX) {
                    if src != self.ddr_source {
                        self.ddr_source = src.to_string();
                    }
                    return;
                }
                if let Some((f, labels)) = classify(&s.metric, &self.ddr_source) {
                    self.samples.insert((f, s.device.clone(), labels), s.value);
                }
            }
            Event::Config(c) if c.applied => {
                let v = if c.key == "devices" && c.to.is_empty() {
                    "all".to_string()
                } else {
                    c.to.clone()
                };
                self.config.insert(c.key.clone(), v);
            }
            Event::Span(_) | Event::Job(_) => self.gaps.observe(ev),
            _ => {}
        }
    }

    /// Attributes the time up to `now` less the settling lag, once, and never past a
    /// region or a first synthesis whose spans are still to come.
    pub fn settle(&mut self, now: Nanos) {
        let lag = MIN_SETTLE_LAG.max(2 * self.gaps.longest_span());
        let mut to = now.saturating_sub(lag);
        if let Some(t) = self.gaps.incomplete_since() {
            to = to.min(t);
        }
        self.settle_until(to);
    }

    /// Attributes [horizon, to] and moves the horizon there.
    pub fn settle_until(&mut self, to: Nanos) {
        if to <= self.horizon {
            return;
        }
        for d in self.gaps.attribute(self.horizon, to) {
            let t = self.devices.entry(d.device.clone()).or_default();
            t.busy += d.busy;
            for (i, k) in GapCause::KEYS.iter().enumerate() {
                t.idle[i] += d.by_cause[k];
            }
            let g = &d.detail;
            let alloc = g.alloc.iter().flat_map(|a| &a.reasons);
            let reasons = (g
                .lock_held
                .iter()
                .map(|(r, n)| ("lock_held", r.clone(), *n)))
            .chain(alloc.map(|(r, n)| ("alloc", r.to_string(), *n)))
            .chain(
                (g.waiting_synthesis.iter()).map(|(r, n)| ("waiting_synthesis", r.to_string(), *n)),
            );
            for (cause, reason, n) in reasons {
                *t.reasons.entry((cause, reason)).or_default() += n;
            }
            t.recent.push_back((d.busy, to - self.horizon));
            while t.recent.len() > 1
                && t.recent.iter().skip(1).map(|r| r.1).sum::<Nanos>() >= BUSY_WINDOW
            {
                t.recent.pop_front();
            }
        }
        self.gaps.prune(to);
        self.horizon = to;
    }

    /// The events the exporter's subscription has lost so far (a total, not an increment).
    pub fn set_dropped(&mut self, n: u64) {
        self.dropped = n;
    }
}
