//! Live reconfiguration under load: random valid and invalid changes while partitions prove.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

use provetop_engine::circuit::Workload;
use provetop_engine::config::EngineConfig;
use provetop_engine::pipeline::{EngineHandle, JobSpec, Outcome};
use provetop_engine::store::ParamsStore;
use provetop_engine::telemetry::{Bus, Clock, Event};
use rand::{seq::SliceRandom, Rng, SeedableRng};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

fn engine(dir: &tempfile::TempDir, cfg: EngineConfig) -> EngineHandle {
    let store = Arc::new(ParamsStore::new(Some(dir.path().to_path_buf()), None));
    EngineHandle::start(cfg, store, Bus::new(), Clock::start()).unwrap()
}

fn valid_change(rng: &mut impl Rng) -> (String, String) {
    let (k, v): (&str, String) = match rng.gen_range(0..10) {
        0 => (
            "lock",
            ["single", "two-lock", "none"]
                .choose(rng)
                .unwrap()
                .to_string(),
        ),
        1 => ("gpu_workers_per_device", rng.gen_range(1..=4).to_string()),
        2 => ("synthesis_workers", rng.gen_range(1..=3).to_string()),
        3 => ("synthesis_threads", rng.gen_range(1..=3).to_string()),
        4 => ("prover_threads", rng.gen_range(1..=3).to_string()),
        5 => ("prestage", rng.gen_bool(0.5).to_string()),
        6 => ("msm_double_buffer", rng.gen_bool(0.5).to_string()),
        // `gpu` on the cpu backend is refused (below).
        7 => ("b_g2_on", "cpu".to_string()),
        8 => ("cpu_devices", rng.gen_range(1..=3).to_string()),
        _ => (
            "host_memory_budget",
            ["auto", "1", "67108864"].choose(rng).unwrap().to_string(),
        ),
    };
    (k.to_string(), v)
}

fn invalid_change(rng: &mut impl Rng) -> (String, String) {
    let (k, v) = *[
        ("gpu_workers_per_device", "0"),
        ("gpu_workers_per_device", "17"),
        ("lock", "quad"),
        ("prestage", "maybe"),
        ("synthesis_threads", "-2"),
        ("cpu_devices", "0"),
        ("b_g2_on", "fpga"),
        ("b_g2_on", "gpu"),
        ("backend", "cpu"),
        ("workers", "3"),
        ("vram_budget", "lots"),
    ]
    .choose(rng)
    .unwrap();
    (k.to_string(), v.to_string())
}

#[test]
fn two_hundred_random_changes_lose_no_proof() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = EngineConfig {
        synthesis_threads: 2,
        prover_threads: 2,
        ..Default::default()
    };
    let engine = engine(&dir, cfg);
    let events = engine.bus().subscribe(1 << 20);
    // Large enough that the 40 partitions outlast the changes (2^9 proved them all in about
    // the time 250 changes take on two cores).
    let workload = Workload::Synthetic {
        log2_constraints: 11,
    };
    let jobs: Vec<u64> = (0..10)
        .map(|i| {
            engine
                .submit(JobSpec {
                    workload: workload.clone(),
                    partitions: 4,
                    seed: i,
                    priority: provetop_engine::pipeline::Priority::Normal,
                    name: None,
                })
                .unwrap()
        })
        .collect();

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
    let mut plan: Vec<bool> = [vec![true; 200], vec![false; 50]].concat();
    plan.shuffle(&mut rng);
    let mut applied = vec![];
    let mut under_load = 0;
    for valid in plan {
        let change = if valid {
            valid_change(&mut rng)
        } else {
            invalid_change(&mut rng)
        };
        let before = engine.config();
        match engine.reconfigure(std::slice::from_ref(&change), "test") {
            Ok(changes) => {
                assert!(valid, "{change:?} was accepted");
                assert_eq!(engine.config().get(&change.0).unwrap(), change.1);
                applied.extend(changes);
                if engine.status().finished_partitions < 40 {
                    under_load += 1;
                }
            }
            Err(e) => {
                assert!(!valid, "{change:?} was refused: {e}");
                assert_eq!(e.key, change.0);
                assert!(!e.message.is_empty());
                assert_eq!(
                    engine.config(),
                    before,
                    "a refused change leaves the config alone"
                );
            }
        }
        std::thread::yield_now();
    }

    assert!(
        under_load >= 100,
        "only {under_load} changes landed while partitions were proving"
    );
    let mut seen = BTreeSet::new();
    let mut done = 0;
    while done < jobs.len() {
        match engine
            .outcomes()
            .recv_timeout(Duration::from_secs(120))
            .expect("the engine keeps proving")
        {
            Outcome::Partition(p) => {
                assert!(p.record.verified, "{:?}", p.record);
                assert!(
                    seen.insert((p.record.job, p.record.partition)),
                    "duplicate {:?}",
                    p.record
                );
            }
            Outcome::JobDone {
                verified,
                failed,
                cancelled,
                ..
            } => {
                assert_eq!((verified, failed, cancelled), (4, 0, 0));
                done += 1;
            }
        }
    }
    let want: BTreeSet<_> = jobs
        .iter()
        .flat_map(|j| (0..4).map(move |p| (*j, p)))
        .collect();
    assert_eq!(seen, want, "every partition proved exactly once");
    engine.shutdown();

    let config_events: Vec<_> = events
        .rx
        .try_iter()
        .filter_map(|e| match e {
            Event::Config(c) => Some(c),
            _ => None,
        })
        .collect();
    let (ok, refused): (Vec<_>, Vec<_>) = config_events.into_iter().partition(|c| c.applied);
    assert_eq!(ok, applied, "Config events are exactly the applied changes");
    assert_eq!(refused.len(), 50);
    assert!(refused.iter().all(|c| c.error.is_some()));
    assert_eq!(engine.config_log().len(), applied.len() + 50);
}

