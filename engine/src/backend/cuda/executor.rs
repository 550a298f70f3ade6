//! A GPU as an `Executor`: per partition, uploads a/b/c and the MSM scalars, runs the H
//! pipeline and the H, L, A and B_G1 MSMs on the device, and reads back five points. The SRS
//! stays resident per parameter set; each concurrent worker has its own streams and workspace.
//! A partition that does not fit waits for memory other workers release, or, when nothing else
//! runs, proves on the CPU and says so.

use anyhow::Result;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::CudaStream;
use ff::Field;
use group::Group;
use parking_lot::{Condvar, Mutex};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use super::gpu::{copy_bytes, DevBuf, Gpu, OutOfMemory, Staging, Timeline};
use super::{msm, ntt, prestage};
use crate::backend::cpu::CpuExecutor;
use crate::backend::{
    BackendKind, Engine, Executor, Gate, Prestaged, RegionInput, RegionOptions, Steps, Target,
};
use crate::config::{Budget, Residency};
use crate::params::Parameters;
use crate::prover::RegionResult;
use crate::telemetry::accounting::VramPurpose;
use crate::telemetry::{DeviceInfo, Stage};

const FR: usize = 32;
const G1: usize = 96;
const G2: usize = 192;

/// The device copy of a parameter set's G1 queries.
struct Srs {
    key: [u8; 48],
    h: HQuery,
    l: DevBuf,
    a: DevBuf,
    b_g1: DevBuf,
    /// The B query in G2, uploaded when B in G2 first runs here (`b_g2_on = gpu`).
    b_g2: Mutex<Option<Arc<DevBuf>>>,
}

/// The H query on the device: as uploaded, or its shifted copies (the bases among them) when
/// they fit beside a worker's buffers: H's MSM is the one with uniform scalars over all n.
enum HQuery {
    Plain(DevBuf),
    Shifted(DevBuf, msm::Shifted),
}

/// `PROVETOP_SHIFTED_BASES=0` keeps H's bases plain, to compare.
fn shifting_wanted() -> bool {
    std::env::var("PROVETOP_SHIFTED_BASES").map_or(true, |v| v != "0")
}

/// Scratch of H's MSM over `n` bases, plain or shifted.
fn h_scratch_bytes(n: usize) -> usize {
    let shifted = msm::shifted_scratch_bytes(n, msm::Shifted::for_points(n));
    msm::scratch_bytes(n, n).max(shifted)
}

/// The sizes of a worker's buffers (`Workspace`) for a domain of 2^log2, witness MSMs of up to
/// `msm_n` scalars and MSM scratch of `msm` bytes.
struct WorkspaceSizes {
    abc: usize,
    scalars: usize,
    idx: usize,
    msm: usize,
    sum: usize,
    results: usize,
    g2: usize,
}

impl WorkspaceSizes {
    fn new(log2: u32, msm_n: usize, msm: usize) -> WorkspaceSizes {
        WorkspaceSizes {
            abc: 4 * (1usize << log2) * FR,
            scalars: 3 * msm_n * FR,
            idx: 3 * msm_n * 4,
            msm,
            sum: msm::sum_scratch_bytes(msm_n),
            results: 8 * msm::JACOBIAN,
            g2: msm::G2_SUM_SCRATCH_MAX,
        }
    }

    /// Another worker's buffers at this size, for the room H's shifted bases must leave: its
    /// MSM scratch the most that H or an MSM of all `msm_n` scalars takes.
    fn of_another_worker(log2: u32, msm_n: usize) -> usize {
        let n = 1usize << log2;
        let msm = h_scratch_bytes(n - 1).max(msm::scratch_bytes(msm_n, msm_n));
        let w = WorkspaceSizes::new(log2, msm_n, msm);
        w.abc + w.scalars + w.idx + w.msm + w.sum + w.results + w.g2
    }
}

/// Identifies a parameter set: its delta is fresh randomness of its setup.
fn srs_key(p: &Parameters) -> [u8; 48] {
    p.vk.delta_g1.to_compressed()
}

