//! The run report of `bench --json` (and of `replay --summary`): built from the same events
//! the dashboard sees, so a live run and its recording summarise alike.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::telemetry::gaps::{DeviceGaps, GapAnalyzer};
use crate::telemetry::{ConfigChange, Event, Nanos, ProofRecord, Span};

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Stat {
    pub fn of(values: &mut [f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: values[0],
            max: values[n - 1],
        })
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProofRow {
    pub job: u64,
    pub partition: u32,
    pub device: String,
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub stages: BTreeMap<&'static str, f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub proofs: usize,
    pub verified: usize,
    pub failed: usize,
    pub wall_seconds: f64,
    pub proofs_per_hour: f64,
    pub stages: BTreeMap<&'static str, Stat>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceReport {
    pub id: String,
    /// Merged compute spans over the wall time of the run.
    pub busy_ratio: f64,
    pub busy_seconds: f64,
    /// The rest of the wall time: the sum of the gaps.
    pub idle_seconds: f64,
    pub partitions: usize,
    /// Idle seconds per cause (every key of `GapCause::KEYS`), see `telemetry::gaps`.
    pub gaps: BTreeMap<&'static str, f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConfigEventRow {
    pub t: f64,
    pub key: String,
    pub from: String,
    pub to: String,
    pub by: String,
    pub applied: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Collects what a report needs from the event stream.
#[derive(Default)]
pub struct ReportBuilder {
    proofs: Vec<ProofRecord>,
    gaps: GapAnalyzer,
    config: Vec<ConfigChange>,
}

impl ReportBuilder {
    pub fn observe(&mut self, ev: &Event) {
        match ev {
            Event::Span(s) => self.add_span(s),
            Event::Job(_) => self.gaps.observe(ev),
            Event::Proof(p) => self.add_proof(p.clone()),
            Event::Config(c) => self.add_config(c.clone()),
            _ => {}
        }
    }

    /// A span: compute spans make devices busy; the others explain their gaps.
    pub fn add_span(&mut self, s: &Span) {
        self.gaps.add_span(s);
    }

    /// A job lifecycle event (queueing tells "waiting for synthesis" from "no work").
    pub fn add_job_event(&mut self, ev: &Event) {
        if let Event::Job(_) = ev {
            self.gaps.observe(ev);
        }
    }

    pub fn add_proof(&mut self, p: ProofRecord) {
        self.proofs.push(p);
    }

    pub fn add_config(&mut self, c: ConfigChange) {
        self.config.push(c);
    }

    pub fn proofs(&self) -> &[ProofRecord] {
        &self.proofs
    }

    pub fn rows(&self) -> Vec<ProofRow> {
        let mut rows: Vec<ProofRow> = self
            .proofs
            .iter()
            .map(|p| ProofRow {
                job: p.job,
                partition: p.partition,
                device: p.device.clone(),
                verified: p.verified,
                error: p.error.clone(),
                stages: p.stages.iter().map(|(k, v)| (k.key(), *v)).collect(),
            })
            .collect();
        rows.sort_by_key(|r| (r.job, r.partition));
        rows
    }

    pub fn summary(&self, wall_seconds: f64) -> Summary {
        let mut per_stage: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
        for p in &self.proofs {
            for (stage, v) in &p.stages {
                per_stage.entry(stage.key()).or_default().push(*v);
            }
        }
        let verified = self.proofs.iter().filter(|p| p.verified).count();
        Summary {
            proofs: self.proofs.len(),
            verified,
            failed: self.proofs.len() - verified,
            wall_seconds,
            proofs_per_hour: if wall_seconds > 0.0 {
                verified as f64 * 3600.0 / wall_seconds
            } else {
                0.0
            },
            stages: per_stage
                .into_iter()
                .filter_map(|(k, mut v)| Stat::of(&mut v).map(|s| (k, s)))
                .collect(),
        }
    }

    /// Busy fraction and idle time per cause, per device, over the window [from, to].
    pub fn devices(&self, from: Nanos, to: Nanos) -> Vec<DeviceReport> {
        let wall = to.saturating_sub(from).max(1) as f64;
        self.gap_details(from, to)
            .into_iter()
            .map(|g| DeviceReport {
                busy_ratio: g.busy as f64 / wall,
                busy_seconds: g.busy as f64 / 1e9,
                idle_seconds: g.idle as f64 / 1e9,
                partitions: self.proofs.iter().filter(|p| p.device == g.device).count(),
                gaps: g.seconds_by_cause(),
                id: g.device,
            })
            .collect()
    }

    /// Every gap of every device over [from, to], with its causes: what the dashboard shows
    /// for a selected gap.
    pub fn gap_details(&self, from: Nanos, to: Nanos) -> Vec<DeviceGaps> {
        self.gaps.attribute(from, to)
    }

    pub fn config_events(&self) -> Vec<ConfigEventRow> {
        self.config
            .iter()
            .map(|c| ConfigEventRow {
                t: c.t as f64 / 1e9,
                key: c.key.clone(),
                from: c.from.clone(),
                to: c.to.clone(),
                by: c.by.clone(),
                applied: c.applied,
                error: c.error.clone(),
            })
            .collect()
    }
}

/// Length of the union of intervals, clipped to [from, to].
pub fn merged_length(spans: &[(Nanos, Nanos)], from: Nanos, to: Nanos) -> Nanos {
    let mut v: Vec<(Nanos, Nanos)> = spans
        .iter()
        .map(|&(s, e)| (s.max(from), e.min(to)))
        .filter(|(s, e)| e > s)
        .collect();
    v.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(Nanos, Nanos)> = None;
    for (s, e) in v {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_length_counts_overlaps_once() {
        assert_eq!(merged_length(&[(0, 10), (5, 15), (20, 30)], 0, 100), 25);
        assert_eq!(merged_length(&[(0, 10), (5, 15), (20, 30)], 8, 25), 12);
        assert_eq!(merged_length(&[], 0, 10), 0);
    }

    #[test]
    fn stat_median() {
        assert_eq!(
            Stat::of(&mut [3.0, 1.0, 2.0]).unwrap(),
            Stat {
                median: 2.0,
                min: 1.0,
                max: 3.0
            }
        );
        assert_eq!(Stat::of(&mut [4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert!(Stat::of(&mut []).is_none());
    }
}
