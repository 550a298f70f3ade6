//! One partition's region on a GPU, phase by phase in the order it runs: the plan (the witness
//! MSMs' 0/1 split and the sizes it gives), staging in (the worker's buffers, the resident SRS,
//! the NTT tables), the uploads on the copy stream, the kernels on the compute stream, and the
//! read-back into the steps and points the region returns.

use anyhow::Result;
use blstrs::{G2Projective, Scalar};
use cudarc::driver::CudaStream;
use ff::Field;
use group::Group;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

use super::abc::DeviceCircuit;
use super::executor::CudaExecutor;
use super::gpu::{DevBuf, Gpu, Timeline};
use super::msm;
use super::ntt;
use super::pinned::copy_bytes;
use super::prestage::{self, Witness};
use super::srs::{HQuery, Srs};
use super::workspace::{
    h_scratch_bytes, StreamSet, Workspace, FR, G1_RESULTS, G2_PARTS_AT, G2_WINDOWS_AT,
};
use crate::backend::{Engine, Gate, RegionInput, RegionResult, Step, Steps};
use crate::telemetry::Stage;

/// An MSM whose scalars are split into the scalar-one bases and the rest.
struct Split<'a> {
    /// The scalars; they go up with every 1 replaced by 0 (`zero_ones`), so the tail MSM
    /// skips them as it skips zeros.
    tail: &'a [Scalar],
    ones: Vec<u32>,
    /// Scalars other than 0 and 1: the tail MSM's terms.
    terms: usize,
}

/// A witness MSM's scalars: how many, how many are one, how many other than 0 and 1.
#[derive(Clone, Copy)]
struct Counts {
    len: usize,
    ones: usize,
    terms: usize,
}

/// Finds the scalar-one positions: a read-only pass. The ones are zeroed while the scalars
/// are staged for upload, so no second copy of the scalars is ever written.
fn split(scalars: &[Scalar]) -> Split<'_> {
    let ones: Vec<u32> = scalars
        .par_iter()
        .enumerate()
        .filter(|(_, s)| **s == Scalar::ONE)
        .map(|(i, _)| i as u32)
        .collect();
    let zeros = scalars
        .par_iter()
        .filter(|s| bool::from(s.is_zero()))
        .count();
    Split {
        tail: scalars,
        terms: scalars.len() - zeros - ones.len(),
        ones,
    }
}

/// Where a, b and c come from.
#[derive(Clone, Copy)]
enum AbcFrom<'a> {
    /// The prestaged block's sections, as synthesis wrote them.
    Block(&'a Witness),
    /// `RegionInput::abc`'s vectors, staged as they go up.
    Vectors,
    /// The resident circuit's products over the witness, on the device; the witness goes up
    /// from the prestaged block's section, or from the assignment staged as it goes.
    Device(&'a DeviceCircuit, Option<&'a Witness>),
}

/// What the region works out before it touches the device.
struct Plan<'a> {
    log2: u32,
    n: usize,
    abc_from: AbcFrom<'a>,
    /// The witness as laid out after synthesis, its 0/1 split done there.
    staged: Option<&'a Witness>,
    /// Else the 0/1 split done here.
    splits: Option<[Split<'a>; 3]>,
    /// Per witness MSM (L, A, B): its scalars and how many of them are ones.
    counts: [Counts; 3],
    /// The most scalars of an MSM: the workspace's room for each witness MSM.
    msm_n: usize,
    /// One MSM scratch for all of them.
    msm_bytes: usize,
}

