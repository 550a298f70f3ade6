//! What the integration tests with an extra device share: a small cpu engine with the device
//! beside its own cpu0, and a batch of synthetic jobs run to the end.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

use provetop_engine::backend::Executor;
use provetop_engine::circuit::Workload;
use provetop_engine::config::EngineConfig;
use provetop_engine::pipeline::{EngineHandle, JobSpec, Outcome, PartitionResult};
use provetop_engine::store::ParamsStore;
use provetop_engine::telemetry::{Bus, Clock};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A cpu engine (cpu0 and `device`, two threads per pool), parameters cached under `dir`.
pub fn engine_with(dir: &Path, device: Arc<dyn Executor>, bus: Bus) -> EngineHandle {
    let store = Arc::new(ParamsStore::new(Some(dir.to_path_buf()), None));
    let mut cfg = EngineConfig {
        cpu_devices: 1,
        synthesis_threads: 2,
        prover_threads: 2,
        ..Default::default()
    };
    // These executors stand in for GPUs: prestaging on, as `auto` has it on the cuda backend.
    cfg.set("prestage", "true").unwrap();
    EngineHandle::start_with_executors(cfg, store, bus, Clock::start(), vec![device]).unwrap()
}

/// Submits `jobs` synthetic 2^8 jobs of `partitions` partitions and passes every partition's
/// result to `each` until all jobs are done.
pub fn run_jobs(
    engine: &EngineHandle,
    jobs: u64,
    partitions: u32,
    mut each: impl FnMut(&PartitionResult),
) {
    for seed in 0..jobs {
        engine
            .submit(JobSpec {
                workload: Workload::Synthetic {
                    log2_constraints: 8,
                },
                partitions,
                seed,
                priority: provetop_engine::pipeline::Priority::Normal,
                name: None,
            })
            .unwrap();
    }
    let mut done = 0;
    while done < jobs {
        match engine
            .outcomes()
            .recv_timeout(Duration::from_secs(120))
            .expect("the engine keeps proving")
        {
            Outcome::Partition(p) => each(&p),
            Outcome::JobDone { .. } => done += 1,
        }
    }
}
