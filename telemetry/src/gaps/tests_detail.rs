//! The reasons behind the causes, over scripted sessions whose reasons are known: a lock held
//! through host work, an allocation waiting for the memory gate, too few jobs in flight and a
//! starved synthesis.

use std::collections::BTreeMap;

use super::detail::*;
use super::tests::{compute, job, ms, span, synth, worker, MS};
use super::*;
use crate::{metrics, Event, JobState, Lane, Sample, Stage};

const GB: u64 = 1 << 30;

fn sample(t: Nanos, metric: &str, device: Option<&str>, value: f64) -> Event {
    Event::Sample(Sample {
        t: t * MS,
        metric: metric.into(),
        device: device.map(str::to_string),
        value,
    })
}

fn with_bytes(mut e: Event, bytes: u64) -> Event {
    if let Event::Span(s) = &mut e {
        s.bytes = bytes;
    }
    e
}

fn prover() -> Lane {
    Lane::Pool {
        name: "prover".into(),
    }
}

fn ms_of(m: &BTreeMap<String, Nanos>) -> BTreeMap<&str, Nanos> {
    m.iter().map(|(k, v)| (k.as_str(), v / MS)).collect()
}

/// The device's gaps over [0, to) ms, checked to give the same in any arrival order and after
/// pruning at `prune_at`.
fn gpu0(events: &[Event], to: Nanos, prune_at: Nanos) -> DeviceGaps {
    let forward = attribute(events, 0, to * MS);
    let mut rev = events.to_vec();
    rev.reverse();
    assert_eq!(attribute(&rev, 0, to * MS), forward, "arrival order");
    let mut a = GapAnalyzer::new();
    events.iter().for_each(|e| a.observe(e));
    a.prune(prune_at * MS);
    assert_eq!(
        a.attribute(prune_at * MS, to * MS),
        attribute(events, prune_at * MS, to * MS),
        "pruning"
    );
    forward.into_iter().find(|d| d.device == "gpu0").unwrap()
}

#[test]
fn a_lock_held_through_host_work_names_the_holders_stage() {
    // Worker 0 takes the lock at 1, uploads, runs H's MSM, then keeps the lock through host
    // work: B in G2 on the prover pool (12..16) and untimed work until its download at 20.
    // Worker 1 waits for the lock from 5 to 21.
    let w0 = || worker("gpu0", 0);
    let events = vec![
        span(w0(), Stage::LockWait, 0, 1, 0),
        span(w0(), Stage::H2d, 1, 3, 0),
        span(compute("gpu0"), Stage::MsmH, 3, 10, 0),
        span(w0(), Stage::MsmH, 3, 10, 0),
        span(prover(), Stage::MsmBG2, 12, 16, 0),
        span(w0(), Stage::D2h, 20, 21, 0),
        span(worker("gpu0", 1), Stage::LockWait, 5, 21, 1),
        span(compute("gpu0"), Stage::MsmL, 21, 25, 1),
        span(worker("gpu0", 1), Stage::MsmL, 21, 25, 1),
    ];
    let d = gpu0(&events, 25, 11);
    assert_eq!(ms(&d.by_cause, "lock_held"), 1 + 10, "0..1 and 10..20");
    let expected = BTreeMap::from([
        ("unknown", 1),
        ("after_msm_h", 2),
        ("msm_b_g2", 4),
        ("after_msm_b_g2", 4),
    ]);
    assert_eq!(ms_of(&d.detail.lock_held), expected);
    assert!(d.detail.alloc.is_none());
    let json = serde_json::to_value(d.detail.seconds()).unwrap();
    assert_eq!(json["lock_held"]["msm_b_g2"], 0.004);
    assert!(
        json.get("alloc").is_none(),
        "causes without time are left out"
    );
}

#[test]
fn an_allocation_wait_says_what_it_waited_for_and_the_memory_at_stake() {
    // Worker 0 computes 0..10 and holds its region to 12; worker 1's allocation of 3 GiB runs
    // 5..15, waiting inside it for the lock (the memory gate) until 12. NVML says 2 GiB free
    // over the second that ends at 20.
    let dev = Some("gpu0");
    let events = vec![
        span(compute("gpu0"), Stage::MsmH, 0, 10, 0),
        span(worker("gpu0", 0), Stage::MsmH, 0, 10, 0),
        span(worker("gpu0", 0), Stage::D2h, 11, 12, 0),
        with_bytes(span(compute("gpu0"), Stage::Alloc, 5, 15, 1), 3 * GB),
        with_bytes(span(worker("gpu0", 1), Stage::Alloc, 5, 15, 1), 3 * GB),
        span(worker("gpu0", 1), Stage::LockWait, 5, 12, 1),
        span(compute("gpu0"), Stage::MsmL, 15, 20, 1),
        span(worker("gpu0", 1), Stage::MsmL, 15, 20, 1),
        sample(10, metrics::VRAM_TOTAL, dev, (80 * GB) as f64),
        sample(10, metrics::VRAM_RESERVED, dev, (77 * GB) as f64),
        sample(20, metrics::VRAM_TOTAL, dev, (80 * GB) as f64),
        sample(20, metrics::VRAM_RESERVED, dev, (78 * GB) as f64),
        sample(20, "vram.used.buckets", dev, (5 * GB) as f64),
        sample(20, "vram.used.srs", dev, (60 * GB) as f64),
        // Another device's memory is not this one's.
        sample(20, metrics::VRAM_RESERVED, Some("gpu1"), 0.0),
    ];
    let d = gpu0(&events, 20, 13);
    assert_eq!(
        ms(&d.by_cause, "alloc"),
        5,
        "10..15: the download is less specific"
    );
    let a = d.detail.alloc.as_ref().expect("alloc detail");
    assert_eq!(ms(&a.reasons, ALLOC_LOCK), 2, "10..12 waiting for the lock");
    assert_eq!(ms(&a.reasons, ALLOC_ALLOCATING), 3, "12..15");
    assert_eq!(a.wanted_bytes, 3 * GB);
    assert_eq!(a.free_bytes, Some((2 * GB) as f64));
    assert_eq!(a.held_bytes["srs"], (60 * GB) as f64);
    assert_eq!(a.held_bytes["buckets"], (5 * GB) as f64);
    assert_eq!(
        ms_of(&a.held_by),
        BTreeMap::from([("worker 0", 2)]),
        "10..12"
    );
}

