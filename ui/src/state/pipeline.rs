//! Jobs and partitions with their stage, finished proofs, throughput and per-stage medians.

use std::collections::BTreeMap;

use provetop_telemetry::{JobEvent, JobState, Nanos, ProofRecord, Stage};

use super::Ring;

/// Finished jobs kept for the jobs table (open ones are always kept).
const FINISHED_JOBS_KEPT: usize = 200;
/// Medians are over the most recent proofs, so they follow a configuration change.
pub const MEDIAN_OVER: usize = 200;

/// One partition of a job, as the jobs table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PartRow {
    /// The partition's latest state.
    pub state: JobState,
    /// The device that proved or is proving it; `None` before it is proving.
    pub device: Option<String>,
    /// Session time it entered that state (nanoseconds).
    pub since: Nanos,
}

/// One job of the jobs table, with its partitions.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    /// The job's id, as the engine numbers it.
    pub job: u64,
    /// Session time it was submitted (nanoseconds), or first seen.
    pub submitted: Nanos,
    /// The job's own state, or as far as its partitions got (synthesised, proving) while open.
    pub state: JobState,
    /// Session time it was verified, failed or was cancelled; `None` while open.
    pub ended: Option<Nanos>,
    /// Its partitions by index, each from its first event.
    pub partitions: BTreeMap<u32, PartRow>,
    /// What it proves and its priority, as its submission named them (`synthetic-k24 ·
    /// normal`, `porep_seal_commit/job-3 · critical`).
    pub what: Option<String>,
    /// Its kind (`porep`, `winning-post`, `synthetic`), where its submission named one.
    pub kind: Option<String>,
    /// Its name where its submission gave one (a served request's id).
    pub name: Option<String>,
}

impl JobRow {
    /// How the views name it: its request id where it has one, else the engine's `#id`.
    pub fn label(&self) -> String {
        JobEvent::label(self.job, self.name.as_deref())
    }

    /// Whether the job has not ended yet.
    pub fn is_open(&self) -> bool {
        self.ended.is_none()
    }
}

/// Time one stage took over recent verified proofs, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageStats {
    /// Which stage, one of `Stage::PROOF_STAGES`.
    pub stage: Stage,
    /// Median, in seconds.
    pub median: f64,
    /// Shortest, in seconds.
    pub min: f64,
    /// Longest, in seconds.
    pub max: f64,
    /// Proofs the figures are over, at most [`MEDIAN_OVER`].
    pub n: usize,
}

#[derive(Clone, Debug)]
struct Finished {
    t: Nanos,
    verified: bool,
    stages: BTreeMap<Stage, f64>,
}

/// Jobs and partitions through the stages, proof counts and per-stage times.
pub struct Pipeline {
    /// Jobs by id: every open one and the latest 200 finished.
    pub jobs: BTreeMap<u64, JobRow>,
    /// Partition proofs verified in the session.
    pub verified: u64,
    /// Partition proofs that failed in the session.
    pub failed: u64,
    /// Jobs cancelled in the session.
    pub cancelled_jobs: u64,
    /// Session time the first job was submitted (nanoseconds); `None` before any.
    pub first_submit: Option<Nanos>,
    /// Session time the first proof verified (nanoseconds); `None` before any.
    pub first_verified: Option<Nanos>,
    /// The error of the latest failed proof; `None` before one, or when it gave no reason.
    pub last_error: Option<String>,
    proofs: Ring<Finished>,
    stats: Vec<StageStats>,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline {
            jobs: BTreeMap::new(),
            verified: 0,
            failed: 0,
            cancelled_jobs: 0,
            first_submit: None,
            first_verified: None,
            last_error: None,
            proofs: Ring::new(4096),
            stats: vec![],
        }
    }
}

