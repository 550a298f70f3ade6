//! Segments: a run split at every applied config change and every mark, each stretch with its
//! own proofs per hour, busy fractions and gap causes, and what changed from the one before.
//! The answer to "did my change help?", shared by `bench`, `replay --summary` and the
//! dashboard.

use serde::Serialize;
use std::collections::BTreeMap;

use super::builder::ReportBuilder;
use super::effect::{Effect, Side};
use crate::Nanos;

/// One stretch between changes.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Segment {
    /// Where it starts (seconds on the run's clock).
    pub start: f64,
    /// Where it ends, exclusive (seconds on the run's clock).
    pub end: f64,
    /// What began it (`lock single → two-lock`, `mark: warm`); None for the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Proofs done inside it, verified or failed.
    pub proofs: usize,
    /// Verified proofs done inside it.
    pub verified: usize,
    /// Verified proofs per hour of its length.
    pub proofs_per_hour: f64,
    /// Each device's busy fraction and gaps inside it.
    pub devices: Vec<SegmentDevice>,
    /// Against the segment before; None for the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<SegmentChange>,
    /// Its verified proofs' finish times, sorted: what its noise is judged by.
    #[serde(skip)]
    pub times: Vec<Nanos>,
    /// Where it starts and ends on the session clock.
    #[serde(skip)]
    pub span: (Nanos, Nanos),
}

/// One device over a segment.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SegmentDevice {
    /// The device id (`gpu0`).
    pub id: String,
    /// Merged compute spans over the segment's length (0..1).
    pub busy_ratio: f64,
    /// Time without compute inside the segment (seconds).
    pub idle_seconds: f64,
    /// Idle seconds per cause, causes without time left out.
    pub gaps: BTreeMap<&'static str, f64>,
}

impl SegmentDevice {
    /// The cause with the most idle time and its share of the idle time.
    pub fn top_cause(&self) -> Option<(&'static str, f64)> {
        let (k, s) = self.gaps.iter().max_by(|a, b| a.1.total_cmp(b.1))?;
        (self.idle_seconds > 0.0).then(|| (*k, s / self.idle_seconds))
    }
}

/// How a segment differs from the one before.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SegmentChange {
    /// Relative change of proofs per hour, in percent (None where the one before had none).
    pub proofs_per_hour_pct: Option<f64>,
    /// Proofs per hour since against before, with the proof counts and the noise.
    pub effect: Effect,
    /// Busy fraction change per device, in percentage points.
    pub busy_points: BTreeMap<String, f64>,
    /// `lock single → two-lock: proofs/h −3.9 %, gpu0 busy −3.0 points; waiting_synthesis
    /// still 61 % of idle time`.
    pub line: String,
}

/// Idle time under a millisecond per cause is noise, not a cause.
const MIN_CAUSE_SECONDS: f64 = 0.0005;

impl ReportBuilder {
    /// Where the run splits inside (from, to): applied config changes (those at one instant
    /// together) and marks, in time order.
    pub fn boundaries(&self, from: Nanos, to: Nanos) -> Vec<(Nanos, String)> {
        let mut at: BTreeMap<Nanos, Vec<String>> = BTreeMap::new();
        for c in self.config.iter().filter(|c| c.applied) {
            at.entry(c.t)
                .or_default()
                .push(format!("{} {} → {}", c.key, c.from, c.to));
        }
        for m in &self.marks {
            at.entry(m.t)
                .or_default()
                .push(format!("mark: {}", m.label));
        }
        at.into_iter()
            .filter(|(t, _)| *t > from && *t < to)
            .map(|(t, what)| (t, what.join(", ")))
            .collect()
    }

    /// The run over [from, to] split at every boundary.
    pub fn segments(&self, from: Nanos, to: Nanos) -> Vec<Segment> {
        let bounds = self.boundaries(from, to);
        let mut edges = vec![(from, None)];
        edges.extend(bounds.into_iter().map(|(t, w)| (t, Some(w))));
        let mut out: Vec<Segment> = vec![];
        for (i, (start, after)) in edges.iter().enumerate() {
            let end = edges.get(i + 1).map_or(to, |e| e.0);
            let mut seg = self.segment(*start, end, after.clone());
            seg.change = out.last().map(|prev| change(prev, &seg));
            out.push(seg);
        }
        out
    }

