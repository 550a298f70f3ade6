//! Gap attribution over small made-up streams whose causes are known.

use std::collections::BTreeMap;

use super::*;
use crate::{Event, JobEvent, JobState, Lane, Span, Stage};

pub(crate) const MS: Nanos = 1_000_000;

pub(crate) fn span(lane: Lane, stage: Stage, start: Nanos, end: Nanos, job: u64) -> Event {
    Event::Span(Span {
        lane,
        stage,
        start: start * MS,
        end: end * MS,
        job: Some(job),
        partition: Some(0),
        bytes: 0,
    })
}

pub(crate) fn compute(d: &str) -> Lane {
    Lane::Compute { device: d.into() }
}

pub(super) fn worker(d: &str, w: u32) -> Lane {
    Lane::Worker {
        device: d.into(),
        worker: w,
    }
}

pub(crate) fn synth() -> Lane {
    Lane::Pool {
        name: "synthesis".into(),
    }
}

pub(crate) fn job(t: Nanos, job: u64, state: JobState, partition: Option<u32>) -> Event {
    Event::Job(JobEvent {
        t: t * MS,
        job,
        partition,
        state,
        detail: (state == JobState::Proving).then(|| "gpu0".to_string()),
        kind: None,
        name: None,
    })
}

pub(super) fn ms(by: &BTreeMap<&'static str, Nanos>, k: &str) -> Nanos {
    by[k] / MS
}

/// Two workers under one lock: worker 1 uploads while worker 0's kernels run, then waits
/// for the lock that worker 0 holds while it does host work; synthesis feeds them.
pub(super) fn scenario() -> Vec<Event> {
    vec![
        job(0, 0, JobState::Submitted, None),
        span(synth(), Stage::Synthesis, 0, 10, 0),
        job(10, 0, JobState::Synthesized, Some(0)),
        job(12, 0, JobState::Proving, Some(0)),
        // worker 0: lock 12..13, upload 13..16, prep 16..18, kernels 18..30, d2h 30..32
        span(worker("gpu0", 0), Stage::LockWait, 12, 13, 0),
        span(worker("gpu0", 0), Stage::H2d, 13, 16, 0),
        span(
            Lane::H2d {
                device: "gpu0".into(),
            },
            Stage::H2d,
            13,
            16,
            0,
        ),
        span(worker("gpu0", 0), Stage::Prep, 16, 18, 0),
        span(compute("gpu0"), Stage::NttH, 18, 24, 0),
        span(worker("gpu0", 0), Stage::NttH, 18, 24, 0),
        span(compute("gpu0"), Stage::MsmH, 24, 30, 0),
        span(worker("gpu0", 0), Stage::MsmH, 24, 30, 0),
        // host-side work of worker 0 under the lock, with no span: 30..33 region only
        span(worker("gpu0", 0), Stage::D2h, 33, 35, 0),
        // job 1: synthesised 20, taken at 25 by worker 1 which waits on the lock 25..35
        job(5, 1, JobState::Submitted, None),
        span(synth(), Stage::Synthesis, 10, 20, 1),
        job(20, 1, JobState::Synthesized, Some(0)),
        job(25, 1, JobState::Proving, Some(0)),
        span(worker("gpu0", 1), Stage::LockWait, 25, 35, 1),
        span(compute("gpu0"), Stage::MsmL, 35, 40, 1),
        span(worker("gpu0", 1), Stage::MsmL, 35, 40, 1),
        job(45, 0, JobState::Verified, None),
        job(46, 1, JobState::Verified, None),
    ]
}

