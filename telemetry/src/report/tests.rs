//! The report's figures over small streams whose answers are known.

use super::*;
use crate::{metrics, Lane, Nanos, ProofRecord, Sample, Span, Stage};

fn msm_span(lane: Lane, start: Nanos, end: Nanos) -> Span {
    Span {
        lane,
        stage: Stage::MsmH,
        start,
        end,
        job: None,
        partition: None,
        bytes: 0,
    }
}

#[test]
fn merged_length_counts_overlaps_once() {
    assert_eq!(merged_length(&[(0, 10), (5, 15), (20, 30)], 0, 100), 25);
    assert_eq!(merged_length(&[(0, 10), (5, 15), (20, 30)], 8, 25), 12);
    assert_eq!(merged_length(&[], 0, 10), 0);
}

#[test]
fn timeline_checks_allow_nesting_and_count_overlaps() {
    let mut r = ReportBuilder::default();
    let mut span = |stage, start, end| {
        r.add_span(&Span {
            lane: Lane::Compute {
                device: "gpu0".into(),
            },
            stage,
            start,
            end,
            job: None,
            partition: None,
            bytes: 0,
        })
    };
    span(Stage::NttH, 0, 10);
    span(Stage::Intt, 0, 4); // inside ntt_h
    span(Stage::CosetNtt, 4, 10);
    span(Stage::MsmH, 10, 20);
    span(Stage::MsmL, 15, 25); // overlaps msm_h without nesting
    span(Stage::H2d, 30, 31); // a copy on the compute lane
    let t = r.timeline("gpu0");
    assert_eq!((t.compute_overlaps, t.copies_on_compute_lane), (1, 1));
}

#[test]
fn a_partitions_device_region_spans_its_first_to_last_device_operation() {
    let mut r = ReportBuilder::default();
    let mut span = |lane: Lane, stage, start, end, partition| {
        r.add_span(&Span {
            lane,
            stage,
            start,
            end,
            job: Some(7),
            partition: Some(partition),
            bytes: 0,
        })
    };
    let compute = || Lane::Compute {
        device: "gpu0".into(),
    };
    let h2d = Lane::H2d {
        device: "gpu0".into(),
    };
    let d2h = Lane::D2h {
        device: "gpu0".into(),
    };
    span(h2d, Stage::H2d, 100, 150, 0);
    span(compute(), Stage::Prep, 50, 90, 0); // host work: not a device operation
    span(compute(), Stage::NttH, 160, 200, 0);
    span(compute(), Stage::Intt, 160, 180, 0); // nested: counted once
    span(compute(), Stage::MsmH, 210, 300, 0);
    span(d2h, Stage::D2h, 300, 310, 0);
    span(compute(), Stage::MsmH, 1000, 1100, 1);
    r.add_proof(ProofRecord {
        t: 400,
        job: 7,
        partition: 0,
        device: "gpu0".into(),
        verified: true,
        error: None,
        stages: Default::default(),
    });
    let row = &r.rows()[0];
    assert!((row.stages["device_wall"] - 210e-9).abs() < 1e-15);
    assert!((row.stages["device_kernels"] - 130e-9).abs() < 1e-15);
    assert!((r.summary(0, 1_000_000_000).stages["device_wall"].median - 210e-9).abs() < 1e-15);
}

