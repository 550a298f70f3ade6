//! Idle gaps charged to kinds of proof: each moment of a device's idle gap goes to the kind of
//! the partition that device computed next (the one whose compute ended the gap), so "before
//! WinningPoSt partitions the GPU waited 0.4 s for synthesis" reads directly off
//! `summary.kinds`. A gap with no compute after it (the run's end, a live session's now)
//! belongs to no kind, nor does one ended by a job that named none.

use std::collections::BTreeMap;

use crate::gaps::{DeviceGaps, GapCause};
use crate::Nanos;

/// Per device, where each compute span starts and the job it computes for: what ends a gap.
#[derive(Default)]
pub(super) struct NextCompute {
    starts: BTreeMap<String, BTreeMap<Nanos, Option<u64>>>,
}

/// Idle time per cause key, every key of `GapCause::KEYS` present.
pub(super) type CauseTimes = BTreeMap<&'static str, Nanos>;

impl NextCompute {
    /// A compute span of `job` (none for work of no job) starting at `start` on `device`.
    pub(super) fn add(&mut self, device: &str, start: Nanos, job: Option<u64>) {
        if !self.starts.contains_key(device) {
            self.starts.insert(device.to_string(), BTreeMap::new());
        }
        if let Some(starts) = self.starts.get_mut(device) {
            // Of spans starting together, one with a job speaks for them.
            let at = starts.entry(start).or_insert(job);
            *at = at.or(job);
        }
    }

    /// The job of the first compute on `device` that starts at or after `t`: for a gap ending
    /// at `t`, the partition that ended it (one past a window's end where the window cut it).
    fn job_after(&self, device: &str, t: Nanos) -> Option<u64> {
        *self.starts.get(device)?.range(t..).next()?.1
    }
}