impl<'a> Plan<'a> {
    fn new(
        input: &'a RegionInput<'_>,
        circuit: Option<&'a DeviceCircuit>,
        steps: &mut Steps,
    ) -> Plan<'a> {
        let log2 = input.log2_domain;
        let n = 1usize << log2;
        // The witness MSMs' 0/1 split: done after synthesis when prestaged, else here.
        let staged = input
            .prestaged
            .and_then(|p| p.data.as_any().downcast_ref::<Witness>());
        let abc_from = match (circuit, staged) {
            (Some(c), _) => AbcFrom::Device(c, staged.filter(|w| w.layout.witness.len > 0)),
            (None, Some(w)) if input.abc[0].is_empty() => AbcFrom::Block(w),
            (None, _) => AbcFrom::Vectors,
        };
        let (splits, counts) = match staged {
            Some(w) => (
                None,
                [0, 1, 2].map(|i| Counts {
                    len: w.layout.tails[i].len,
                    ones: w.layout.ones[i].len,
                    terms: w.layout.terms[i],
                }),
            ),
            None => {
                let start = Instant::now();
                let s = [split(input.aux), split(&input.msms.a), split(&input.msms.b)];
                steps.push(Stage::Prep, Engine::Host, start, 0);
                let counts = s.each_ref().map(|sp| Counts {
                    len: sp.tail.len(),
                    ones: sp.ones.len(),
                    terms: sp.terms,
                });
                (Some(s), counts)
            }
        };
        let msm_n = counts.iter().fold(n - 1, |m, c| m.max(c.len));
        // One MSM scratch for H (over its bases or their shifted copies) and the tails that
        // run (B in G1's scalars are all bits: no tail), each sized by its terms, B's in G2 too
        // when it runs here.
        let b = counts[2];
        let g2 = match input.b_g2 && b.terms > 0 {
            true => msm::g2_scratch_bytes(b.len, b.terms),
            false => 0,
        };
        // a, b and c evaluated on the device take the same scratch first, for the witness and
        // the partial sums.
        let abc = circuit.map_or(0, |c| c.scratch_bytes());
        let msm_bytes = counts
            .iter()
            .filter(|c| c.terms > 0)
            .map(|c| msm::scratch_bytes(c.len, c.terms))
            .fold(h_scratch_bytes(n - 1).max(g2).max(abc), usize::max);
        Plan {
            log2,
            n,
            abc_from,
            staged,
            splits,
            counts,
            msm_n,
            msm_bytes,
        }
    }

    /// a, b, c and the NTT scratch in the workspace.
    fn abc_dst(&self, ws: &Workspace) -> [u64; 4] {
        [0, 1, 2, 3].map(|i| ws.abc.at(i * self.n * FR))
    }

    /// Where witness MSM i's scalars and scalar-one positions go.
    fn tail_dst(&self, ws: &Workspace, i: usize) -> (u64, u64) {
        (
            ws.scalars.at(i * self.msm_n * FR),
            ws.idx.at(i * self.msm_n * 4),
        )
    }
}

/// What the region reads that stays on the device between partitions.
struct Resident {
    srs: Arc<Srs>,
    /// B's query in G2, when B in G2 runs here.
    g2_bases: Option<Arc<DevBuf>>,
    tables: Arc<ntt::Tables>,
}

/// The uploads' marks on the copy stream.
struct Uploaded {
    /// Before the first copy and after the last.
    start: usize,
    end: usize,
    /// After a, b and c each arrived (padding included).
    abc: [usize; 3],
    bytes: u64,
}

/// The kernels' stages, each between two marks of the timeline.
type Marks = Vec<(Stage, usize, usize)>;

/// The compute stream's kernels, each stage between two marks of the timeline.
struct Timed<'a> {
    gpu: &'a Gpu,
    stream: &'a CudaStream,
    tl: &'a mut Timeline,
    marks: Marks,
    /// `msm_double_buffer` off: a hard synchronisation after each MSM, for comparison.
    sync_msms: bool,
}