#[test]
fn nvml_and_engine_figures_share_one_window() {
    let mut r = ReportBuilder::default();
    let s = |metric: &str, t: Nanos, value: f64| Sample {
        t,
        metric: metric.into(),
        device: Some("gpu0".into()),
        value,
    };
    const S: Nanos = 1_000_000_000;
    // Each NVML value describes the second before it: busy 100 %, then 50 %, then idle.
    for (t, util, rate) in [
        (0, 0.2, 0.0),
        (S, 1.0, 100.0),
        (2 * S, 0.5, 300.0),
        (3 * S, 0.0, 0.0),
    ] {
        r.add_sample(&s(metrics::GPU_UTIL, t, util));
        r.add_sample(&s(metrics::NVML_PCIE_RX, t, rate));
    }
    // The engine's counter, sampled at other times: 100 bytes a second from 0.5 s.
    for (t, total) in [(S / 2, 0.0), (3 * S / 2, 100.0), (7 * S / 2, 300.0)] {
        r.add_sample(&s(metrics::PCIE_H2D_TOTAL, t, total));
    }
    let span = msm_span;
    let dev = || "gpu0".to_string();
    r.add_span(&span(Lane::Compute { device: dev() }, 0, 3 * S / 2));
    r.add_span(&span(Lane::H2d { device: dev() }, 3 * S / 2, 3 * S));
    // The copy engine moved data for half a second of that upload; the rest was staging.
    let mut piece = span(Lane::H2d { device: dev() }, 3 * S / 2, 2 * S);
    piece.stage = Stage::Dma;
    r.add_span(&piece);
    // The run's window [0.5 s, 10 s] clips NVML's [0, 3 s] to [0.5 s, 3 s].
    let n = r.nvml_summary("gpu0", S / 2, 10 * S).unwrap();
    assert_eq!(n.window_seconds, 2.5);
    assert_eq!(n.util_mean, (0.5 * 1.0 + 0.5) / 2.5);
    assert_eq!(n.pcie_rx_bytes, 50.0 + 300.0);
    assert_eq!(n.engine_busy_ratio, 1.0 / 2.5);
    assert_eq!(n.engine_active_ratio, 1.5 / 2.5);
    assert_eq!(n.engine_h2d_bytes, 250.0);
    assert_eq!(n.samples, 4);
    let p = r.pcie_summary("gpu0").unwrap();
    assert_eq!((p.h2d_bytes, p.d2h_bytes), (300.0, 0.0));
    assert!(r.nvml_summary("cpu0", 0, S).is_none() && r.pcie_summary("cpu0").is_none());
}

#[test]
fn steady_busy_leaves_out_the_run_before_the_first_kernel_and_after_the_last() {
    let mut r = ReportBuilder::default();
    for (start, end) in [(10, 20), (30, 40), (15, 18)] {
        let lane = Lane::Compute {
            device: "gpu0".into(),
        };
        r.add_span(&msm_span(lane, start, end));
    }
    assert_eq!(r.steady_busy("gpu0", 0, 100), 20.0 / 30.0);
    assert_eq!(r.steady_busy("gpu0", 35, 100), 1.0, "clipped to the window");
    assert_eq!(r.steady_busy("cpu0", 0, 100), 0.0, "no kernels");
}

#[test]
fn the_steady_rate_counts_from_the_first_verified_proof_to_the_last() {
    let mut r = ReportBuilder::default();
    const S: Nanos = 1_000_000_000;
    // The first proof after 10 s of filling, then one every 2 s; a failed one in between.
    for (t, verified) in [
        (10 * S, true),
        (11 * S, false),
        (12 * S, true),
        (14 * S, true),
    ] {
        r.proofs.push(ProofRecord {
            t,
            job: 0,
            partition: 0,
            device: "gpu0".into(),
            verified,
            error: None,
            stages: Default::default(),
        });
    }
    let s = r.summary(0, 14_000_000_000);
    assert_eq!(s.proofs_per_hour, 3.0 * 3600.0 / 14.0);
    assert_eq!(s.steady_proofs_per_hour, 2.0 * 3600.0 / 4.0);
    r.proofs.truncate(2);
    assert_eq!(
        r.summary(0, 14_000_000_000).steady_proofs_per_hour,
        0.0,
        "too few to tell"
    );
}

