//! Prestaging through the pipeline: a device that lays witnesses out right after synthesis
//! gets them back in its regions, a device that cannot read the layout takes a/b/c back out,
//! every proof verifies, and every prestaged witness is released once its region is done.

mod common;

use anyhow::Result;
use blstrs::Scalar;
use provetop_engine::backend::cpu::CpuExecutor;
use provetop_engine::backend::{
    BackendKind, Executor, Gate, Msms, Prestaged, RegionInput, RegionResult, StagePlan, Staged,
    Steps, Target,
};
use provetop_engine::circuit::Assignment;
use provetop_engine::config::EngineConfig;
use provetop_engine::telemetry::{Bus, DeviceInfo, Stage};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// a/b/c moved out of the assignment; counts itself while alive.
struct Held {
    abc: [Vec<Scalar>; 3],
    live: Arc<AtomicUsize>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Staged for Held {
    fn abc(&self) -> [Vec<Scalar>; 3] {
        self.abc.clone()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Synthesis writes a/b/c here; `finish` makes it a `Held`.
struct Filling {
    abc: [Vec<Scalar>; 3],
    live: Arc<AtomicUsize>,
}

impl Target for Filling {
    fn abc(&mut self) -> [&mut [Scalar]; 3] {
        let [a, b, c] = &mut self.abc;
        [a, b, c]
    }
    fn finish(self: Box<Self>, asg: &Assignment, _msms: &Msms) -> Prestaged {
        self.live.fetch_add(1, Ordering::SeqCst);
        Prestaged {
            rows: asg.num_rows(),
            data: Box::new(Held {
                abc: self.abc,
                live: self.live,
            }),
        }
    }
}

/// A CPU device that prestages: synthesis writes a/b/c into its `Filling`, and its regions
/// read them from the `Held` that becomes.
struct Stager {
    inner: CpuExecutor,
    live: Arc<AtomicUsize>,
    made: AtomicUsize,
    /// Regions that found their own `Held`.
    own: AtomicUsize,
}

impl Executor for Stager {
    fn device(&self) -> &str {
        "stager0"
    }
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            id: "stager0".into(),
            ..self.inner.info()
        }
    }
    fn stage_target(&self, plan: StagePlan) -> Option<Box<dyn Target>> {
        self.made.fetch_add(1, Ordering::SeqCst);
        Some(Box::new(Filling {
            abc: [0, 1, 2].map(|_| vec![-Scalar::from(7u64); plan.rows]),
            live: self.live.clone(),
        }))
    }
    fn prove_region(
        &self,
        mut input: RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        let held = input
            .prestaged
            .and_then(|p| p.data.as_any().downcast_ref::<Held>())
            .expect("every partition was prestaged");
        assert!(
            input.abc[0].is_empty(),
            "a/b/c moved into the prestaged witness"
        );
        assert_eq!(
            1usize << input.log2_domain,
            held.abc[0].len().next_power_of_two(),
            "the domain comes from the prestaged rows"
        );
        assert!(
            held.abc[0].iter().all(|x| *x != -Scalar::from(7u64)),
            "synthesis wrote every row of the target"
        );
        self.own.fetch_add(1, Ordering::SeqCst);
        input.abc = held.abc.clone();
        self.inner.prove_region(input, gate, steps)
    }
}

#[test]
fn prestaged_witnesses_reach_every_device_and_are_released() {
    assert_eq!(
        EngineConfig::default().get("prestage").as_deref(),
        Some("auto"),
        "prestage is auto by default (true on the cuda backend)"
    );
    let dir = tempfile::tempdir().unwrap();
    let live = Arc::new(AtomicUsize::new(0));
    let stager = Arc::new(Stager {
        inner: CpuExecutor::new(9, 1).unwrap(),
        live: live.clone(),
        made: AtomicUsize::new(0),
        own: AtomicUsize::new(0),
    });
    let engine = common::engine_with(dir.path(), stager.clone(), Bus::new());
    let (jobs, partitions) = (6u64, 3u32);
    let mut devices = vec![];
    common::run_jobs(&engine, jobs, partitions, |p| {
        assert!(p.record.verified, "{:?}", p.record.error);
        assert!(
            p.record.stages.contains_key(&Stage::Prep),
            "prestaging is timed as prep"
        );
        devices.push(p.record.device.clone());
    });
    engine.shutdown();
    let total = (jobs * partitions as u64) as usize;
    assert_eq!(devices.len(), total);
    assert_eq!(
        stager.made.load(Ordering::SeqCst),
        total,
        "cpu0 cannot prestage, stager0 did all"
    );
    let on = |d: &str| devices.iter().filter(|x| *x == d).count();
    assert_eq!(stager.own.load(Ordering::SeqCst), on("stager0"));
    assert!(
        on("cpu0") > 0 && on("stager0") > 0,
        "both devices proved: {devices:?}"
    );
    assert_eq!(
        live.load(Ordering::SeqCst),
        0,
        "every prestaged witness was released"
    );
}
