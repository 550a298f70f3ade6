//! The region's kernels on the compute stream, each stage between two marks of the timeline:
//! a, b and c on the device when the circuit is resident, the H pipeline, H's MSM, the witness
//! MSMs and their scalar-one sums, then B in G2.

use anyhow::Result;
use cudarc::driver::CudaStream;

use super::super::executor::CudaExecutor;
use super::super::gpu::{Gpu, Timeline};
use super::super::msm;
use super::super::ntt;
use super::super::srs::HQuery;
use super::super::workspace::{StreamSet, G2_PARTS_AT, G2_WINDOWS_AT};
use super::plan::{AbcFrom, Counts, Plan};
use super::upload::Uploaded;
use super::Resident;
use crate::backend::RegionInput;
use crate::telemetry::Stage;

/// The kernels' stages, each between two marks of the timeline.
pub(super) type Marks = Vec<(Stage, usize, usize)>;

/// The compute stream's kernels, each stage between two marks of the timeline.
struct Timed<'a> {
    gpu: &'a Gpu,
    stream: &'a CudaStream,
    tl: &'a mut Timeline,
    marks: Marks,
    /// `msm_double_buffer` off: a hard synchronisation after each MSM, for comparison.
    sync_msms: bool,
    /// The last stage's end, when nothing was queued on the stream since: the next stage
    /// starts there. Two marks in a row are a microsecond or two apart on the device (the
    /// event records themselves), and ten such slivers a partition were idle time no cause
    /// could name.
    last: Option<usize>,
}

impl Timed<'_> {
    fn run(&mut self, stage: Stage, f: impl FnOnce() -> Result<()>) -> Result<()> {
        let m0 = match self.last.take() {
            Some(m) => m,
            None => self.tl.mark(self.stream)?,
        };
        f()?;
        let m1 = self.tl.mark(self.stream)?;
        self.marks.push((stage, m0, m1));
        self.last = Some(m1);
        if self.sync_msms
            && matches!(
                stage,
                Stage::MsmH | Stage::MsmL | Stage::MsmA | Stage::MsmBG1 | Stage::MsmBG2
            )
        {
            // A hard synchronisation between MSMs, for comparison with none.
            self.gpu.sync(self.stream)?;
            self.last = None;
        }
        Ok(())
    }

    fn launched(self, g2: Option<G2Out>) -> Launched {
        Launched {
            marks: self.marks,
            end: self.last,
            g2,
        }
    }

    /// The stream waits for mark `m` of another stream: what follows starts a new span.
    fn wait(&mut self, m: usize) -> Result<()> {
        self.last = None;
        self.tl.wait(self.stream, m)
    }
}

/// What the kernels left: their stages' marks, the last stage's end when the read-back can
/// start there, and B in G2's output when it ran here.
pub(super) struct Launched {
    pub(super) marks: Marks,
    pub(super) end: Option<usize>,
    pub(super) g2: Option<G2Out>,
}

/// What B in G2 leaves in the results buffer, when it runs here: how many sums of scalar-one
/// bases (at `G2_PARTS_AT`) and the tail MSM's window sums (at `G2_WINDOWS_AT`) if it ran.
#[derive(Clone, Copy)]
pub(super) struct G2Out {
    pub(super) parts: usize,
    pub(super) windows: Option<msm::G2Windows>,
}

impl G2Out {
    /// How much of the results buffer to read back.
    pub(super) fn end(&self) -> usize {
        match self.windows {
            Some(w) => G2_WINDOWS_AT + w.bytes(),
            None => G2_PARTS_AT + self.parts * msm::G2_JACOBIAN,
        }
    }
}