/// Device buffers of one worker, kept between partitions of the same size.
struct Workspace {
    log2: u32,
    msm_n: usize,
    /// a, b, c, then NTT scratch: 4n Fr.
    abc: DevBuf,
    /// The L, A and B_G1 tail scalars (Montgomery) and one-indices, msm_n each.
    scalars: DevBuf,
    idx: DevBuf,
    msm: DevBuf,
    sum: DevBuf,
    /// B in G2's sums of scalar-one bases.
    g2: DevBuf,
    results: DevBuf,
}

struct StreamSet {
    compute: Arc<CudaStream>,
    copy: Arc<CudaStream>,
    staging: Staging,
    ws: Option<Workspace>,
}

pub struct CudaExecutor {
    name: String,
    gpu: Arc<Gpu>,
    tables: Mutex<HashMap<u32, Arc<ntt::Tables>>>,
    srs: Mutex<Option<Arc<Srs>>>,
    idle: Mutex<Vec<StreamSet>>,
    /// Regions running now, and a signal when one ends (memory may have been released).
    running: Mutex<usize>,
    released: Condvar,
    fallback: Mutex<Option<Arc<CpuExecutor>>>,
}

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

/// blst_p2 (Jacobian over Fp2) as the device writes it.
pub(super) fn g2_jacobian(bytes: &[u8]) -> G2Projective {
    assert_eq!(bytes.len(), msm::G2_JACOBIAN);
    // SAFETY: G2Projective is repr(transparent) over blst_p2, three Fp2 of 96 bytes.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const G2Projective) }
}

/// Σ bases[i]·scalars[i] over the scalars other than 0 and 1 (B's full-width tail), on the CPU.
fn g2_rest(bases: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    let (points, encoded): (Vec<G2Affine>, Vec<_>) = bases
        .par_iter()
        .zip(scalars)
        .filter(|(_, s)| !bool::from(s.is_zero()) && **s != Scalar::ONE)
        .map(|(p, s)| (*p, crate::curve::scalar_to_bytes(s)))
        .unzip();
    crate::curve::g2_pippenger(&points, &encoded)
}

/// The device layout of blst's projective point.
pub(super) fn jacobian(bytes: &[u8]) -> G1Projective {
    assert_eq!(bytes.len(), msm::JACOBIAN);
    // SAFETY: G1Projective is repr(transparent) over blst_p1, three Fp of 48 bytes (Jacobian).
    unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const G1Projective) }
}