#[test]
fn the_host_summary_averages_the_samples_inside_the_run() {
    let mut r = ReportBuilder::default();
    let sample = |metric: &str, t: Nanos, value: f64| Sample {
        t,
        metric: metric.into(),
        device: None,
        value,
    };
    for (m, t, v) in [
        ("cpu.core.0", 5, 0.9), // before the run: left out
        ("cpu.core.0", 10, 0.5),
        ("cpu.core.1", 10, 1.0),
        ("cpu.pool.synthesis", 10, 0.75),
        ("host.ddr.pressure", 10, 0.2),
        ("host.ddr.pressure", 20, 0.6),
        ("host.ddr", 20, 4e10),
        ("host.ram.used", 20, 1e9), // not a host summary metric
        ("process.rss", 10, 3e9),
        ("process.rss", 20, 2e9),
    ] {
        r.add_sample(&sample(m, t, v));
    }
    assert!(r.host(100, 200).is_none());
    let h = r.host(6, 20).unwrap();
    assert_eq!(h.cpu_busy_mean, 0.75);
    assert_eq!(h.pools_busy_mean["synthesis"], 0.75);
    assert!((h.ddr_pressure_mean - 0.4).abs() < 1e-12);
    assert_eq!(h.ddr_pressure_max, 0.6);
    assert_eq!(h.ddr_bytes_per_second_mean, 4e10);
    assert_eq!(h.process_rss_max_bytes, 3e9);
    assert_eq!(h.samples, 8);
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

#[test]
fn a_report_keeps_at_most_a_kibibyte_of_a_file_string() {
    let long = "e".repeat(64 << 10);
    let mut b = ReportBuilder::default();
    b.add_proof(ProofRecord {
        t: 1,
        job: 0,
        partition: 0,
        device: long.clone(),
        verified: false,
        error: Some(long.clone()),
        stages: Default::default(),
    });
    b.add_config(crate::ConfigChange {
        t: 1,
        key: "lock".into(),
        from: "single".into(),
        to: long.clone(),
        by: "file".into(),
        applied: false,
        error: Some(long),
    });
    let p = &b.proofs()[0];
    assert!(p.device.len() <= 1027 && p.error.as_ref().unwrap().len() <= 1027);
    let c = &b.config_events()[0];
    assert!(
        c.to.len() <= 1027 && c.error.as_ref().unwrap().len() <= 1027,
        "{}",
        c.to.len()
    );
    assert_eq!(c.from, "single");
}

#[test]
fn kinds_are_summarised_apart_with_their_latency() {
    use crate::{Event, JobEvent, JobState};
    let mut r = ReportBuilder::default();
    let job = |r: &mut ReportBuilder, t: Nanos, job: u64, state, kind: Option<&str>| {
        r.add_job_event(&Event::Job(JobEvent {
            t,
            job,
            partition: None,
            state,
            detail: None,
            kind: kind.map(str::to_string),
            name: None,
        }))
    };
    let proof = |r: &mut ReportBuilder, t: Nanos, job: u64, partition: u32, secs: f64| {
        r.add_proof(ProofRecord {
            t,
            job,
            partition,
            device: "cpu0".into(),
            verified: true,
            error: None,
            stages: [(Stage::Synthesis, secs)].into_iter().collect(),
        })
    };
    // Two 2-partition PoReps, a WinningPoSt submitted late and done fast, and a job of a
    // recording made before kinds (no kind: in no kind's figures).
    job(&mut r, 0, 0, JobState::Submitted, Some("porep"));
    job(&mut r, 0, 1, JobState::Submitted, Some("porep"));
    job(&mut r, 0, 2, JobState::Submitted, None);
    job(
        &mut r,
        5_000_000_000,
        3,
        JobState::Submitted,
        Some("winning-post"),
    );
    proof(&mut r, 5_500_000_000, 3, 0, 0.1);
    job(&mut r, 5_600_000_000, 3, JobState::Verified, None);
    for (j, end) in [(0u64, 8_000_000_000), (1, 10_000_000_000)] {
        proof(&mut r, end - 1, j, 0, 2.0);
        proof(&mut r, end, j, 1, 4.0);
        job(&mut r, end, j, JobState::Verified, None);
    }
    proof(&mut r, 10_000_000_000, 2, 0, 9.0);
    let s = r.summary(0, 10_000_000_000);
    assert_eq!(s.proofs, 6);
    let porep = &s.kinds["porep"];
    assert_eq!((porep.jobs, porep.proofs, porep.verified), (2, 4, 4));
    assert_eq!(porep.proofs_per_hour, 4.0 * 360.0);
    assert_eq!(porep.stages["synthesis"].median, 3.0);
    let latency = porep.latency.clone().unwrap();
    assert_eq!((latency.min, latency.max), (8.0, 10.0));
    let win = &s.kinds["winning-post"];
    assert_eq!((win.jobs, win.proofs), (1, 1));
    assert!((win.latency.clone().unwrap().median - 0.6).abs() < 1e-9);
    assert_eq!(s.kinds.len(), 2, "{:?}", s.kinds.keys());
    // A window holds the jobs that ended inside it.
    let late = r.summary_between(9_000_000_000, 10_000_000_000);
    assert_eq!(late.kinds["porep"].jobs, 1);
    assert!(!late.kinds.contains_key("winning-post"));
}