    fn segment(&self, start: Nanos, end: Nanos, after: Option<String>) -> Segment {
        let inside: Vec<_> = self
            .proofs
            .iter()
            .filter(|p| p.t >= start && p.t < end)
            .collect();
        let verified = inside.iter().filter(|p| p.verified).count();
        let mut times: Vec<Nanos> = inside.iter().filter(|p| p.verified).map(|p| p.t).collect();
        times.sort_unstable();
        let secs = end.saturating_sub(start) as f64 / 1e9;
        let devices = self
            .gap_details(start, end)
            .into_iter()
            .map(|g| {
                let wall = end.saturating_sub(start).max(1) as f64;
                let mut gaps = g.seconds_by_cause();
                gaps.retain(|_, s| *s >= MIN_CAUSE_SECONDS);
                SegmentDevice {
                    busy_ratio: g.busy as f64 / wall,
                    idle_seconds: g.idle as f64 / 1e9,
                    gaps,
                    id: g.device,
                }
            })
            .collect();
        Segment {
            start: start as f64 / 1e9,
            end: end as f64 / 1e9,
            after,
            proofs: inside.len(),
            verified,
            proofs_per_hour: if secs > 0.0 {
                verified as f64 * 3600.0 / secs
            } else {
                0.0
            },
            devices,
            change: None,
            times,
            span: (start, end),
        }
    }
}

fn change(prev: &Segment, seg: &Segment) -> SegmentChange {
    let pct = (prev.proofs_per_hour > 0.0)
        .then(|| (seg.proofs_per_hour / prev.proofs_per_hour - 1.0) * 100.0);
    let side = |s: &'_ Segment| (s.span, s.times.clone());
    let ((b0, b1), bt) = side(prev);
    let ((a0, a1), at) = side(seg);
    let effect = Effect::between(
        &Side {
            start: b0,
            end: b1,
            times: &bt,
        },
        &Side {
            start: a0,
            end: a1,
            times: &at,
        },
    );
    let mut busy_points = BTreeMap::new();
    let mut parts = vec![effect.line()];
    let mut causes = vec![];
    for d in &seg.devices {
        let Some(before) = prev.devices.iter().find(|p| p.id == d.id) else {
            continue;
        };
        let points = (d.busy_ratio - before.busy_ratio) * 100.0;
        busy_points.insert(d.id.clone(), points);
        parts.push(format!("{} busy {}", d.id, signed(points, " points")));
        if let Some((cause, share)) = d.top_cause() {
            let still = before.top_cause().is_some_and(|(c, _)| c == cause);
            causes.push(format!(
                "{}{cause} {} {:.0} % of idle time",
                if seg.devices.len() > 1 {
                    format!("{} ", d.id)
                } else {
                    String::new()
                },
                if still { "still" } else { "now" },
                share * 100.0
            ));
        }
    }
    let mut line = format!(
        "{}: {}",
        seg.after.as_deref().unwrap_or("change"),
        parts.join(", ")
    );
    if !causes.is_empty() {
        line.push_str(&format!("; {}", causes.join(", ")));
    }
    SegmentChange {
        proofs_per_hour_pct: pct,
        effect,
        busy_points,
        line,
    }
}

/// `+2.5 %`, `−3.9 points` (a true minus sign).
pub(super) fn signed(v: f64, unit: &str) -> String {
    let s = format!("{:.1}", v.abs());
    let sign = if s == "0.0" {
        "±"
    } else if v < 0.0 {
        "−"
    } else {
        "+"
    };
    format!("{sign}{s}{unit}")
}

impl Segment {
    /// `0:00.0 → 2:27.6  15,039 proofs/h · gpu0 busy 37.0 % · idle: waiting_synthesis 61 %`.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} → {}  {} proofs/h ({} proofs)",
            clock(self.start),
            clock(self.end),
            thousands(self.proofs_per_hour),
            self.verified
        );
        for d in &self.devices {
            line.push_str(&format!(" · {} busy {:.1} %", d.id, d.busy_ratio * 100.0));
            let mut causes: Vec<_> = d.gaps.iter().collect();
            causes.sort_by(|a, b| b.1.total_cmp(a.1));
            let shares: Vec<String> = causes
                .iter()
                .take(3)
                .map(|(k, s)| format!("{k} {:.0} %", **s / d.idle_seconds.max(1e-9) * 100.0))
                .collect();
            if !shares.is_empty() {
                line.push_str(&format!(", idle: {}", shares.join(", ")));
            }
        }
        line
    }
}