#[test]
fn a_cancelled_job_drops_its_partitions_and_the_others_finish() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = EngineConfig {
        synthesis_workers: 1,
        gpu_workers_per_device: 1,
        ..Default::default()
    };
    let engine = engine(&dir, cfg);
    let workload = Workload::Synthetic {
        log2_constraints: 8,
    };
    let a = engine
        .submit(JobSpec {
            workload: workload.clone(),
            partitions: 6,
            seed: 1,
            priority: provetop_engine::pipeline::Priority::Normal,
            name: None,
        })
        .unwrap();
    let b = engine
        .submit(JobSpec {
            workload: workload.clone(),
            partitions: 6,
            seed: 2,
            priority: provetop_engine::pipeline::Priority::Normal,
            name: None,
        })
        .unwrap();
    let c = engine
        .submit(JobSpec {
            workload,
            partitions: 2,
            seed: 3,
            priority: provetop_engine::pipeline::Priority::Normal,
            name: None,
        })
        .unwrap();
    assert!(engine.cancel(b));
    assert!(!engine.cancel(99));
    let mut done = std::collections::BTreeMap::new();
    let mut proved = vec![];
    while done.len() < 3 {
        match engine
            .outcomes()
            .recv_timeout(Duration::from_secs(60))
            .unwrap()
        {
            Outcome::Partition(p) => proved.push(p.record.job),
            Outcome::JobDone {
                job,
                verified,
                failed,
                cancelled,
            } => {
                done.insert(job, (verified, failed, cancelled));
            }
        }
    }
    engine.shutdown();
    assert_eq!(done[&a], (6, 0, 0));
    assert_eq!(done[&c], (2, 0, 0));
    let (v, f, x) = done[&b];
    assert_eq!((v + x, f), (6, 0));
    assert!(x > 0, "cancelled partitions are counted");
    assert_eq!(proved.iter().filter(|j| **j == b).count() as u32, v);
}

#[test]
fn a_host_budget_smaller_than_a_partition_still_proves_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = EngineConfig::default();
    cfg.set("host_memory_budget", "1").unwrap();
    let engine = engine(&dir, cfg);
    engine
        .submit(JobSpec {
            workload: Workload::Synthetic {
                log2_constraints: 8,
            },
            partitions: 3,
            seed: 0,
            priority: provetop_engine::pipeline::Priority::Normal,
            name: None,
        })
        .unwrap();
    let mut verified = 0;
    while let Outcome::Partition(p) = engine
        .outcomes()
        .recv_timeout(Duration::from_secs(60))
        .unwrap()
    {
        assert!(p.record.verified);
        verified += 1;
    }
    assert_eq!(verified, 3);
    assert!(engine.status().host_bytes_in_use == 0);
    engine.shutdown();
}

#[test]
fn the_host_budget_leaves_partitions_only_what_the_parameters_leave() {
    let dir = tempfile::tempdir().unwrap();
    let workload = Workload::Synthetic {
        log2_constraints: 14,
    };
    let mut cfg = EngineConfig::default();
    cfg.set("synthesis_workers", "4").unwrap();
    let engine = engine(&dir, cfg);
    // The parameters first: they count in the host budget from then on.
    engine.store().get(&workload, &|_, _, _| {}).unwrap();
    let resident = engine.store().resident().in_use();
    let partition = provetop_engine::pipeline::partition_bytes(1 << 14);
    assert!(resident > partition, "{resident} vs {partition}");
    // Room for one and a half partitions beside the parameters: one at a time. Without the
    // parameters counted, two or more would be admitted at once.
    let budget = resident + partition * 3 / 2;
    engine
        .reconfigure(&[("host_memory_budget".into(), budget.to_string())], "test")
        .unwrap();
    engine
        .submit(JobSpec {
            workload,
            partitions: 4,
            seed: 0,
            priority: provetop_engine::pipeline::Priority::Normal,
            name: None,
        })
        .unwrap();
    let (mut verified, mut most) = (0, 0);
    while verified < 4 {
        most = most.max(engine.status().host_bytes_in_use);
        let outcome = engine.outcomes().recv_timeout(Duration::from_millis(1));
        if let Ok(Outcome::Partition(p)) = outcome {
            assert!(p.record.verified);
            verified += 1;
        }
    }
    assert!(
        most <= partition,
        "{most} bytes of partitions held at once under a budget for one"
    );
    engine.shutdown();
}