/// Each kind's idle time per cause over `devices`' gaps, `None` holding what no kind takes;
/// `kind_of` names a job's kind. Summed over the keys, each cause's time is the devices'.
pub(super) fn charge<'k>(
    devices: &[DeviceGaps],
    next: &NextCompute,
    kind_of: impl Fn(u64) -> Option<&'k str>,
) -> BTreeMap<Option<&'k str>, CauseTimes> {
    let mut charged: BTreeMap<Option<&'k str>, CauseTimes> = BTreeMap::new();
    for d in devices {
        for gap in &d.gaps {
            let kind = next.job_after(&d.device, gap.end).and_then(&kind_of);
            let times = charged
                .entry(kind)
                .or_insert_with(|| GapCause::KEYS.iter().map(|k| (*k, 0)).collect());
            for s in &gap.segments {
                *times.entry(s.cause.key()).or_default() += s.end - s.start;
            }
        }
    }
    charged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gaps::tests::{compute, job as job_event, span, synth, MS};
    use crate::report::ReportBuilder;
    use crate::{Event, JobState, Lane, ProofRecord, Stage};

    /// A job event of `kind` (named at submission, as the engine does).
    fn job(t: Nanos, job: u64, state: JobState, partition: Option<u32>, kind: &str) -> Event {
        let mut e = job_event(t, job, state, partition);
        if let Event::Job(j) = &mut e {
            j.kind = (state == JobState::Submitted).then(|| kind.to_string());
        }
        e
    }

    /// One job of `kind` on gpu0: submitted, synthesised over `synthesis`, taken at `taken`, an
    /// upload to its first kernel at `kernels.0`, its kernels to `kernels.1`, then done.
    fn one_job(
        id: u64,
        kind: &str,
        synthesis: (Nanos, Nanos),
        taken: Nanos,
        kernels: (Nanos, Nanos),
    ) -> Vec<Event> {
        let mut v = vec![
            job(synthesis.0, id, JobState::Submitted, None, kind),
            span(synth(), Stage::Synthesis, synthesis.0, synthesis.1, id),
            job(synthesis.1, id, JobState::Synthesized, Some(0), kind),
            job(taken, id, JobState::Proving, Some(0), kind),
            span(compute("gpu0"), Stage::MsmH, kernels.0, kernels.1, id),
            Event::Proof(ProofRecord {
                t: kernels.1 * MS,
                job: id,
                partition: 0,
                device: "gpu0".into(),
                verified: true,
                error: None,
                stages: Default::default(),
            }),
            job(kernels.1, id, JobState::Verified, None, kind),
        ];
        if taken < kernels.0 {
            let h2d = Lane::H2d {
                device: "gpu0".into(),
            };
            v.push(span(h2d, Stage::H2d, taken, kernels.0, id));
        }
        v
    }

    /// A PoRep waits for its synthesis and then in the queue; a WinningPoSt waits for its
    /// synthesis and its upload; a second PoRep waits for synthesis; then the run ends idle.
    fn scripted() -> ReportBuilder {
        let mut r = ReportBuilder::default();
        let events = [
            one_job(0, "porep", (0, 10), 14, (14, 20)),
            one_job(1, "winning-post", (15, 30), 30, (32, 40)),
            one_job(2, "porep", (35, 45), 45, (45, 50)),
        ];
        for e in events.iter().flatten() {
            r.observe(e);
        }
        r
    }

    #[test]
    fn each_moment_of_a_gap_goes_to_the_kind_computed_next() {
        let r = scripted();
        let devices = r.gap_details(0, 60 * MS);
        let charged = charge(&devices, &r.next_compute, |j| r.jobs.kind_of(j));
        let ms = |kind: Option<&str>, cause: &str| charged[&kind][cause] / MS;
        let porep = Some("porep");
        let win = Some("winning-post");
        // Before PoReps: 10 + 5 ms of synthesis, 4 ms queued.
        assert_eq!(ms(porep, "waiting_synthesis"), 15);
        assert_eq!(ms(porep, "queued"), 4);
        assert_eq!(ms(porep, "upload"), 0);
        // Before the WinningPoSt: 10 ms of synthesis, then its 2 ms upload.
        assert_eq!(ms(win, "waiting_synthesis"), 10);
        assert_eq!(ms(win, "upload"), 2);
        assert_eq!(ms(win, "queued"), 0);
        // The run's last 10 ms: no partition came, no kind.
        assert_eq!(ms(None, "no_work"), 10);
        assert_eq!(charged[&None].values().sum::<Nanos>(), 10 * MS);
        // Every cause's time is the device's, split.
        for (cause, device) in &devices[0].by_cause {
            let split: Nanos = charged.values().map(|t| t[cause]).sum();
            assert_eq!(split, *device, "{cause}");
        }
        assert_eq!(devices[0].idle, 41 * MS);
    }

    #[test]
    fn the_summary_gives_each_kind_its_gaps_in_seconds() {
        let r = scripted();
        let s = r.summary(0, 60 * MS);
        let gaps = |kind: &str| &s.kinds[kind].gaps;
        assert_eq!(gaps("porep")["waiting_synthesis"], 0.015);
        assert_eq!(gaps("winning-post")["upload"], 0.002);
        // The keys of `devices[].gaps`, zero included.
        let keys: Vec<&str> = gaps("porep").keys().copied().collect();
        let mut all = GapCause::KEYS.to_vec();
        all.sort_unstable();
        assert_eq!(keys, all);
        // Kinds and the run's end make up the device's idle time.
        let device = &r.devices(0, 60 * MS)[0];
        let kinds: f64 = s.kinds.values().flat_map(|k| k.gaps.values()).sum();
        assert!((kinds + 0.010 - device.idle_seconds).abs() < 1e-12);
        // The two largest causes, largest first.
        assert_eq!(
            s.kinds["winning-post"].main_gaps(2),
            vec![("waiting_synthesis", 0.010), ("upload", 0.002)]
        );
    }
}
