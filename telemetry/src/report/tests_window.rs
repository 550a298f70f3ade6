//! The advisor judges only the part of its window with work: setup before the first job, a
//! run that ran out, and a window with too few proofs get no verdict on idle time.

use super::*;
use crate::config::EngineConfig;
use crate::{Event, JobEvent, JobState, Lane, ProofRecord, Span, Stage};

const S: Nanos = 1_000_000_000;

fn job(t: Nanos, job: u64, state: JobState) -> Event {
    Event::Job(JobEvent {
        t,
        job,
        partition: None,
        state,
        detail: None,
        kind: None,
        name: None,
    })
}

/// `n` jobs from `start`, one at a time: each submitted, a second on gpu0, its proof, its end.
fn run(r: &mut ReportBuilder, start: Nanos, n: u64) {
    for i in 0..n {
        let t = start + i * S;
        r.observe(&job(t, i, JobState::Submitted));
        r.observe(&Event::Span(Span {
            lane: Lane::Compute {
                device: "gpu0".into(),
            },
            stage: Stage::MsmH,
            start: t,
            end: t + S,
            job: Some(i),
            partition: Some(0),
            bytes: 0,
        }));
        r.observe(&Event::Proof(ProofRecord {
            t: t + S,
            job: i,
            partition: 0,
            device: "gpu0".into(),
            verified: true,
            error: None,
            stages: Default::default(),
        }));
        r.observe(&job(t + S, i, JobState::Verified));
    }
}

fn verdict(r: &ReportBuilder, from: Nanos, to: Nanos) -> crate::advice::Verdict {
    r.verdict(from, to, &EngineConfig::default(), 16, Some(1))
}

#[test]
fn setup_before_the_first_job_and_the_time_after_the_last_are_not_judged() {
    let mut r = ReportBuilder::default();
    // Parameters took the first minute; six jobs ran 60–66 s; the run then ran out.
    run(&mut r, 60 * S, 6);
    let v = verdict(&r, 0, 300 * S);
    assert_eq!(v.window, Some((60.0, 66.0)), "{v:?}");
    assert!(!v.bottleneck.contains("no work"), "{}", v.bottleneck);
    assert!(
        v.advice
            .iter()
            .all(|a| a.knob != crate::advice::CONCURRENCY),
        "{v:?}"
    );
}

#[test]
fn too_few_proofs_are_said_to_be_too_few() {
    let mut r = ReportBuilder::default();
    run(&mut r, 0, 2);
    let v = verdict(&r, 0, 10 * S);
    assert!(
        v.bottleneck
            .starts_with("too few proofs to judge: 2 finished in 0:00–0:02"),
        "{}",
        v.bottleneck
    );
    assert!(v.advice.is_empty(), "{v:?}");
}

#[test]
fn a_window_after_the_run_ran_out_has_no_work_to_judge() {
    let mut r = ReportBuilder::default();
    run(&mut r, 0, 6);
    let v = verdict(&r, 20 * S, 40 * S);
    assert_eq!(v.window, None);
    assert_eq!(v.bottleneck, "no work in 0:20–0:40: nothing to judge");
    assert!(v.advice.is_empty());
    // Nor a window before the first work (a recording begun later, a seek before it).
    let mut r = ReportBuilder::default();
    run(&mut r, 30 * S, 6);
    assert!(verdict(&r, 0, 20 * S)
        .bottleneck
        .starts_with("no work in 0:00–0:20"));
}