#[test]
fn causes_follow_the_spans_and_the_priority() {
    let r = attribute(&scenario(), 0, 50 * MS);
    assert_eq!(r.len(), 1);
    let d = &r[0];
    assert_eq!(d.device, "gpu0");
    assert_eq!(d.busy / MS, 17);
    assert_eq!(d.idle / MS, 33);
    assert_eq!(d.busy + d.idle, 50 * MS, "busy and gaps tile the window");
    let by = &d.by_cause;
    assert_eq!(
        ms(by, "waiting_synthesis"),
        10,
        "0..10 synthesis, nothing queued"
    );
    assert_eq!(ms(by, "queued"), 2, "10..12 ready, no worker yet");
    assert_eq!(ms(by, "upload"), 3, "13..16");
    assert_eq!(ms(by, "prep"), 2, "16..18");
    // 12..13: worker 0 waits for the lock (no holder in sight); 30..33: worker 1 waits
    // while worker 0 holds it.
    assert_eq!(ms(by, "lock_held"), 1 + 3);
    assert_eq!(
        ms(by, "download"),
        2,
        "33..35 the holder's d2h is more specific"
    );
    assert_eq!(ms(by, "no_work"), 10, "40..50 nothing left");
    assert_eq!(ms(by, "unattributed"), 0);
    assert_eq!(by.values().sum::<Nanos>(), d.idle);
    let g = d.gap_at(31 * MS).expect("a gap at 31 ms");
    assert_eq!((g.start / MS, g.end / MS), (30, 35));
    assert_eq!(
        g.cause_at(31 * MS),
        Some(GapCause::LockHeld { holder: Some(0) })
    );
    assert_eq!(g.cause(), GapCause::LockHeld { holder: Some(0) });
    assert!(d.gap_at(20 * MS).is_none(), "kernels run at 20 ms");
    let first = &d.gaps[0];
    assert_eq!(first.cause(), GapCause::WaitingSynthesis);
    assert_eq!(
        first.cause_at(12 * MS + 1),
        Some(GapCause::LockHeld { holder: None })
    );
}

#[test]
fn a_device_idle_while_another_holds_waiting_work_shows_imbalance() {
    // gpu1 runs kernels 0..40 with worker 0; its worker 1 holds job 1's partition from 10,
    // waiting for gpu1's lock until 40. gpu0 has nothing to do but would have run it.
    let mut events = scenario();
    let w1 = |w| worker("gpu1", w);
    events.extend([
        span(compute("gpu1"), Stage::MsmH, 0, 40, 2),
        span(w1(0), Stage::MsmH, 0, 40, 2),
        span(w1(1), Stage::LockWait, 10, 40, 3),
        span(compute("gpu1"), Stage::MsmL, 40, 45, 3),
        span(w1(1), Stage::MsmL, 40, 45, 3),
    ]);
    let r = attribute(&events, 0, 50 * MS);
    let gpu0 = r.iter().find(|d| d.device == "gpu0").unwrap();
    // While gpu1 waits (10..40) gpu0 always has a more specific cause of its own (its
    // queue, its lock, its copies); after 40 nobody waits, so 40..50 stays no work.
    assert_eq!(ms(&gpu0.by_cause, "imbalance"), 0);
    assert_eq!(ms(&gpu0.by_cause, "no_work"), 10);
    // A window where gpu0 is idle with nothing queued or synthesising, gpu1 waiting.
    let mut quiet = vec![
        span(compute("gpu1"), Stage::MsmH, 0, 40, 2),
        span(w1(1), Stage::LockWait, 10, 40, 3),
        span(compute("gpu0"), Stage::MsmH, 0, 5, 4),
    ];
    quiet.push(span(worker("gpu0", 0), Stage::MsmH, 0, 5, 4));
    let r = attribute(&quiet, 0, 40 * MS);
    let gpu0 = r.iter().find(|d| d.device == "gpu0").unwrap();
    assert_eq!(ms(&gpu0.by_cause, "imbalance"), 30, "10..40");
    assert_eq!(ms(&gpu0.by_cause, "no_work"), 5, "5..10");
    let gpu1 = r.iter().find(|d| d.device == "gpu1").unwrap();
    assert_eq!(
        gpu1.by_cause["imbalance"], 0,
        "its own waits are not imbalance"
    );
    let g = gpu0.gap_at(20 * MS).unwrap();
    assert_eq!(g.cause(), GapCause::Imbalance);
    assert_eq!(g.cause().to_string(), "another device holds queued work");
}

#[test]
fn arrival_order_does_not_matter() {
    let events = scenario();
    let forward = attribute(&events, 0, 50 * MS);
    let mut rev = events.clone();
    rev.reverse();
    assert_eq!(attribute(&rev, 0, 50 * MS), forward);
    // An interleaving as the bus delivers it: spans at their end, the rest at their time.
    let mut by_time = events;
    by_time.sort_by_key(|e| e.time());
    assert_eq!(attribute(&by_time, 0, 50 * MS), forward);
}

