//! One partition's region on a GPU, phase by phase in the order it runs: the plan (the witness
//! MSMs' 0/1 split and the sizes it gives), staging in (the worker's buffers, the resident SRS,
//! the NTT tables), the uploads on the copy stream, the kernels on the compute stream, and the
//! read-back into the steps and points the region returns.

mod launch;
mod plan;
mod upload;

use anyhow::Result;
use blstrs::G2Projective;
use group::Group;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

use super::abc::DeviceCircuit;
use super::executor::CudaExecutor;
use super::gpu::{DevBuf, Timeline};
use super::msm;
use super::ntt;
use super::srs::Srs;
use super::workspace::{StreamSet, G1_RESULTS, G2_PARTS_AT, G2_WINDOWS_AT};
use crate::backend::{Engine, Gate, RegionInput, RegionResult, Step, Steps};
use crate::telemetry::Stage;
use launch::{G2Out, Launched};
use plan::Plan;
use upload::Uploaded;

/// What the region reads that stays on the device between partitions.
pub(super) struct Resident {
    pub(super) srs: Arc<Srs>,
    /// B's query in G2, when B in G2 runs here.
    pub(super) g2_bases: Option<Arc<DevBuf>>,
    pub(super) tables: Arc<ntt::Tables>,
}

impl CudaExecutor {
    /// One partition's region. Whatever happens, nothing of it is left running when it
    /// returns: a region that fails waits for both its streams, so the host memory its copies
    /// read (`input`'s, the caller's until this returns) is not in use afterwards.
    pub(super) fn region(
        &self,
        set: &mut StreamSet,
        input: &RegionInput<'_>,
        circuit: Option<&DeviceCircuit>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        let r = self.region_in(set, input, circuit, gate, steps);
        steps.release();
        if r.is_err() {
            let _ = set.copy.synchronize();
            let _ = set.compute.synchronize();
        }
        r
    }

    fn region_in(
        &self,
        set: &mut StreamSet,
        input: &RegionInput<'_>,
        circuit: Option<&DeviceCircuit>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        let o = input.opts;
        let plan = Plan::new(input, circuit, steps);
        let mut tl = Timeline::start(&set.compute)?;
        // With prestage the upload happens before the lock; without, under it.
        if !o.prestage {
            steps.hold();
            self.stage_in(set, &plan, input, gate, steps)?;
        } else {
            let start = Instant::now();
            let sizes = (plan.msm_n, plan.msm_bytes);
            // Inside the region already (its first upload opened it): an allocation is a span.
            if let bytes @ 1.. = self.workspace(set, plan.log2, sizes, o.vram_budget)? {
                steps.push(Stage::Alloc, Engine::Host, start, bytes);
            }
        }
        let resident = self.resident(set, &plan, input, steps)?;
        let up = self.upload(set, &plan, input, &mut tl)?;
        if o.prestage {
            steps.hold();
            self.stage_in(set, &plan, input, gate, steps)?;
        }
        gate.compute(steps);
        let Launched { marks, end, g2 } =
            self.launch(set, &plan, &resident, input, &mut tl, &up)?;
        // The kernels are queued: what was held up on the way to them can go out.
        steps.release();
        let compute = &set.compute;
        let ws = set.ws.as_ref().expect("workspace allocated");
        // Every result in one copy: the G1 points, then B in G2's parts and windows.
        let mut out = vec![0u8; g2.map_or(G1_RESULTS * msm::JACOBIAN, |g| g.end())];
        let down0 = match end {
            Some(m) => m,
            None => tl.mark(compute)?,
        };
        let down = self.gpu.d2h(compute, &mut out, ws.results.ptr)?;
        let down1 = tl.mark(compute)?;
        down.wait()?;
        record(&tl, &up, &marks, (down0, down1, out.len() as u64), steps)?;
        Ok(results(&out, g2))
    }