impl CudaExecutor {
    pub fn new(ordinal: usize) -> Result<CudaExecutor> {
        let gpu = Gpu::open(ordinal)?;
        Ok(CudaExecutor {
            name: format!("gpu{ordinal}"),
            gpu,
            tables: Mutex::default(),
            srs: Mutex::default(),
            idle: Mutex::default(),
            running: Mutex::new(0),
            released: Condvar::new(),
            fallback: Mutex::default(),
        })
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Allocates under the VRAM budget; failing that, frees idle workspaces and retries.
    fn alloc(&self, bytes: usize, purpose: VramPurpose, budget: Budget) -> Result<DevBuf> {
        let over = |b: Budget| match b {
            Budget::Bytes(max) => self.gpu.counters.snapshot().vram_used() + bytes as u64 > max,
            Budget::Auto => false,
        };
        for attempt in 0..2 {
            if !over(budget) {
                match self.gpu.alloc(bytes, purpose) {
                    Ok(b) => return Ok(b),
                    Err(e) if e.downcast_ref::<OutOfMemory>().is_none() => return Err(e),
                    Err(_) => {}
                }
            }
            if attempt == 0 {
                for set in self.idle.lock().iter_mut() {
                    set.ws = None;
                }
            }
        }
        Err(OutOfMemory { bytes }.into())
    }

    fn tables(&self, s: &CudaStream, log2: u32) -> Result<Arc<ntt::Tables>> {
        let mut t = self.tables.lock();
        if let Some(x) = t.get(&log2) {
            return Ok(x.clone());
        }
        let x = Arc::new(ntt::Tables::build(&self.gpu, s, log2)?);
        t.insert(log2, x.clone());
        Ok(x)
    }

    /// The parameter set's queries on the device, uploaded once while residency allows.
    fn srs(
        &self,
        staging: &mut Staging,
        s: &CudaStream,
        p: &Parameters,
        o: &RegionOptions,
        steps: &mut Steps,
    ) -> Result<Arc<Srs>> {
        let (residency, budget) = (o.srs_residency, o.vram_budget);
        let key = srs_key(p);
        let mut slot = self.srs.lock();
        if let Some(srs) = slot.as_ref().filter(|srs| srs.key == key) {
            return Ok(srs.clone());
        }
        // A new parameter set replaces the old one.
        *slot = None;
        let start = Instant::now();
        let mut up = |points: &[G1Affine]| -> Result<DevBuf> {
            let buf = self.alloc(points.len().max(1) * G1, VramPurpose::Srs, budget)?;
            staging.upload(&self.gpu, s, buf.ptr, points)?;
            Ok(buf)
        };
        let h = up(&p.h)?;
        let mut srs = Srs {
            key,
            h: HQuery::Plain(h),
            l: up(&p.l)?,
            a: up(&p.a)?,
            b_g1: up(&p.b_g1)?,
            b_g2: Mutex::default(),
        };
        self.gpu.sync(s)?;
        let bytes = (p.h.len() + p.l.len() + p.a.len() + p.b_g1.len()) * G1;
        steps.push(Stage::H2d, Engine::H2d, start, bytes as u64);
        if residency != Residency::Host && shifting_wanted() {
            srs.h = self.shift_h(srs.h, p, s, (budget, o.workers_per_device))?;
        }
        let srs = Arc::new(srs);
        if residency != Residency::Host {
            *slot = Some(srs.clone());
        }
        Ok(srs)
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

    /// H's shifted copies in place of its bases, when they fit with room left for the device's
    /// other workers' buffers (this worker's are allocated); else H as it is.
    fn shift_h(
        &self,
        h: HQuery,
        p: &Parameters,
        s: &CudaStream,
        (budget, workers): (Budget, usize),
    ) -> Result<HQuery> {
        let HQuery::Plain(bases) = h else {
            return Ok(h);
        };
        let n = p.h.len();
        let sh = msm::Shifted::for_points(n);
        let (q_bytes, tmp_bytes) = (sh.bytes(n), msm::shift_scratch_bytes(n, sh));
        let (free, _) = self.gpu.mem_info()?;
        let room = (free as usize).saturating_sub(q_bytes + tmp_bytes);
        let log2 = (n + 1).trailing_zeros();
        let spare =
            WorkspaceSizes::of_another_worker(log2, n + 1) * workers.saturating_sub(1) + (4 << 30);
        let over_budget = match budget {
            Budget::Bytes(max) => {
                self.gpu.counters.snapshot().vram_used() + (q_bytes + tmp_bytes + spare) as u64
                    > max
            }
            Budget::Auto => false,
        };
        if room < spare || over_budget {
            tracing::info!(
                "{}: H's shifted bases ({:.1} GB) do not fit; its MSM runs over the bases",
                self.name,
                q_bytes as f64 / 1e9
            );
            return Ok(HQuery::Plain(bases));
        }
        let start = Instant::now();
        // Another worker may have taken the room since: then H stays as it is.
        let bufs = self.gpu.alloc(q_bytes, VramPurpose::Srs).and_then(|q| {
            let tmp = self.gpu.alloc(tmp_bytes, VramPurpose::Scratch)?;
            Ok((q, tmp))
        });
        let (q, tmp) = match bufs {
            Ok(b) => b,
            Err(e) if e.downcast_ref::<OutOfMemory>().is_some() => {
                tracing::info!(
                    "{}: H's shifted bases: {e:#}; its MSM runs over the bases",
                    self.name
                );
                return Ok(HQuery::Plain(bases));
            }
            Err(e) => return Err(e),
        };
        msm::shift_enqueue(&self.gpu, s, (bases.ptr, n), sh, q.ptr, tmp.ptr)?;
        self.gpu.sync(s)?;
        tracing::info!(
            "{}: H's shifted bases (c = {}, {} windows, {:.1} GB) built in {:.2} s",
            self.name,
            sh.c,
            sh.windows,
            q_bytes as f64 / 1e9,
            start.elapsed().as_secs_f64()
        );
        Ok(HQuery::Shifted(q, sh))
    }

    /// The B query in G2 on the device, uploaded on first use.
    fn b_g2_bases(
        &self,
        srs: &Srs,
        staging: &mut Staging,
        s: &CudaStream,
        p: &Parameters,
        budget: Budget,
    ) -> Result<Arc<DevBuf>> {
        let mut slot = srs.b_g2.lock();
        if let Some(b) = slot.as_ref() {
            return Ok(b.clone());
        }
        let buf = self.alloc(p.b_g2.len().max(1) * G2, VramPurpose::Srs, budget)?;
        staging.upload(&self.gpu, s, buf.ptr, &p.b_g2)?;
        self.gpu.sync(s)?;
        let buf = Arc::new(buf);
        *slot = Some(buf.clone());
        Ok(buf)
    }

    /// The worker's buffers for a domain of 2^log2 and MSMs of up to `msm_n` points whose
    /// scratch takes `msm_bytes`; kept while they fit.
    fn workspace(
        &self,
        set: &mut StreamSet,
        log2: u32,
        (msm_n, msm_bytes): (usize, usize),
        budget: Budget,
    ) -> Result<()> {
        if set
            .ws
            .as_ref()
            .is_some_and(|w| w.log2 == log2 && w.msm_n >= msm_n && w.msm.bytes >= msm_bytes)
        {
            return Ok(());
        }
        set.ws = None;
        let a = |bytes, purpose| self.alloc(bytes, purpose, budget);
        let z = WorkspaceSizes::new(log2, msm_n, msm_bytes);
        set.ws = Some(Workspace {
            log2,
            msm_n,
            abc: a(z.abc, VramPurpose::Abc)?,
            scalars: a(z.scalars, VramPurpose::Scratch)?,
            idx: a(z.idx, VramPurpose::Scratch)?,
            msm: a(z.msm, VramPurpose::Buckets)?,
            sum: a(z.sum, VramPurpose::Buckets)?,
            results: a(z.results, VramPurpose::Scratch)?,
            // Kept, not allocated per partition: freeing device memory waits for the whole
            // device, the other worker's kernels included.
            g2: a(z.g2, VramPurpose::Buckets)?,
        });
        Ok(())
    }

    fn take_set(&self) -> Result<StreamSet> {
        if let Some(s) = self.idle.lock().pop() {
            return Ok(s);
        }
        Ok(StreamSet {
            compute: self.gpu.stream()?,
            copy: self.gpu.stream()?,
            staging: Staging::new(&self.gpu)?,
            ws: None,
        })
    }

    fn cpu(&self) -> Result<Arc<CpuExecutor>> {
        let mut f = self.fallback.lock();
        if f.is_none() {
            *f = Some(Arc::new(CpuExecutor::new(0, crate::config::cores())?));
        }
        Ok(f.clone().expect("set above"))
    }

    /// Runs the region, waiting for memory while other regions hold it.
    fn run(
        &self,
        input: &RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        self.gpu.bind()?;
        let mut set = self.take_set()?;
        let result = self.region(&mut set, input, gate, steps);
        self.idle.lock().push(set);
        result
    }

    fn region(
        &self,
        set: &mut StreamSet,
        input: &RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        let p = input.params;
        let o = input.opts;
        let log2 = input.log2_domain;
        let n = 1usize << log2;
        let (compute, copy) = (set.compute.clone(), set.copy.clone());

        // The witness MSMs' 0/1 split: done after synthesis when prestaged, else here; and per
        // witness MSM (L, A, B) its scalars and how many of them are ones.
        let staged = input
            .prestaged
            .and_then(|p| p.data.as_any().downcast_ref::<prestage::Witness>());
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
                steps.push(Stage::Prep, Engine::Compute, start, 0);
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
        // run (B in G1's scalars are all bits: no tail), each sized by its terms.
        let msm_bytes = counts
            .iter()
            .filter(|c| c.terms > 0)
            .map(|c| msm::scratch_bytes(c.len, c.terms))
            .fold(h_scratch_bytes(n - 1), usize::max);

        let mut tl = Timeline::start(&compute)?;
        let stage_in =
            |set: &mut StreamSet, gate: &mut dyn Gate, steps: &mut Steps| -> Result<()> {
                let start = Instant::now();
                gate.memory(steps);
                self.workspace(set, log2, (msm_n, msm_bytes), o.vram_budget)?;
                steps.push(Stage::Alloc, Engine::Compute, start, 0);
                Ok(())
            };
        // With prestage the upload happens before the lock; without, under it.
        if !o.prestage {
            stage_in(set, gate, steps)?;
        } else {
            self.workspace(set, log2, (msm_n, msm_bytes), o.vram_budget)?;
        }
        let srs = self.srs(&mut set.staging, &copy, p, &o, steps)?;
        let g2_bases = match input.b_g2 {
            true => Some(self.b_g2_bases(&srs, &mut set.staging, &copy, p, o.vram_budget)?),
            false => None,
        };
        let tables = self.tables(&copy, log2)?;
        let ws = set.ws.as_ref().expect("workspace allocated");
        let (pa, pb, pc, scratch) = (
            ws.abc.at(0),
            ws.abc.at(n * FR),
            ws.abc.at(2 * n * FR),
            ws.abc.at(3 * n * FR),
        );
        // Everything the region reads goes up on the copy stream: a, b and c first (each
        // zero-padded to the domain, then marked, so the H pipeline starts on each as it
        // arrives), then the witness MSMs' scalars while the NTTs and H's MSM run.
        let up0 = tl.mark(&copy)?;
        let mut up_bytes = 0u64;
        let abc_dst = [pa, pb, pc];
        let abc_len = |i: usize| staged.map_or(input.abc[i].len(), |w| w.layout.abc[i].len);
        let mut abc_up = [0; 3];
        // Where witness MSM i's scalars and scalar-one positions go.
        let tail_dst =
            |ws: &Workspace, i: usize| (ws.scalars.at(i * msm_n * FR), ws.idx.at(i * msm_n * 4));
        if let Some(w) = staged {
            // Straight from the page-locked block: the copy engine's work alone.
            let mut pieces = vec![];
            for (i, dst) in abc_dst.into_iter().enumerate() {
                pieces.push((dst, w.layout.abc[i], FR));
            }
            for i in 0..3 {
                let (scalars, idx) = tail_dst(ws, i);
                pieces.push((scalars, w.layout.tails[i], FR));
                pieces.push((idx, w.layout.ones[i], 4));
            }
            for (p, (dst, sec, elem)) in pieces.into_iter().enumerate() {
                let bytes = sec.bytes(elem);
                let m0 = tl.mark(&copy)?;
                self.gpu
                    .h2d_pinned(&copy, dst, w.block.ptr(sec.at), bytes)?;
                let m1 = tl.mark(&copy)?;
                tl.pieces.push((m0, m1, bytes as u64));
                up_bytes += bytes as u64;
                if p < 3 {
                    abc_up[p] = self.pad_abc(&mut tl, &copy, dst, abc_len(p), n)?;
                }
            }
        } else {
            for (i, (dst, v)) in abc_dst.into_iter().zip(&input.abc).enumerate() {
                set.staging
                    .upload_timed(&self.gpu, &copy, dst, v, &copy_bytes, &mut tl)?;
                up_bytes += (v.len() * FR) as u64;
                abc_up[i] = self.pad_abc(&mut tl, &copy, dst, abc_len(i), n)?;
            }
            for (i, sp) in splits.iter().flatten().enumerate() {
                let (scalars, idx) = tail_dst(ws, i);
                if !sp.tail.is_empty() {
                    set.staging.upload_timed(
                        &self.gpu,
                        &copy,
                        scalars,
                        sp.tail,
                        &prestage::zero_ones,
                        &mut tl,
                    )?;
                }
                if !sp.ones.is_empty() {
                    set.staging.upload_timed(
                        &self.gpu,
                        &copy,
                        idx,
                        &sp.ones,
                        &copy_bytes,
                        &mut tl,
                    )?;
                }
                up_bytes += (sp.tail.len() * FR + sp.ones.len() * 4) as u64;
            }
        }
        let up1 = tl.mark(&copy)?;
        if o.prestage {
            stage_in(set, gate, steps)?;
        }
        let ws = set.ws.as_ref().expect("workspace allocated");
        gate.compute(steps);

        let g = &self.gpu;
        let res = |i: usize| ws.results.at(i * msm::JACOBIAN);
        let mut marks = vec![];
        let mut timed =
            |stage: Stage, tl: &mut Timeline, f: &mut dyn FnMut() -> Result<u64>| -> Result<()> {
                let m0 = tl.mark(&compute)?;
                let bytes = f()?;
                let m1 = tl.mark(&compute)?;
                marks.push((stage, m0, m1, bytes));
                if !o.msm_double_buffer
                    && matches!(
                        stage,
                        Stage::MsmH | Stage::MsmL | Stage::MsmA | Stage::MsmBG1
                    )
                {
                    // A hard synchronisation between MSMs, for comparison with none.
                    g.sync(&compute)?;
                }
                Ok(())
            };
        // The NTTs of each input wait for its upload only (b's and c's arrive while a's and
        // b's transforms run, so the span holds kernels), the witness MSMs for the rest.
        let abc_up = abc_up.map(|m| tl.event(m));
        abc_up[0].wait(&compute)?;
        timed(Stage::NttH, &mut tl, &mut || {
            let mut ready = |i: usize| {
                if i > 0 {
                    abc_up[i].wait(&compute)
                } else {
                    Ok(())
                }
            };
            ntt::h_pipeline(g, &compute, &tables, [pa, pb, pc], scratch, &mut ready).map(|_| 0)
        })?;
        timed(Stage::MsmH, &mut tl, &mut || {
            match &srs.h {
                HQuery::Plain(h) => {
                    let nh = (n - 1, n - 1);
                    msm::enqueue(g, &compute, h.ptr, pc, nh, ws.msm.ptr, res(0))
                }
                HQuery::Shifted(q, sh) => {
                    let q = (q.ptr, *sh);
                    msm::enqueue_shifted(g, &compute, q, pc, n - 1, ws.msm.ptr, res(0))
                }
            }
            .map(|_| 0)
        })?;
        tl.wait(&compute, up1)?;
        // Each witness MSM: the tail MSM, then the batch sum of its scalar-one bases.
        let mut witness = |stage: Stage, tl: &mut Timeline, bases: u64, i: usize| -> Result<()> {
            let ((scalars, idx), r) = (tail_dst(ws, i), 1 + 2 * i);
            let Counts { len, ones, terms } = counts[i];
            timed(stage, tl, &mut || {
                if terms == 0 {
                    return g.zero_bytes(&compute, res(r), msm::JACOBIAN).map(|_| 0);
                }
                let sized = (len, terms);
                msm::enqueue(g, &compute, bases, scalars, sized, ws.msm.ptr, res(r)).map(|_| 0)
            })?;
            timed(Stage::BatchAdd, tl, &mut || {
                if ones == 0 {
                    return g.zero_bytes(&compute, res(r + 1), msm::JACOBIAN).map(|_| 0);
                }
                msm::sum_enqueue(g, &compute, bases, idx, ones, ws.sum.ptr, res(r + 1)).map(|_| 0)
            })
        };
        witness(Stage::MsmL, &mut tl, srs.l.ptr, 0)?;
        witness(Stage::MsmA, &mut tl, srs.a.ptr, 1)?;
        witness(Stage::MsmBG1, &mut tl, srs.b_g1.ptr, 2)?;
        // B in G2: the scalar-one bases summed here in parts the host adds; the few other
        // non-zero scalars go to the CPU below.
        let mut g2 = match &g2_bases {
            Some(bases) if counts[2].ones > 0 => {
                let count = counts[2].ones;
                let mut parts = 0;
                timed(Stage::MsmBG2, &mut tl, &mut || {
                    let idx = ws.idx.at(2 * msm_n * 4);
                    parts = msm::g2_sum_enqueue(g, &compute, bases.ptr, idx, count, ws.g2.ptr)?;
                    Ok(0)
                })?;
                Some((
                    parts,
                    vec![0u8; msm::g2_sum_parts(count) * msm::G2_JACOBIAN],
                ))
            }
            _ => None,
        };
        let mut out = vec![0u8; 7 * msm::JACOBIAN];
        let down0 = tl.mark(&compute)?;
        self.gpu.d2h(&compute, &mut out, ws.results.ptr)?;
        if let Some((at, parts)) = g2.as_mut() {
            self.gpu.d2h(&compute, parts, *at)?;
        }
        let down1 = tl.mark(&compute)?;
        self.gpu.sync(&compute)?;

        steps.0.push(crate::backend::Step {
            stage: Stage::H2d,
            engine: Engine::H2d,
            start: tl.at(up0)?,
            end: tl.at(up1)?,
            bytes: up_bytes,
        });
        for &(m0, m1, bytes) in &tl.pieces {
            steps.0.push(crate::backend::Step {
                stage: Stage::Dma,
                engine: Engine::H2d,
                start: tl.at(m0)?,
                end: tl.at(m1)?,
                bytes,
            });
        }
        for (stage, m0, m1, bytes) in marks {
            let engine = if stage == Stage::H2d {
                Engine::H2d
            } else {
                Engine::Compute
            };
            steps.0.push(crate::backend::Step {
                stage,
                engine,
                start: tl.at(m0)?,
                end: tl.at(m1)?,
                bytes,
            });
        }
        steps.0.push(crate::backend::Step {
            stage: Stage::D2h,
            engine: Engine::D2h,
            start: tl.at(down0)?,
            end: tl.at(down1)?,
            bytes: (out.len() + g2.as_ref().map_or(0, |g| g.1.len())) as u64,
        });
        let pt = |i: usize| jacobian(&out[i * msm::JACOBIAN..(i + 1) * msm::JACOBIAN]);
        let sum = |i: usize| {
            let (t, o) = (pt(i), pt(i + 1));
            // An all-zero buffer is blst's point at infinity (Z = 0) either way.
            t + o
        };
        let b_g2 = g2_bases.is_some().then(|| {
            let ones = g2.as_ref().map_or(G2Projective::identity(), |(_, parts)| {
                parts
                    .par_chunks_exact(msm::G2_JACOBIAN)
                    .map(g2_jacobian)
                    .reduce(G2Projective::identity, |a, b| a + b)
            });
            ones + g2_rest(&p.b_g2, &input.msms.b)
        });
        Ok(RegionResult {
            h: pt(0),
            l: sum(1),
            a: sum(3),
            b_g1: sum(5),
            b_g2,
        })
    }
}

impl Executor for CudaExecutor {
    fn device(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            id: self.name.clone(),
            name: self.gpu.name.clone(),
            kind: "gpu".into(),
            memory_bytes: self.gpu.total_memory,
            pcie: None,
        }
    }

    fn stage_target(&self, rows: usize, tails: [usize; 3]) -> Option<Box<dyn Target>> {
        let layout = prestage::Layout::plan([rows; 3], tails);
        let block = match prestage::pool(&self.gpu).take(layout.bytes) {
            Ok(Some(b)) => b,
            // Page-locked memory is at its cap: this partition stages as its region goes.
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!("{}: no page-locked memory for prestaging: {e:#}", self.name);
                return None;
            }
        };
        Some(Box::new(prestage::Filling {
            block,
            layout,
            counters: self.gpu.counters.clone(),
        }))
    }

