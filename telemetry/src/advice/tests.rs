//! Scripted runs with known bottlenecks, as their reports would hold them: each must get the
//! right first recommendation, and a busy device none.

use std::collections::BTreeMap;

use super::*;
use crate::config::{EngineConfig, Placement};
use crate::gaps::GapDetail;
use crate::report::{DeviceReport, HostReport, Stat, Summary, TimelineCheck};

fn summary(rate: f64, stages: &[(&'static str, f64)]) -> Summary {
    Summary {
        proofs: 100,
        verified: 100,
        failed: 0,
        wall_seconds: 100.0,
        proofs_per_hour: rate,
        steady_proofs_per_hour: rate,
        stages: stages
            .iter()
            .map(|(k, v)| {
                let s = Stat {
                    median: *v,
                    min: *v,
                    max: *v,
                };
                (*k, s)
            })
            .collect(),
        kinds: Default::default(),
    }
}

/// A GPU over 100 s: `busy` seconds computing, the rest idle for `gaps`.
fn gpu(busy: f64, gaps: &[(&'static str, f64)], detail: GapDetail<f64>) -> DeviceReport {
    let idle: f64 = gaps.iter().map(|g| g.1).sum();
    DeviceReport {
        id: "gpu0".into(),
        busy_ratio: busy / 100.0,
        steady_busy_ratio: busy / 100.0,
        busy_seconds: busy,
        idle_seconds: idle,
        partitions: 100,
        gaps: gaps.iter().copied().collect(),
        gap_detail: detail,
        nvml: None,
        pcie: None,
        timeline: TimelineCheck::default(),
    }
}

fn host(cpu: f64, synthesis: f64, prover: f64) -> HostReport {
    HostReport {
        cpu_busy_mean: cpu,
        pools_busy_mean: [("synthesis".into(), synthesis), ("prover".into(), prover)]
            .into_iter()
            .collect(),
        samples: 100,
        ..HostReport::default()
    }
}

fn config(f: impl FnOnce(&mut EngineConfig)) -> EngineConfig {
    let mut c = EngineConfig {
        synthesis_threads: 16,
        prover_threads: 16,
        ..Default::default()
    };
    f(&mut c);
    c
}

fn first(v: &Verdict) -> &Advice {
    v.advice
        .first()
        .unwrap_or_else(|| panic!("no advice: {v:?}"))
}

#[test]
fn too_few_synthesis_workers_get_more_workers() {
    // 2 workers at 1 s a partition supply 7,200/h; the GPU proves 7,000/h and waits for
    // synthesis 60 % of the time with the synthesis pool 30 % busy.
    let detail = GapDetail {
        waiting_synthesis: BTreeMap::from([("workers", 60.0)]),
        ..GapDetail::default()
    };
    let devices = [gpu(40.0, &[("waiting_synthesis", 60.0)], detail)];
    let s = summary(7000.0, &[("synthesis", 1.0)]);
    let h = host(0.35, 0.3, 0.05);
    let c = config(|c| c.synthesis_workers = 2);
    let v = advise(&Evidence {
        summary: &s,
        devices: &devices,
        host: Some(&h),
        config: &c,
        cores: 16,
        jobs_in_flight: Some(8),
    });
    let a = first(&v);
    assert_eq!(a.knob, "synthesis_workers", "{v:?}");
    assert_eq!(a.from, "2");
    assert!(a.to.parse::<usize>().unwrap() > 2, "{a:?}");
    // Removing 60 % idle gives 2.5×; the pool's threads allow 1/0.3.
    assert!((a.expected_gain - 2.5).abs() < 0.01, "{a:?}");
    assert!(
        v.bottleneck.contains("waits for synthesis 60 %")
            && v.bottleneck.contains("of 16 cores idle"),
        "{}",
        v.bottleneck
    );
}

#[test]
fn too_few_jobs_in_flight_get_more_jobs() {
    // Synthesis could supply far more (4 workers at 0.2 s), but the GPU has no work 50 % of
    // the time between jobs.
    let detail = GapDetail {
        no_work: BTreeMap::from([("too_few_jobs", 45.0), ("run_start", 5.0)]),
        ..GapDetail::default()
    };
    let devices = [gpu(50.0, &[("no_work", 50.0)], detail)];
    let s = summary(1000.0, &[("synthesis", 0.2)]);
    let h = host(0.4, 0.2, 0.1);
    let c = config(|c| c.synthesis_workers = 4);
    let v = advise(&Evidence {
        summary: &s,
        devices: &devices,
        host: Some(&h),
        config: &c,
        cores: 16,
        jobs_in_flight: Some(2),
    });
    let a = first(&v);
    assert_eq!(
        (a.knob.as_str(), a.from.as_str()),
        (CONCURRENCY, "2"),
        "{v:?}"
    );
    assert!(a.to.parse::<u64>().unwrap() >= 4, "{a:?}");
    // 45 of 95 steady seconds idle: ×1.90.
    assert!((a.expected_gain - 95.0 / 50.0).abs() < 0.01, "{a:?}");
    assert!(
        v.bottleneck.contains("too few jobs in flight (2)"),
        "{}",
        v.bottleneck
    );
}

#[test]
fn a_lock_held_through_host_work_gets_a_looser_lock() {
    let detail = GapDetail {
        lock_held: BTreeMap::from([("after_msm_h".to_string(), 25.0), ("h2d".into(), 5.0)]),
        ..GapDetail::default()
    };
    let devices = [gpu(
        65.0,
        &[("lock_held", 30.0), ("waiting_synthesis", 5.0)],
        detail,
    )];
    let s = summary(2000.0, &[("synthesis", 0.1)]);
    let h = host(0.5, 0.4, 0.3);
    let c = config(|c| c.synthesis_workers = 8);
    let v = advise(&Evidence {
        summary: &s,
        devices: &devices,
        host: Some(&h),
        config: &c,
        cores: 16,
        jobs_in_flight: Some(12),
    });
    let a = first(&v);
    assert_eq!(
        (a.knob.as_str(), a.from.as_str(), a.to.as_str()),
        ("lock", "single", "two-lock"),
        "{v:?}"
    );
    assert!((a.expected_gain - 1.0 / 0.7).abs() < 0.01, "{a:?}");
    assert!(
        v.bottleneck.contains("held through host work after msm_h"),
        "{}",
        v.bottleneck
    );
}

#[test]
fn b_in_g2_on_the_busy_host_goes_to_the_gpu() {
    let devices = [gpu(
        40.0,
        &[("waiting_synthesis", 60.0)],
        GapDetail {
            waiting_synthesis: BTreeMap::from([("cores", 60.0)]),
            ..GapDetail::default()
        },
    )];
    let s = summary(
        1000.0,
        &[("synthesis", 0.3), ("msm_b_g2", 2.0), ("finalize", 0.1)],
    );
    let h = host(0.97, 0.95, 0.6);
    let c = config(|c| c.b_g2_on = Placement::Cpu);
    let v = advise(&Evidence {
        summary: &s,
        devices: &devices,
        host: Some(&h),
        config: &c,
        cores: 16,
        jobs_in_flight: Some(12),
    });
    // Threads are already every core: no more of them; B in G2 frees the prover's share.
    assert_eq!(first(&v).knob, "b_g2_on", "{v:?}");
    assert!(v.advice.iter().all(|a| a.knob != "synthesis_threads"));
}

#[test]
fn b_in_g2_on_every_jobs_way_goes_to_the_gpu_before_more_jobs() {
    // The H200's 8MiB PoRep from the old defaults (bench/results/2026-12-03-h200/call6,
    // sweep-old.json): one job in flight, B in G2 on the host 1.54 s of a 1.86 s turnaround,
    // 15 % of the cores busy. Measured: `b_g2_on gpu` ×4.72, eight jobs in flight ×3.37.
    let detail = GapDetail {
        no_work: BTreeMap::from([("too_few_jobs", 10.58), ("run_end", 1.70)]),
        waiting_synthesis: BTreeMap::from([("workers", 2.01)]),
        ..GapDetail::default()
    };
    let mut d = gpu(
        0.95,
        &[("no_work", 12.28), ("waiting_synthesis", 2.01)],
        detail,
    );
    d.idle_seconds = 14.35;
    let s = summary(
        1963.0,
        &[
            ("synthesis", 0.196),
            ("abc_eval", 0.0015),
            ("prep", 0.043),
            ("h2d", 0.0076),
            ("device_wall", 0.0637),
            ("msm_b_g2", 1.537),
            ("finalize", 0.0009),
            ("verify", 0.0056),
        ],
    );
    let h = host(0.154, 0.022, 0.121);
    let c = config(|c| {
        c.b_g2_on = Placement::Cpu;
        c.synthesis_workers = 2;
    });
    let v = advise(&Evidence {
        summary: &s,
        devices: &[d],
        host: Some(&h),
        config: &c,
        cores: 16,
        jobs_in_flight: Some(1),
    });
    let a = first(&v);
    assert_eq!(
        (a.knob.as_str(), a.to.as_str()),
        ("b_g2_on", "gpu"),
        "{v:?}"
    );
    // L / (L − t_g2) = 1.855 / 0.318.
    assert!((a.expected_gain - 5.83).abs() < 0.02, "{a:?}");
    assert!(a.reason.contains("turnaround"), "{a:?}");
    // More jobs come second, no more than the cores allow: 0.85 / 0.154.
    let more = v
        .advice
        .iter()
        .find(|x| x.knob == CONCURRENCY)
        .expect("concurrency");
    assert!((more.expected_gain - 0.85 / 0.154).abs() < 0.02, "{more:?}");
}

#[test]
fn a_busy_device_gets_no_advice() {
    let devices = [gpu(
        96.0,
        &[("lock_held", 1.0), ("no_work", 3.0)],
        GapDetail::default(),
    )];
    let s = summary(5000.0, &[("synthesis", 0.5), ("device_kernels", 0.7)]);
    let c = config(|_| {});
    let v = advise(&Evidence {
        summary: &s,
        devices: &devices,
        host: None,
        config: &c,
        cores: 16,
        jobs_in_flight: None,
    });
    assert!(v.advice.is_empty(), "{v:?}");
    assert!(
        v.bottleneck.contains("the device is the bottleneck"),
        "{}",
        v.bottleneck
    );
    assert!(v.advice.len() <= MAX_ADVICE);
}
