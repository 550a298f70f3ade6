//! Jobs by kind (`porep`, `window-post`, `synthetic`, …), from their submission events: each
//! kind's proofs, rate, stage times, latency from submission to end and the idle gaps charged
//! to it (`kind_gaps`), for `summary.kinds`.

use std::collections::BTreeMap;

use super::kind_gaps::CauseTimes;
use super::{KindSummary, Stat};
use crate::text::clip;
use crate::{Nanos, ProofRecord, Stage};

/// The kinds jobs were submitted as, and each such job's submission and end.
#[derive(Default)]
pub(super) struct JobKinds {
    /// Distinct kinds, at most `MAX_KINDS`; later ones count as `other`.
    names: Vec<String>,
    /// Job → (index into `names`, submitted, ended).
    jobs: BTreeMap<u64, (usize, Nanos, Option<Nanos>)>,
}

/// Distinct kinds a report keeps apart (a rig has four; a crafted file may name thousands).
const MAX_KINDS: usize = 32;
/// The longest kind name kept.
const KIND_KEPT: usize = 64;

impl JobKinds {
    pub(super) fn submitted(&mut self, job: u64, kind: &str, t: Nanos) {
        let mut kind = kind.to_string();
        clip(&mut kind, KIND_KEPT);
        let i = match self.names.iter().position(|k| *k == kind) {
            Some(i) => i,
            None if self.names.len() < MAX_KINDS => {
                self.names.push(kind);
                self.names.len() - 1
            }
            None => match self.names.iter().position(|k| k == "other") {
                Some(i) => i,
                None => {
                    self.names.push("other".into());
                    self.names.len() - 1
                }
            },
        };
        self.jobs.insert(job, (i, t, None));
    }

    pub(super) fn ended(&mut self, job: u64, t: Nanos) {
        if let Some(j) = self.jobs.get_mut(&job) {
            j.2.get_or_insert(t);
        }
    }

    /// The kind job `job` was submitted as, if its submission named one.
    pub(super) fn kind_of(&self, job: u64) -> Option<&str> {
        let &(i, _, _) = self.jobs.get(&job)?;
        self.names.get(i).map(String::as_str)
    }

    /// Whether any job named its kind.
    pub(super) fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Each kind's summary over `proofs`, latencies over the jobs that ended in `window`, idle
    /// time from `gaps` (`kind_gaps::charge`).
    pub(super) fn summaries<'a>(
        &self,
        proofs: impl Iterator<Item = &'a ProofRecord>,
        stage_keys: impl Fn(&ProofRecord) -> BTreeMap<&'static str, f64>,
        wall_seconds: f64,
        window: (Nanos, Nanos),
        gaps: &BTreeMap<Option<&str>, CauseTimes>,
    ) -> BTreeMap<String, KindSummary> {
        #[derive(Default)]
        struct Acc {
            jobs: usize,
            proofs: usize,
            verified: usize,
            stages: BTreeMap<&'static str, Vec<f64>>,
            latency: Vec<f64>,
        }
        let mut acc: Vec<Acc> = self.names.iter().map(|_| Acc::default()).collect();
        for p in proofs {
            let Some(&(k, _, _)) = self.jobs.get(&p.job) else {
                continue;
            };
            let a = &mut acc[k];
            a.proofs += 1;
            a.verified += usize::from(p.verified);
            for (stage, v) in stage_keys(p) {
                a.stages.entry(stage).or_default().push(v);
            }
        }
        for &(k, submitted, ended) in self.jobs.values() {
            if let Some(end) = ended.filter(|e| *e > window.0 && *e <= window.1) {
                acc[k].jobs += 1;
                acc[k]
                    .latency
                    .push(end.saturating_sub(submitted) as f64 / 1e9);
            }
        }
        self.names
            .iter()
            .zip(acc)
            .filter(|(_, a)| a.proofs > 0 || a.jobs > 0)
            .map(|(name, mut a)| {
                let per_hour = match wall_seconds > 0.0 {
                    true => a.verified as f64 * 3600.0 / wall_seconds,
                    false => 0.0,
                };
                let summary = KindSummary {
                    jobs: a.jobs,
                    proofs: a.proofs,
                    verified: a.verified,
                    proofs_per_hour: per_hour,
                    stages: a
                        .stages
                        .into_iter()
                        .filter_map(|(k, mut v)| Stat::of(&mut v).map(|s| (k, s)))
                        .collect(),
                    latency: Stat::of(&mut a.latency),
                    gaps: crate::gaps::GapCause::KEYS
                        .iter()
                        .map(|k| {
                            let t = gaps.get(&Some(name.as_str())).and_then(|g| g.get(k));
                            (*k, t.map_or(0.0, |t| *t as f64 / 1e9))
                        })
                        .collect(),
                };
                (name.clone(), summary)
            })
            .collect()
    }
}

/// The kind of job a session runs unless told otherwise: a session of it alone has nothing to
/// say per kind.
pub const DEFAULT_KIND: &str = "synthetic";

/// Whether per-kind figures tell more than the run's own: jobs of more than one kind, or of a
/// kind other than the default one. Where reports and the dashboard show their per-kind block.
pub fn kinds_tell(kinds: &BTreeMap<String, KindSummary>) -> bool {
    kinds.len() > 1 || kinds.keys().any(|k| k != DEFAULT_KIND)
}

impl KindSummary {
    /// Its `n` largest stage medians (of `Stage::PROOF_STAGES`), largest first: what a short
    /// per-kind line shows.
    pub fn main_stages(&self, n: usize) -> Vec<(&'static str, f64)> {
        let stages = Stage::PROOF_STAGES.iter().map(|s| s.key());
        largest(
            stages.filter_map(|k| self.stages.get(k).map(|v| (k, v.median))),
            n,
        )
    }

    /// Its `n` largest idle-gap causes, largest first.
    pub fn main_gaps(&self, n: usize) -> Vec<(&'static str, f64)> {
        largest(self.gaps.iter().map(|(k, s)| (*k, *s)), n)
    }
}

/// The `n` largest of `seconds` that reach half a millisecond (less prints as 0), largest
/// first; the earlier on a tie.
fn largest(
    seconds: impl Iterator<Item = (&'static str, f64)>,
    n: usize,
) -> Vec<(&'static str, f64)> {
    let mut v: Vec<_> = seconds.filter(|(_, s)| *s >= 0.0005).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.truncate(n);
    v
}
