//! The cpu backend: our NTT and blst's curve arithmetic on a rayon pool per executor.

pub mod msm;
pub use crate::domain as ntt;

use anyhow::Result;
use blstrs::{G1Projective, G2Projective};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use super::{BackendKind, Engine, Executor, Gate, RegionInput, RegionResult, Steps};
use crate::domain::Domain;
use crate::telemetry::Stage;

/// A cpu device: `cpuN`, proving on its own rayon pool, with twiddle tables cached per domain size.
pub struct CpuExecutor {
    name: String,
    pool: rayon::ThreadPool,
    domains: Mutex<HashMap<u32, Arc<Domain>>>,
}

impl CpuExecutor {
    /// The executor `cpu{index}` on a pool of `threads` (at least one) named after it.
    pub fn new(index: usize, threads: usize) -> Result<Self> {
        let name = format!("cpu{index}");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name({
                let name = name.clone();
                move |i| format!("{name}-{i}")
            })
            .build()?;
        Ok(CpuExecutor {
            name,
            pool,
            domains: Mutex::default(),
        })
    }

    /// Threads of its pool.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Twiddle tables are kept per domain size: every partition of a job reuses them.
    fn domain(&self, log2: u32) -> Arc<Domain> {
        self.domains
            .lock()
            .entry(log2)
            .or_insert_with(|| Arc::new(Domain::new(log2)))
            .clone()
    }
}

impl Executor for CpuExecutor {
    fn device(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn info(&self) -> crate::telemetry::DeviceInfo {
        crate::telemetry::DeviceInfo {
            id: self.name.clone(),
            name: format!("CPU executor ({} threads)", self.threads()),
            kind: "cpu".into(),
            memory_bytes: 0,
            pcie: None,
        }
    }

    fn prove_region(
        &self,
        input: RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        let mut input = input;
        input.restore_abc()?;
        let domain = self.domain(input.log2_domain);
        // Nothing to stage on the host: the region is all compute.
        gate.compute(steps);
        self.pool.install(|| {
            let [mut a, mut b, mut c] = input.abc;
            let h = steps.time(Stage::NttH, || domain.h_poly(&mut a, &mut b, &mut c));
            drop((a, b, c));
            let p = input.params;
            let mut g1 = |stage, bases: &[blstrs::G1Affine], scalars: &[blstrs::Scalar]| {
                let start = Instant::now();
                let (sum, split) = msm::msm::<G1Projective>(bases, scalars);
                // The batch addition of scalar-one bases is reported as its own stage inside.
                steps.push(stage, Engine::Compute, start, 0);
                if split.ones > 0 {
                    steps.record(super::Step {
                        stage: Stage::BatchAdd,
                        engine: Engine::Compute,
                        start,
                        end: start + split.batch_add,
                        bytes: 0,
                    });
                }
                sum
            };
            let h = g1(Stage::MsmH, &p.h, &h);
            let l = g1(Stage::MsmL, &p.l, input.aux);
            let a = g1(Stage::MsmA, &p.a, &input.msms.a);
            let b_g1 = g1(Stage::MsmBG1, &p.b_g1, &input.msms.b);
            let b_g2 = input.b_g2.then(|| {
                steps.time(Stage::MsmBG2, || {
                    msm::msm::<G2Projective>(&p.b_g2, &input.msms.b).0
                })
            });
            Ok(RegionResult {
                h,
                l,
                a,
                b_g1,
                b_g2,
            })
        })
    }
}