    fn setup_products(&self) -> Option<Arc<dyn crate::params::setup::Products>> {
        Some(Arc::new(super::products::GpuProducts {
            gpu: self.gpu.clone(),
        }))
    }

    fn reserve_prestage(&self, rows: usize, tails: [usize; 3], count: usize) -> Result<u64> {
        let bytes = prestage::Layout::plan([rows; 3], tails).bytes;
        let free = prestage::pool(&self.gpu).reserve(bytes, count)?;
        Ok((free * bytes) as u64)
    }

    fn prove_region(
        &self,
        input: RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        let mut input = input;
        let ours = |p: &Prestaged| p.data.as_any().is::<prestage::Witness>();
        if !input.prestaged.is_some_and(ours) {
            input.restore_abc();
        }
        *self.running.lock() += 1;
        let mut result = self.run(&input, gate, steps);
        {
            let mut running = self.running.lock();
            *running -= 1;
            self.released.notify_all();
        }
        // Out of memory: wait while other regions may release some, then prove on the CPU.
        let mut waited = false;
        while let Err(e) = &result {
            if e.downcast_ref::<OutOfMemory>().is_none() {
                break;
            }
            let mut running = self.running.lock();
            if *running > 0 {
                if !waited {
                    tracing::warn!(
                        "{}: {e}; waiting for another worker to release device memory",
                        self.name
                    );
                    waited = true;
                }
                self.released.wait(&mut running);
                drop(running);
                *self.running.lock() += 1;
                result = self.run(&input, gate, steps);
                let mut running = self.running.lock();
                *running -= 1;
                self.released.notify_all();
            } else {
                drop(running);
                tracing::warn!(
                    "{}: {e}; this partition proves on the CPU instead",
                    self.name
                );
                return self.cpu()?.prove_region(input, gate, steps);
            }
        }
        result
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