    /// Waits at the gate for memory, then makes sure of the worker's buffers.
    fn stage_in(
        &self,
        set: &mut StreamSet,
        plan: &Plan<'_>,
        input: &RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<()> {
        // The wait for the memory lock is its own `lock_wait` step: `alloc` starts once held,
        // so a lock held elsewhere is not counted as an allocation.
        gate.memory(steps);
        let start = Instant::now();
        let sizes = (plan.msm_n, plan.msm_bytes);
        let bytes = self.workspace(set, plan.log2, sizes, input.opts.vram_budget)?;
        steps.push(Stage::Alloc, Engine::Host, start, bytes);
        Ok(())
    }

    /// The parameter set's queries, B's G2 bases when B in G2 runs here, the NTT tables.
    fn resident(
        &self,
        set: &mut StreamSet,
        plan: &Plan<'_>,
        input: &RegionInput<'_>,
        steps: &mut Steps,
    ) -> Result<Resident> {
        let (p, o) = (input.params, input.opts);
        let copy = set.copy.clone();
        let srs = self.srs(&mut set.staging, &copy, p, (&o, input.b_g2), steps)?;
        let g2_bases = match input.b_g2 {
            true => {
                Some(self.b_g2_bases(&srs, &mut set.staging, &copy, p, o.vram_budget, steps)?)
            }
            false => None,
        };
        let tables = self.tables(&copy, plan.log2, steps)?;
        Ok(Resident {
            srs,
            g2_bases,
            tables,
        })
    }
}

/// The region's steps, placed on the host clock once its work has completed: the upload, its
/// copy pieces, the kernels' stages, the read-back.
fn record(
    tl: &Timeline,
    up: &Uploaded,
    marks: &[(Stage, usize, usize)],
    (down0, down1, down_bytes): (usize, usize, u64),
    steps: &mut Steps,
) -> Result<()> {
    let step = |stage: Stage, engine: Engine, (m0, m1): (usize, usize), bytes: u64| {
        Ok::<_, anyhow::Error>(Step {
            stage,
            engine,
            start: tl.at(m0)?,
            end: tl.at(m1)?,
            bytes,
        })
    };
    steps.record(step(Stage::H2d, Engine::H2d, (up.start, up.end), up.bytes)?);
    for &(m0, m1, bytes) in &tl.pieces {
        steps.record(step(Stage::Dma, Engine::H2d, (m0, m1), bytes)?);
    }
    for &(stage, m0, m1) in marks {
        steps.record(step(stage, Engine::Compute, (m0, m1), 0)?);
    }
    steps.record(step(Stage::D2h, Engine::D2h, (down0, down1), down_bytes)?);
    Ok(())
}

/// The points from the device's results: H, then each witness MSM's tail and ones, and B in
/// G2 from its parts and window sums when it ran here.
fn results(out: &[u8], g2: Option<G2Out>) -> RegionResult {
    let pt = |i: usize| msm::jacobian(&out[i * msm::JACOBIAN..(i + 1) * msm::JACOBIAN]);
    let sum = |i: usize| {
        let (t, o) = (pt(i), pt(i + 1));
        // An all-zero buffer is blst's point at infinity (Z = 0) either way.
        t + o
    };
    let b_g2 = g2.map(|g| {
        let parts = &out[G2_PARTS_AT..][..g.parts * msm::G2_JACOBIAN];
        let ones = parts
            .par_chunks_exact(msm::G2_JACOBIAN)
            .map(msm::g2_jacobian)
            .reduce(G2Projective::identity, |a, b| a + b);
        let tail = g.windows.map_or(G2Projective::identity(), |w| {
            msm::g2_combine(&out[G2_WINDOWS_AT..][..w.bytes()], w)
        });
        ones + tail
    });
    RegionResult {
        h: pt(0),
        l: sum(1),
        a: sum(3),
        b_g1: sum(5),
        b_g2,
    }
}