impl Timed<'_> {
    fn run(&mut self, stage: Stage, f: impl FnOnce() -> Result<()>) -> Result<()> {
        let m0 = self.tl.mark(self.stream)?;
        f()?;
        let m1 = self.tl.mark(self.stream)?;
        self.marks.push((stage, m0, m1));
        if self.sync_msms
            && matches!(
                stage,
                Stage::MsmH | Stage::MsmL | Stage::MsmA | Stage::MsmBG1 | Stage::MsmBG2
            )
        {
            // A hard synchronisation between MSMs, for comparison with none.
            self.gpu.sync(self.stream)?;
        }
        Ok(())
    }
}

/// What B in G2 leaves in the results buffer, when it runs here: how many sums of scalar-one
/// bases (at `G2_PARTS_AT`) and the tail MSM's window sums (at `G2_WINDOWS_AT`) if it ran.
#[derive(Clone, Copy)]
struct G2Out {
    parts: usize,
    windows: Option<msm::G2Windows>,
}

impl G2Out {
    /// How much of the results buffer to read back.
    fn end(&self) -> usize {
        match self.windows {
            Some(w) => G2_WINDOWS_AT + w.bytes(),
            None => G2_PARTS_AT + self.parts * msm::G2_JACOBIAN,
        }
    }
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
            self.stage_in(set, &plan, input, gate, steps)?;
        }
        gate.compute(steps);
        let (marks, g2) = self.launch(set, &plan, &resident, input, &mut tl, &up)?;
        let compute = &set.compute;
        let ws = set.ws.as_ref().expect("workspace allocated");
        // Every result in one copy: the G1 points, then B in G2's parts and windows.
        let mut out = vec![0u8; g2.map_or(G1_RESULTS * msm::JACOBIAN, |g| g.end())];
        let down0 = tl.mark(compute)?;
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

    /// Everything the region reads goes up on the copy stream: a, b and c first (each
    /// zero-padded to the domain, then marked, so the H pipeline starts on each as it
    /// arrives), or the witness they are evaluated from on the device; then the witness MSMs'
    /// scalars while the NTTs and H's MSM run.
    fn upload(
        &self,
        set: &mut StreamSet,
        plan: &Plan<'_>,
        input: &RegionInput<'_>,
        tl: &mut Timeline,
    ) -> Result<Uploaded> {
        let copy = set.copy.clone();
        let ws = set.ws.as_ref().expect("workspace allocated");
        let n = plan.n;
        let start = tl.mark(&copy)?;
        let mut bytes = 0u64;
        let abc_dst = &plan.abc_dst(ws)[..3];
        let mut abc = [0; 3];
        match plan.abc_from {
            AbcFrom::Block(w) => {
                // Straight from the page-locked block: the copy engine's work alone.
                for (i, dst) in abc_dst.iter().enumerate() {
                    bytes += self.piece(tl, &copy, w, *dst, w.layout.abc[i], FR)?;
                    abc[i] = self.pad_abc(tl, &copy, *dst, w.layout.abc[i].len, n)?;
                }
            }
            AbcFrom::Vectors => {
                for (i, (dst, v)) in abc_dst.iter().zip(&input.abc).enumerate() {
                    set.staging
                        .upload_timed(&self.gpu, &copy, *dst, v, &copy_bytes, tl)?;
                    bytes += (v.len() * FR) as u64;
                    abc[i] = self.pad_abc(tl, &copy, *dst, v.len(), n)?;
                }
            }
            AbcFrom::Device(c, staged) => {
                // The witness at the start of the MSM scratch, which the products use first.
                let dst = ws.msm.ptr;
                match staged {
                    Some(w) => bytes += self.piece(tl, &copy, w, dst, w.layout.witness, FR)?,
                    None => {
                        let parts = [
                            (dst, input.input),
                            (dst + (input.input.len() * FR) as u64, input.aux),
                        ];
                        for (at, part) in parts {
                            set.staging.upload_timed(
                                &self.gpu,
                                &copy,
                                at,
                                part,
                                &copy_bytes,
                                tl,
                            )?;
                        }
                        bytes += (c.columns() * FR) as u64;
                    }
                }
                abc = [tl.mark(&copy)?; 3];
            }
        }
        if let Some(w) = plan.staged {
            for i in 0..3 {
                let (scalars, idx) = plan.tail_dst(ws, i);
                bytes += self.piece(tl, &copy, w, scalars, w.layout.tails[i], FR)?;
                bytes += self.piece(tl, &copy, w, idx, w.layout.ones[i], 4)?;
            }
        } else {
            for (i, sp) in plan.splits.iter().flatten().enumerate() {
                let (scalars, idx) = plan.tail_dst(ws, i);
                if !sp.tail.is_empty() {
                    set.staging.upload_timed(
                        &self.gpu,
                        &copy,
                        scalars,
                        sp.tail,
                        &prestage::zero_ones,
                        tl,
                    )?;
                }
                if !sp.ones.is_empty() {
                    set.staging
                        .upload_timed(&self.gpu, &copy, idx, &sp.ones, &copy_bytes, tl)?;
                }
                bytes += (sp.tail.len() * FR + sp.ones.len() * 4) as u64;
            }
        }
        let end = tl.mark(&copy)?;
        Ok(Uploaded {
            start,
            end,
            abc,
            bytes,
        })
    }

    /// Copies one section of the prestaged block to `dst` on the copy stream, marked as a
    /// piece of the upload; returns its bytes.
    fn piece(
        &self,
        tl: &mut Timeline,
        copy: &CudaStream,
        w: &Witness,
        dst: u64,
        sec: prestage::Section,
        elem: usize,
    ) -> Result<u64> {
        let piece = sec.bytes(elem);
        let m0 = tl.mark(copy)?;
        // SAFETY: the section lies in the prestaged block, page-locked and held by `input`
        // until `region` returns, which waits for this copy first (the compute stream waits
        // on the copy stream's marks, and a failed region on both).
        unsafe { self.gpu.h2d_pinned(copy, dst, w.block.ptr(sec.at), piece)? };
        let m1 = tl.mark(copy)?;
        tl.pieces.push((m0, m1, piece as u64));
        Ok(piece as u64)
    }

    /// Zeroes a, b or c past its `len` evaluations to the domain's `n` on the copy stream and
    /// marks the input ready.
    fn pad_abc(
        &self,
        tl: &mut Timeline,
        copy: &CudaStream,
        dst: u64,
        len: usize,
        n: usize,
    ) -> Result<usize> {
        self.gpu
            .zero_bytes(copy, dst + (len * FR) as u64, (n - len) * FR)?;
        tl.mark(copy)
    }

    /// The H pipeline, H's MSM, then each witness MSM (the tail MSM, then the batch sum of its
    /// scalar-one bases), then B in G2 (its tail MSM, then its scalar-one bases).
    fn launch(
        &self,
        set: &StreamSet,
        plan: &Plan<'_>,
        resident: &Resident,
        input: &RegionInput<'_>,
        tl: &mut Timeline,
        up: &Uploaded,
    ) -> Result<(Marks, Option<G2Out>)> {
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
        k.tl.wait(compute, up.end)?;
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
            return Ok((k.marks, None));
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
        Ok((k.marks, Some(out)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_scalars_have_their_ones_zeroed_and_positions_listed() {
        let s = [
            Scalar::ZERO,
            Scalar::ONE,
            Scalar::from(2u64),
            -Scalar::ONE,
            Scalar::ONE,
        ];
        let sp = split(&s);
        assert_eq!(sp.ones, vec![1, 4]);
        let bytes = |v: &[Scalar]| crate::hostmem::as_bytes(v).to_vec();
        let mut staged = vec![0xAAu8; s.len() * FR];
        prestage::zero_ones(&mut staged, &bytes(sp.tail));
        let want = [
            Scalar::ZERO,
            Scalar::ZERO,
            Scalar::from(2u64),
            -Scalar::ONE,
            Scalar::ZERO,
        ];
        assert_eq!(staged, bytes(&want));
    }
}
