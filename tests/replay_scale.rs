//! Reading recordings at scale (issue 46): a summary's cost grows linearly with the jobs a
//! recording holds (50,000 jobs took 104 s: each job's end scanned every open one), and an
//! export stays within `--max-memory` (its slices held to the end counted too).

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

use provetop_telemetry::report::ReportBuilder;
use provetop_telemetry::{Event, JobEvent, JobState};
use std::time::{Duration, Instant};

/// `n` jobs all submitted, synthesised and started, then all ended: every job is open while
/// the others end, as in a recording of a long queue.
fn jobs(n: u64) -> Vec<Event> {
    let ev = |t: u64, job: u64, partition: Option<u32>, state: JobState| {
        Event::Job(JobEvent {
            t,
            job,
            partition,
            state,
            detail: (state == JobState::Proving).then(|| "cpu0".to_string()),
            kind: (state == JobState::Submitted).then(|| "synthetic".to_string()),
            name: None,
        })
    };
    let mut out = vec![];
    for j in 0..n {
        out.push(ev(3 * j, j, None, JobState::Submitted));
        out.push(ev(3 * j + 1, j, Some(0), JobState::Synthesized));
        // Half are taken by a device, half stay queued.
        if j % 2 == 0 {
            out.push(ev(3 * j + 2, j, Some(0), JobState::Proving));
        }
    }
    for j in 0..n {
        out.push(ev(3 * n + j, j, None, JobState::Verified));
    }
    out
}

/// The least of three times of a summary over `events`.
fn summarise(events: &[Event]) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            let mut r = ReportBuilder::default();
            for e in events {
                r.observe(e);
            }
            let end = events.len() as u64 * 3;
            let s = r.summary(0, end);
            let d = r.devices(0, end);
            assert!(s.proofs == 0 && d.len() <= 1);
            t.elapsed()
        })
        .min()
        .unwrap()
}

#[test]
fn a_summary_is_linear_in_the_jobs_of_a_recording() {
    let (small, large) = (jobs(4_000), jobs(32_000));
    let a = summarise(&small);
    let b = summarise(&large);
    // Eight times the jobs: about eight times the time (64 when quadratic).
    let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-4);
    assert!(
        ratio < 24.0,
        "4,000 jobs {a:?}, 32,000 jobs {b:?}: {ratio:.1}x"
    );
}