#[test]
fn windows_clip_and_split_consistently() {
    let events = scenario();
    let whole = attribute(&events, 0, 50 * MS);
    let a = attribute(&events, 0, 31 * MS);
    let b = attribute(&events, 31 * MS, 50 * MS);
    for k in GapCause::KEYS {
        assert_eq!(
            whole[0].by_cause[k],
            a[0].by_cause[k] + b[0].by_cause[k],
            "{k}"
        );
    }
    assert_eq!(whole[0].busy, a[0].busy + b[0].busy);
}

#[test]
fn pruning_keeps_later_windows_exact() {
    let events = scenario();
    let whole = attribute(&events, 32 * MS, 50 * MS);
    let mut a = GapAnalyzer::new();
    events.iter().for_each(|e| a.observe(e));
    a.prune(32 * MS);
    assert_eq!(a.attribute(32 * MS, 50 * MS), whole);
}

#[test]
fn open_regions_and_first_syntheses_hold_a_live_horizon_back() {
    let mut a = GapAnalyzer::new();
    assert_eq!(a.incomplete_since(), None);
    a.observe(&job(1, 0, JobState::Submitted, None));
    assert_eq!(a.incomplete_since(), Some(MS));
    a.observe(&job(4, 0, JobState::Synthesized, Some(0)));
    assert_eq!(
        a.incomplete_since(),
        None,
        "the first partition is synthesised"
    );
    a.observe(&job(5, 0, JobState::Proving, Some(0)));
    assert_eq!(
        a.incomplete_since(),
        Some(5 * MS),
        "a region without its spans"
    );
    a.observe(&span(worker("gpu0", 0), Stage::LockWait, 5, 6, 0));
    assert_eq!(
        a.incomplete_since(),
        Some(5 * MS),
        "its host steps arrive as they happen, its device steps when the region has completed"
    );
    let d2h = Lane::D2h {
        device: "gpu0".into(),
    };
    a.observe(&span(d2h, Stage::D2h, 9, 10, 0));
    assert_eq!(
        a.incomplete_since(),
        None,
        "its read-back, the last, arrived"
    );
}

#[test]
fn synthesis_running_is_told_from_no_work() {
    let events = vec![
        span(synth(), Stage::Synthesis, 5, 8, 0),
        span(compute("cpu0"), Stage::MsmH, 10, 12, 0),
    ];
    let d = &attribute(&events, 0, 20 * MS)[0];
    assert_eq!(ms(&d.by_cause, "no_work"), 5 + 2 + 8);
    assert_eq!(ms(&d.by_cause, "waiting_synthesis"), 3);
}

#[test]
fn a_cancelled_job_leaves_the_queue_when_it_ends() {
    let events = vec![
        span(compute("cpu0"), Stage::MsmH, 0, 1, 9),
        job(2, 3, JobState::Synthesized, Some(0)),
        job(6, 3, JobState::Cancelled, None),
    ];
    let d = &attribute(&events, 0, 10 * MS)[0];
    assert_eq!(ms(&d.by_cause, "queued"), 4);
    assert_eq!(ms(&d.by_cause, "no_work"), 1 + 4);
}

#[test]
fn what_is_built_once_inside_the_first_region_is_busy_not_unattributed() {
    // The first region of a parameter set: upload 1..3, H's shifted bases built 3..9 (a
    // `resident` span on the compute lane), then the partition's kernels 9..12.
    let region = |with_resident: bool| {
        let mut e = vec![
            job(0, 0, JobState::Submitted, None),
            job(0, 0, JobState::Synthesized, Some(0)),
            job(1, 0, JobState::Proving, Some(0)),
            span(worker("gpu0", 0), Stage::H2d, 1, 3, 0),
            span(compute("gpu0"), Stage::NttH, 9, 12, 0),
            span(worker("gpu0", 0), Stage::D2h, 12, 13, 0),
            job(13, 0, JobState::Verified, None),
        ];
        if with_resident {
            e.push(span(compute("gpu0"), Stage::Resident, 3, 9, 0));
        }
        attribute(&e, MS, 12 * MS).remove(0)
    };
    let spanned = region(true);
    assert_eq!(spanned.busy / MS, 9, "3..12");
    assert_eq!(
        spanned.by_cause.get("unattributed").copied().unwrap_or(0),
        0
    );
    let unspanned = region(false);
    assert_eq!(
        ms(&unspanned.by_cause, "unattributed"),
        6,
        "3..9 in a region, no span"
    );
}