impl Pipeline {
    /// Folds a job or partition event into its row; a job's end closes it.
    pub fn job(&mut self, e: &JobEvent) {
        if e.state == JobState::Submitted && e.partition.is_none() {
            self.first_submit.get_or_insert(e.t);
        }
        let row = self.jobs.entry(e.job).or_insert_with(|| JobRow {
            job: e.job,
            submitted: e.t,
            state: JobState::Submitted,
            ended: None,
            partitions: BTreeMap::new(),
            what: None,
            kind: None,
            name: None,
        });
        if e.state == JobState::Submitted && e.partition.is_none() {
            if e.detail.is_some() {
                row.what = e.detail.clone();
            }
            if e.kind.is_some() {
                row.kind = e.kind.clone();
            }
            if e.name.is_some() {
                row.name = e.name.clone();
            }
        }
        match e.partition {
            Some(p) => {
                let part = row.partitions.entry(p).or_insert(PartRow {
                    state: e.state,
                    device: None,
                    since: e.t,
                });
                part.state = e.state;
                part.since = e.t;
                if e.state == JobState::Proving {
                    part.device = e.detail.clone();
                }
                if row.ended.is_none()
                    && matches!(e.state, JobState::Synthesized | JobState::Proving)
                {
                    row.state = furthest(row.state, e.state);
                }
            }
            None => {
                row.state = e.state;
                if matches!(
                    e.state,
                    JobState::Verified | JobState::Failed | JobState::Cancelled
                ) {
                    row.ended = Some(e.t);
                    if e.state == JobState::Cancelled {
                        self.cancelled_jobs += 1;
                        for p in row.partitions.values_mut() {
                            if matches!(p.state, JobState::Submitted | JobState::Synthesized) {
                                p.state = JobState::Cancelled;
                            }
                        }
                    }
                }
            }
        }
        self.trim();
    }

    fn trim(&mut self) {
        let finished = self.jobs.values().filter(|j| !j.is_open()).count();
        if finished > FINISHED_JOBS_KEPT {
            let drop: Vec<u64> = self
                .jobs
                .values()
                .filter(|j| !j.is_open())
                .take(finished - FINISHED_JOBS_KEPT)
                .map(|j| j.job)
                .collect();
            for j in drop {
                self.jobs.remove(&j);
            }
        }
    }

    /// Folds a finished proof in: counts, its partition's state and the stage times.
    pub fn proof(&mut self, p: &ProofRecord) {
        if p.verified {
            self.verified += 1;
            self.first_verified.get_or_insert(p.t);
        } else {
            self.failed += 1;
            self.last_error = p.error.clone();
        }
        if let Some(row) = self.jobs.get_mut(&p.job) {
            let part = row.partitions.entry(p.partition).or_insert(PartRow {
                state: JobState::Proving,
                device: None,
                since: p.t,
            });
            part.state = if p.verified {
                JobState::Verified
            } else {
                JobState::Failed
            };
            part.since = p.t;
            if !p.device.is_empty() {
                part.device = Some(p.device.clone());
            }
        }
        self.proofs.push(Finished {
            t: p.t,
            verified: p.verified,
            stages: p.stages.clone(),
        });
        self.recompute_stats();
    }

    fn recompute_stats(&mut self) {
        let recent: Vec<&Finished> = self
            .proofs
            .iter()
            .rev()
            .filter(|f| f.verified)
            .take(MEDIAN_OVER)
            .collect();
        self.stats = Stage::PROOF_STAGES
            .iter()
            .filter_map(|&stage| {
                let mut v: Vec<f64> = recent
                    .iter()
                    .filter_map(|f| f.stages.get(&stage).copied())
                    .collect();
                if v.is_empty() {
                    return None;
                }
                v.sort_by(f64::total_cmp);
                let n = v.len();
                let median = if n % 2 == 1 {
                    v[n / 2]
                } else {
                    (v[n / 2 - 1] + v[n / 2]) / 2.0
                };
                Some(StageStats {
                    stage,
                    median,
                    min: v[0],
                    max: v[n - 1],
                    n,
                })
            })
            .collect();
    }

    /// Per-stage median, min and max over the last `MEDIAN_OVER` verified proofs, in
    /// pipeline order; stages that did not run are absent.
    pub fn stage_stats(&self) -> &[StageStats] {
        &self.stats
    }

    /// Verified proofs per hour since the first job was submitted.
    pub fn proofs_per_hour(&self, now: Nanos) -> Option<f64> {
        let start = self.first_submit?;
        let secs = now.saturating_sub(start) as f64 / 1e9;
        (secs > 0.0 && self.verified > 0).then(|| self.verified as f64 * 3600.0 / secs)
    }