#[test]
fn too_few_jobs_in_flight_is_told_from_the_runs_start_and_end() {
    // One job at a time: job 1 is submitted only when job 0 is done, so the GPU idles while
    // job 0 finishes on the host; for 25..29 a partition was pending but not started.
    let events = vec![
        sample(0, metrics::PIPELINE_PENDING, None, 0.0),
        job(2, 0, JobState::Submitted, None),
        span(synth(), Stage::Synthesis, 2, 10, 0),
        job(10, 0, JobState::Synthesized, Some(0)),
        job(10, 0, JobState::Proving, Some(0)),
        span(compute("gpu0"), Stage::MsmH, 10, 20, 0),
        span(worker("gpu0", 0), Stage::MsmH, 10, 20, 0),
        sample(25, metrics::PIPELINE_PENDING, None, 1.0),
        sample(29, metrics::PIPELINE_PENDING, None, 0.0),
        job(30, 0, JobState::Verified, None),
        job(30, 1, JobState::Submitted, None),
        span(synth(), Stage::Synthesis, 30, 40, 1),
        job(40, 1, JobState::Synthesized, Some(0)),
        job(40, 1, JobState::Proving, Some(0)),
        span(compute("gpu0"), Stage::MsmH, 40, 50, 1),
        span(worker("gpu0", 1), Stage::MsmH, 40, 50, 1),
        job(55, 1, JobState::Verified, None),
    ];
    let d = gpu0(&events, 60, 26);
    assert_eq!(ms(&d.by_cause, "no_work"), 2 + 10 + 10);
    let expected = BTreeMap::from([
        (IDLE_START, 2),
        (IDLE_FEW_JOBS, 5 + 1),
        (IDLE_PENDING, 4),
        (IDLE_END, 10),
    ]);
    let got: BTreeMap<_, _> = d.detail.no_work.iter().map(|(k, v)| (*k, v / MS)).collect();
    assert_eq!(got, expected);
    // Without host samples nobody can say what synthesis lacked.
    assert_eq!(ms(&d.detail.waiting_synthesis, SYNTH_UNKNOWN), 8 + 10);
}

#[test]
fn starved_synthesis_says_whether_it_lacked_cores_bandwidth_or_workers() {
    // Each sample describes the second before it: 0..10 the pool is busy, 10..20 it idles
    // half its threads, 20..30 DDR is pressed.
    let pool = super::levels::SYNTHESIS_POOL;
    let events = vec![
        span(synth(), Stage::Synthesis, 0, 30, 0),
        span(compute("gpu0"), Stage::MsmH, 30, 35, 0),
        sample(10, pool, None, 0.95),
        sample(10, metrics::HOST_DDR_PRESSURE, None, 0.1),
        sample(20, pool, None, 0.4),
        sample(20, metrics::HOST_DDR_PRESSURE, None, 0.1),
        sample(30, pool, None, 0.98),
        sample(30, metrics::HOST_DDR_PRESSURE, None, 0.7),
        // Other pools are not synthesis.
        sample(20, "cpu.pool.prover", None, 1.0),
    ];
    let d = gpu0(&events, 35, 15);
    assert_eq!(ms(&d.by_cause, "waiting_synthesis"), 30);
    let w = &d.detail.waiting_synthesis;
    assert_eq!(ms(w, SYNTH_CORES), 10);
    assert_eq!(ms(w, SYNTH_WORKERS), 10);
    assert_eq!(ms(w, SYNTH_BANDWIDTH), 10);
    assert!(d.detail.no_work.is_empty() && d.detail.lock_held.is_empty());
}

#[test]
fn reasons_add_up_to_their_causes() {
    let d = &attribute(&super::tests::scenario(), 0, 50 * MS)[0];
    let sum = |m: &BTreeMap<&'static str, Nanos>| m.values().sum::<Nanos>();
    assert_eq!(
        d.detail.lock_held.values().sum::<Nanos>(),
        d.by_cause["lock_held"]
    );
    assert_eq!(
        sum(&d.detail.waiting_synthesis),
        d.by_cause["waiting_synthesis"]
    );
    assert_eq!(sum(&d.detail.no_work), d.by_cause["no_work"]);
    assert_eq!(
        ms_of(&d.detail.lock_held),
        BTreeMap::from([("unknown", 1), ("after_msm_h", 3)]),
        "worker 0 holds the lock with no span after its kernels"
    );
}
