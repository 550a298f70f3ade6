//! Priorities on the cpu backend: a critical job submitted while normal partitions fill the
//! pipeline is synthesised before every normal partition still waiting and proved beside the
//! regions in flight, not after them; low work waits for the rest.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

use provetop_engine::backend::cpu::CpuExecutor;
use provetop_engine::backend::{BackendKind, Executor, Gate, RegionInput, RegionResult, Steps};
use provetop_engine::circuit::Workload;
use provetop_engine::config::EngineConfig;
use provetop_engine::pipeline::{EngineHandle, JobId, JobSpec, Outcome, Priority};
use provetop_engine::store::ParamsStore;
use provetop_engine::telemetry::{Bus, Clock, DeviceInfo, Event, JobState};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

fn job(partitions: u32, seed: u64, priority: Priority) -> JobSpec {
    JobSpec {
        workload: Workload::Synthetic {
            log2_constraints: 10,
        },
        partitions,
        seed,
        priority,
        name: None,
    }
}

/// Partition steps of the session, in the order the engine published them.
fn steps(events: &[Event]) -> Vec<(JobId, Option<u32>, JobState)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Job(j) => Some((j.job, j.partition, j.state)),
            _ => None,
        })
        .collect()
}

fn wait_jobs(engine: &EngineHandle, jobs: usize) {
    let mut done = 0;
    while done < jobs {
        match engine
            .outcomes()
            .recv_timeout(Duration::from_secs(120))
            .unwrap()
        {
            Outcome::Partition(p) => assert!(p.record.verified, "{:?}", p.record.error),
            Outcome::JobDone { .. } => done += 1,
        }
    }
}

/// A configuration of one synthesis worker, one device worker and one thread per pool, and a
/// parameter store under `dir`.
fn one_at_a_time(dir: &std::path::Path) -> (EngineConfig, Arc<ParamsStore>) {
    let mut cfg = EngineConfig::default();
    for (k, v) in [
        ("synthesis_workers", "1"),
        ("gpu_workers_per_device", "1"),
        ("synthesis_threads", "1"),
        ("prover_threads", "1"),
    ] {
        cfg.set(k, v).unwrap();
    }
    let store = Arc::new(ParamsStore::new(Some(dir.to_path_buf()), None));
    (cfg, store)
}

#[test]
fn critical_work_overtakes_waiting_normal_work_and_low_work_waits() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, store) = one_at_a_time(dir.path());
    let bus = Bus::new();
    let sub = bus.subscribe(1 << 20);
    let engine = EngineHandle::start(cfg, store, bus, Clock::start()).unwrap();
    let normal = engine.submit(job(8, 2, Priority::Normal)).unwrap();
    let low = engine.submit(job(2, 1, Priority::Low)).unwrap();
    // Let the normal job fill synthesis and the device queue.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while engine.status().queued < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing was synthesised"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let critical = engine.submit(job(2, 3, Priority::Critical)).unwrap();
    wait_jobs(&engine, 3);
    engine.shutdown();
    let events: Vec<Event> = sub.rx.try_iter().collect();
    let steps = steps(&events);

    let at = |job, partition: Option<u32>, state| {
        steps
            .iter()
            .position(|s| *s == (job, partition, state))
            .unwrap_or_else(|| panic!("no {state:?} for job {job} partition {partition:?}"))
    };
    let submitted = at(critical, None, JobState::Submitted);
    let last_synthesized = (0..2)
        .map(|p| at(critical, Some(p), JobState::Synthesized))
        .max()
        .unwrap();
    // Normal partitions synthesised between the critical job's submission and the end of its
    // synthesis: at most the one the single synthesis worker had started.
    let overtaken = steps[submitted..last_synthesized]
        .iter()
        .filter(|s| s.0 == normal && s.2 == JobState::Synthesized)
        .count();
    assert!(
        overtaken <= 1,
        "{overtaken} normal partitions were synthesised ahead of the critical job: {steps:?}"
    );
    // Once its first partition is synthesised, at most one normal partition (the one on the
    // device worker) starts proving before it.
    let ready = at(critical, Some(0), JobState::Synthesized);
    let proving = at(critical, Some(0), JobState::Proving);
    let ahead = steps[ready..proving]
        .iter()
        .filter(|s| s.0 == normal && s.2 == JobState::Proving)
        .count();
    assert!(
        ahead <= 1,
        "{ahead} normal partitions went to the device ahead of the critical one: {steps:?}"
    );
    // The low job, submitted before the critical one, waits for all the rest.
    let low_first = at(low, Some(0), JobState::Proving);
    for p in 0..8 {
        assert!(
            at(normal, Some(p), JobState::Synthesized) < low_first,
            "a low partition was proved before normal partition {p}: {steps:?}"
        );
    }
    // The job's submission event names its workload and priority for the dashboard.
    let detail = events.iter().find_map(|e| match e {
        Event::Job(j) if j.job == critical && j.partition.is_none() => j.detail.clone(),
        _ => None,
    });
    assert_eq!(detail.as_deref(), Some("synthetic-k10 · critical"));
}

/// A device whose ordinary regions hold the lock 400 ms, counting regions in flight and the
/// urgent ones that ran beside another.
struct Slow {
    inner: CpuExecutor,
    in_flight: AtomicUsize,
    urgent_beside_another: AtomicUsize,
}

impl Executor for Slow {
    fn device(&self) -> &str {
        // the cpu backend's only device: every partition comes here
        "cpu0"
    }
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }
    fn prove_region(
        &self,
        input: RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> anyhow::Result<RegionResult> {
        gate.compute(steps);
        let others = self.in_flight.fetch_add(1, SeqCst);
        if input.urgent && others > 0 {
            self.urgent_beside_another.fetch_add(1, SeqCst);
        }
        if !input.urgent {
            std::thread::sleep(Duration::from_millis(400));
        }
        let r = self.inner.prove_region(input, gate, steps);
        self.in_flight.fetch_sub(1, SeqCst);
        r
    }
}

#[test]
fn a_critical_partition_runs_beside_a_busy_worker_instead_of_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, store) = one_at_a_time(dir.path());
    let slow = Arc::new(Slow {
        inner: CpuExecutor::new(0, 1).unwrap(),
        in_flight: Default::default(),
        urgent_beside_another: Default::default(),
    });
    let device: Arc<dyn Executor> = slow.clone();
    let engine =
        EngineHandle::start_with_executors(cfg, store, Bus::new(), Clock::start(), vec![device])
            .unwrap();
    engine.submit(job(3, 2, Priority::Normal)).unwrap();
    // The one worker is in a 400 ms region: the critical partition finds no worker free.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while slow.in_flight.load(SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "nothing was proved");
        std::thread::sleep(Duration::from_millis(2));
    }
    engine.submit(job(1, 3, Priority::Critical)).unwrap();
    wait_jobs(&engine, 2);
    assert_eq!(
        slow.urgent_beside_another.load(SeqCst),
        1,
        "the critical region waited for the worker in its region"
    );
    // The worker for it left again: the device is back to its one worker.
    let workers = engine.status().devices[0].workers;
    engine.shutdown();
    assert_eq!(workers, 1);
}