    /// Verified proofs per hour over the last `window` (the rate after a change settles), or
    /// since the first job when that is shorter.
    pub fn recent_per_hour(&self, now: Nanos, window: Nanos) -> f64 {
        let window = self
            .first_submit
            .map_or(window, |s| window.min(now.saturating_sub(s)));
        let from = now.saturating_sub(window);
        let n = self
            .proofs
            .iter()
            .rev()
            .take_while(|f| f.t >= from)
            .filter(|f| f.verified)
            .count();
        n as f64 * 3600.0 * 1e9 / window.max(1) as f64
    }

    /// Jobs not ended yet, by id.
    pub fn open_jobs(&self) -> impl Iterator<Item = &JobRow> {
        self.jobs.values().filter(|j| j.is_open())
    }

    /// How the views name job `job`: its request id where its submission gave one.
    pub fn label(&self, job: u64) -> String {
        let name = self.jobs.get(&job).and_then(|j| j.name.as_deref());
        JobEvent::label(job, name)
    }

    /// The jobs table's order: open jobs oldest first, then finished ones newest first.
    pub fn table(&self) -> Vec<&JobRow> {
        let mut v: Vec<&JobRow> = self.open_jobs().collect();
        v.extend(self.jobs.values().rev().filter(|j| !j.is_open()));
        v
    }

    /// Partitions per stage among open jobs: (waiting, synthesised, proving).
    pub fn depths(&self) -> (usize, usize, usize) {
        let mut d = (0, 0, 0);
        for p in self.open_jobs().flat_map(|j| j.partitions.values()) {
            match p.state {
                JobState::Submitted => d.0 += 1,
                JobState::Synthesized => d.1 += 1,
                JobState::Proving => d.2 += 1,
                _ => {}
            }
        }
        d
    }
}

/// How far along a job is: it is as far as its furthest partition, until it ends.
fn furthest(a: JobState, b: JobState) -> JobState {
    let rank = |s: JobState| match s {
        JobState::Submitted => 0,
        JobState::Synthesized => 1,
        JobState::Proving => 2,
        _ => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: Nanos, job: u64, partition: Option<u32>, state: JobState) -> JobEvent {
        JobEvent {
            t,
            job,
            partition,
            state,
            detail: Some("gpu0".into()),
            kind: None,
            name: None,
        }
    }

    #[test]
    fn lifecycle_rates_and_medians() {
        let mut p = Pipeline::default();
        p.job(&ev(0, 0, None, JobState::Submitted));
        p.job(&ev(1, 0, Some(0), JobState::Synthesized));
        assert_eq!(p.depths(), (0, 1, 0));
        p.job(&ev(2, 0, Some(0), JobState::Proving));
        assert_eq!(p.jobs[&0].state, JobState::Proving);
        for (i, s) in [1.0, 3.0, 2.0].into_iter().enumerate() {
            p.proof(&ProofRecord {
                t: 1_000_000_000 * (i as u64 + 1),
                job: 0,
                partition: i as u32,
                device: "gpu0".into(),
                verified: true,
                error: None,
                stages: [(Stage::MsmH, s)].into_iter().collect(),
            });
        }
        p.job(&ev(3_000_000_000, 0, None, JobState::Verified));
        assert!(!p.jobs[&0].is_open());
        let st = p.stage_stats();
        assert_eq!((st[0].stage, st[0].median, st[0].n), (Stage::MsmH, 2.0, 3));
        assert_eq!(p.proofs_per_hour(3_600_000_000_000), Some(3.0));
        // Three proofs in the three seconds since the first job: the window shrinks to them.
        assert_eq!(p.recent_per_hour(3_000_000_000, 3_600_000_000_000), 3600.0);
    }

    #[test]
    fn jobs_keep_their_kind() {
        let mut p = Pipeline::default();
        let submit = |p: &mut Pipeline, t, job, kind: &str| {
            p.job(&JobEvent {
                kind: Some(kind.into()),
                ..ev(t, job, None, JobState::Submitted)
            })
        };
        submit(&mut p, 0, 0, "porep");
        submit(&mut p, 1_000_000_000, 1, "winning-post");
        // Later events of a job name no kind: the submission's stays.
        p.job(&ev(5_000_000_000, 1, None, JobState::Verified));
        assert_eq!(p.jobs[&1].kind.as_deref(), Some("winning-post"));
        assert_eq!(p.jobs[&0].kind.as_deref(), Some("porep"));
    }
}