/// `14,574`.
pub(super) fn thousands(v: f64) -> String {
    let digits = (v.round() as u64).to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `2:27.6`: minutes, seconds and a tenth.
fn clock(secs: f64) -> String {
    let tenths = (secs * 10.0).round() as u64;
    let (m, s, t) = (tenths / 600, (tenths / 10) % 60, tenths % 10);
    format!("{m}:{s:02}.{t}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConfigChange, Event, Lane, Mark, ProofRecord, Span, Stage};

    fn proof(t: Nanos) -> Event {
        Event::Proof(ProofRecord {
            t,
            job: t,
            partition: 0,
            device: "gpu0".into(),
            verified: true,
            error: None,
            stages: Default::default(),
        })
    }

    fn busy(start: Nanos, end: Nanos) -> Event {
        Event::Span(Span {
            lane: Lane::Compute {
                device: "gpu0".into(),
            },
            stage: Stage::MsmH,
            start,
            end,
            job: Some(0),
            partition: Some(0),
            bytes: 0,
        })
    }

    const S: Nanos = 1_000_000_000;

    #[test]
    fn a_change_and_a_mark_split_the_run_and_say_what_changed() {
        let mut r = ReportBuilder::default();
        // 0–10 s: a proof a second, busy half the time; 10–20 s: one every 2 s, busy a
        // quarter; a mark at 15 s.
        for i in 0..10 {
            r.observe(&busy(i * S, i * S + S / 2));
            r.observe(&proof(i * S + S / 2));
        }
        for i in 0..5 {
            let t = 10 * S + i * 2 * S;
            r.observe(&busy(t, t + S / 2));
            r.observe(&proof(t + S / 2));
        }
        r.observe(&Event::Config(ConfigChange {
            t: 10 * S,
            key: "lock".into(),
            from: "single".into(),
            to: "two-lock".into(),
            by: "ui".into(),
            applied: true,
            error: None,
        }));
        // A refused change does not split.
        r.observe(&Event::Config(ConfigChange {
            t: 12 * S,
            key: "gpu_workers_per_device".into(),
            from: "2".into(),
            to: "99".into(),
            by: "ui".into(),
            applied: false,
            error: Some("no".into()),
        }));
        r.observe(&Event::Mark(Mark {
            t: 15 * S,
            label: "warm".into(),
        }));
        let segs = r.segments(0, 20 * S);
        let spans: Vec<_> = segs.iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(spans, vec![(0.0, 10.0), (10.0, 15.0), (15.0, 20.0)]);
        assert_eq!(segs[0].proofs_per_hour, 3600.0);
        assert_eq!(segs[1].proofs_per_hour, 3.0 * 3600.0 / 5.0);
        assert!((segs[0].devices[0].busy_ratio - 0.5).abs() < 1e-9);
        assert_eq!(segs[1].after.as_deref(), Some("lock single → two-lock"));
        assert_eq!(segs[2].after.as_deref(), Some("mark: warm"));
        let c = segs[1].change.as_ref().unwrap();
        assert!((c.proofs_per_hour_pct.unwrap() + 40.0).abs() < 1e-9);
        assert!(
            c.line
                .starts_with("lock single → two-lock: since 2,160/h (3 proofs) vs before 3,600/h (10 proofs): too few proofs to tell (4 a side needed), gpu0 busy −"),
            "{}",
            c.line
        );
        assert!(segs[0].change.is_none());
        assert!(
            segs[0]
                .line()
                .starts_with("0:00.0 → 0:10.0  3,600 proofs/h (10 proofs) · gpu0 busy 50.0 %"),
            "{}",
            segs[0].line()
        );
    }

    #[test]
    fn a_run_without_changes_is_one_segment() {
        let mut r = ReportBuilder::default();
        r.observe(&busy(0, S));
        r.observe(&proof(S));
        let segs = r.segments(0, 2 * S);
        assert_eq!(segs.len(), 1);
        assert_eq!(segs[0].after, None);
        assert_eq!(segs[0].verified, 1);
    }
}
