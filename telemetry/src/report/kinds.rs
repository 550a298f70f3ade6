//! Jobs by kind (`porep`, `window-post`, `synthetic`, …), from their submission events: each
//! kind's proofs, rate, stage times and latency from submission to end, for `summary.kinds`.

use std::collections::BTreeMap;

use super::{KindSummary, Stat};
use crate::text::clip;
use crate::{Nanos, ProofRecord};

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

    /// Each kind's summary over `proofs`, latencies over the jobs that ended in `window`.
    pub(super) fn summaries<'a>(
        &self,
        proofs: impl Iterator<Item = &'a ProofRecord>,
        stage_keys: impl Fn(&ProofRecord) -> BTreeMap<&'static str, f64>,
        wall_seconds: f64,
        window: (Nanos, Nanos),
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
                };
                (name.clone(), summary)
            })
            .collect()
    }
}