impl CudaExecutor {
    /// The H pipeline, H's MSM, then each witness MSM (the tail MSM, then the batch sum of its
    /// scalar-one bases), then B in G2 (its tail MSM, then its scalar-one bases).
    pub(super) fn launch(
        &self,
        set: &StreamSet,
        plan: &Plan<'_>,
        resident: &Resident,
        input: &RegionInput<'_>,
        tl: &mut Timeline,
        up: &Uploaded,
    ) -> Result<Launched> {
        let ws = set.ws.as_ref().expect("workspace allocated");
        let (g, compute, n) = (&*self.gpu, &*set.compute, plan.n);
        let [pa, pb, pc, scratch] = plan.abc_dst(ws);
        let res = |i: usize| ws.results.at(i * msm::JACOBIAN);
        // The NTTs of each input wait for its upload only (b's and c's arrive while a's and
        // b's transforms run, so the span holds kernels), the witness MSMs for the rest.
        let abc_up = up.abc.map(|m| tl.event(m));
        let mut k = Timed {
            gpu: g,
            stream: compute,
            tl,
            marks: vec![],
            sync_msms: !input.opts.msm_double_buffer,
            last: None,
        };
        abc_up[0].wait(compute)?;
        if let AbcFrom::Device(c, _) = plan.abc_from {
            k.run(Stage::AbcEval, || {
                c.eval_enqueue(g, compute, ws.msm.ptr, n, [pa, pb, pc])
            })?;
        }
        let tables = &resident.tables;
        k.run(Stage::NttH, || {
            let mut ready = |i: usize| {
                if i > 0 {
                    abc_up[i].wait(compute)
                } else {
                    Ok(())
                }
            };
            ntt::h_pipeline(g, compute, tables, [pa, pb, pc], scratch, &mut ready).map(|_| ())
        })?;
        k.run(Stage::MsmH, || match &resident.srs.h {
            HQuery::Plain(h) => {
                let nh = (n - 1, n - 1);
                msm::enqueue(g, compute, h.ptr, pc, nh, ws.msm.ptr, res(0))
            }
            HQuery::Shifted(q, sh) => {
                let q = (q.ptr, *sh);
                msm::enqueue_shifted(g, compute, q, pc, n - 1, ws.msm.ptr, res(0))
            }
        })?;
        k.wait(up.end)?;
        let srs = &resident.srs;
        let witness = [
            (Stage::MsmL, srs.l.ptr),
            (Stage::MsmA, srs.a.ptr),
            (Stage::MsmBG1, srs.b_g1.ptr),
        ];
        for (i, (stage, bases)) in witness.into_iter().enumerate() {
            let ((scalars, idx), r) = (plan.tail_dst(ws, i), 1 + 2 * i);
            let Counts { len, ones, terms } = plan.counts[i];
            k.run(stage, || {
                if terms == 0 {
                    return g.zero_bytes(compute, res(r), msm::JACOBIAN);
                }
                let sized = (len, terms);
                msm::enqueue(g, compute, bases, scalars, sized, ws.msm.ptr, res(r))
            })?;
            k.run(Stage::BatchAdd, || {
                if ones == 0 {
                    return g.zero_bytes(compute, res(r + 1), msm::JACOBIAN);
                }
                msm::sum_enqueue(g, compute, bases, idx, ones, ws.sum.ptr, res(r + 1))
            })?;
        }
        // B in G2 over its resident bases and B's scalars already here for B in G1: the tail
        // MSM's window sums and the scalar-one bases' sums in parts, both for the host to
        // add (`results`).
        let Some(bases) = &resident.g2_bases else {
            return Ok(k.launched(None));
        };
        let Counts { len, ones, terms } = plan.counts[2];
        let (scalars, idx) = plan.tail_dst(ws, 2);
        let mut out = G2Out {
            parts: 0,
            windows: None,
        };
        k.run(Stage::MsmBG2, || {
            if terms > 0 {
                let (sized, wins) = ((len, terms), ws.results.at(G2_WINDOWS_AT));
                let bufs = (ws.msm.ptr, wins);
                let w = msm::g2_enqueue(g, compute, (bases.ptr, scalars), sized, bufs)?;
                out.windows = Some(w);
            }
            if ones > 0 {
                let parts = ws.results.at(G2_PARTS_AT);
                msm::g2_sum_enqueue(g, compute, (bases.ptr, idx, ones), ws.g2.ptr, parts)?;
                out.parts = msm::g2_sum_parts(ones);
            }
            Ok(())
        })?;
        Ok(k.launched(Some(out)))
    }
}
