//! The Pippenger launch sequence of cuda/README.md, in G1 and G2 alike up to the window sums:
//! digits, histogram, plan, scatter (binned for shifted bases), bucket accumulation (XYZZ, or
//! in G1 batch-affine levels), bucket reduction, the windows' sums. G1 then combines them on
//! the device (`enqueue`); G2 hands them to the host (msm/g2.rs).

use anyhow::Result;
use cudarc::driver::CudaStream;

use super::super::consts::{
    PT_MSM_ACC_THREADS, PT_MSM_BIN_THREADS, PT_MSM_DIGIT_THREADS, PT_MSM_FIX_THREADS,
    PT_MSM_PLAN_THREADS, PT_MSM_RED_THREADS,
};
use super::super::gpu::{Arg, Gpu};
use super::curve::{Curve, G1};
use super::{batch_affine, bin_count, plan_parts, Config, Layout, Shifted, BIN_SORT_SMEM, XYZZ};

/// Enqueues Σ points[i]·scalars[i] over `n` device-resident points and Montgomery scalars,
/// about `terms` of them neither 0 nor 1 (`n` for uniform scalars; any count is correct, it
/// only sizes the windows); the Jacobian result lands at `result` (144 bytes of device memory).
pub fn enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    points: u64,
    scalars: u64,
    (n, terms): (usize, usize),
    scratch: u64,
    result: u64,
) -> Result<()> {
    let k = Config::sized(n, terms);
    let wins = windows(gpu, s, &G1, (points, None), (scalars, n), &k, scratch)?;
    combine(gpu, s, wins, &k, result)
}

/// `enqueue` over the shifted copies `q` of `n` bases (`shift_enqueue`).
pub fn enqueue_shifted(
    gpu: &Gpu,
    s: &CudaStream,
    (q, sh): (u64, Shifted),
    scalars: u64,
    n: usize,
    scratch: u64,
    result: u64,
) -> Result<()> {
    let k = Config::shifted(n, sh);
    let wins = windows(gpu, s, &G1, (q, Some(sh)), (scalars, n), &k, scratch)?;
    combine(gpu, s, wins, &k, result)
}

/// `pt_msm_final`: Σ 2^(c·w)·wins[w] (Horner) into the Jacobian `result`.
fn combine(gpu: &Gpu, s: &CudaStream, wins: u64, k: &Config, result: u64) -> Result<()> {
    use Arg::{Ptr, U32};
    let args = [Ptr(wins), U32(k.nwin), U32(k.c), Ptr(result)];
    gpu.launch(s, &gpu.f.msm_final, (1, 1), 1, 0, &args)
}

/// The launch sequence of cuda/README.md for `n` scalars of `curve` up to the window sums,
/// whose XYZZ points (`k.nwin` of them) it returns the address of: over the bases, or with
/// `shifted` (G1) over their shifted copies with every window in one set of buckets.
pub(super) fn windows(
    gpu: &Gpu,
    s: &CudaStream,
    curve: &Curve,
    (points, shifted): (u64, Option<Shifted>),
    (scalars, n): (u64, usize),
    k: &Config,
    scratch: u64,
) -> Result<u64> {
    // Digit windows, and the entries of the bucket phase (every window's, when shifted).
    let (windows, entries) = match shifted {
        Some(sh) => (sh.windows, n * sh.windows as usize),
        None => (k.nwin, n),
    };
    let hist = match shifted {
        Some(_) => &gpu.f.msm_hist_shared,
        None => &gpu.f.msm_hist,
    };
    let l = Layout::new(entries, k, curve.xyzz);
    let at = |o: usize| scratch + o as u64;
    let n32 = n as u32;
    let f = &gpu.f;
    let blocks = n32.div_ceil(PT_MSM_DIGIT_THREADS);
    gpu.zero_u32(s, at(l.counts), (k.nwin * k.nb) as usize)?;
    use Arg::{Ptr, U32};
    gpu.launch(
        s,
        &f.msm_digits,
        (blocks, 1),
        PT_MSM_DIGIT_THREADS,
        0,
        &[
            Ptr(scalars),
            U32(n32),
            U32(k.c),
            U32(windows),
            Ptr(at(l.keys)),
        ],
    )?;
    gpu.launch(
        s,
        hist,
        (blocks, windows),
        256,
        0,
        &[Ptr(at(l.keys)), U32(n32), U32(k.nb), Ptr(at(l.counts))],
    )?;
    let plan_grid = (plan_parts(k.nb), k.nwin);
    let (counts, parts) = (Ptr(at(l.counts)), Ptr(at(l.parts)));
    gpu.launch(
        s,
        &f.msm_plan_sums,
        plan_grid,
        PT_MSM_PLAN_THREADS,
        0,
        &[counts, U32(k.nb), parts],
    )?;
    let args = [counts, U32(k.nb), parts, Ptr(at(l.cursor))];
    gpu.launch(s, &f.msm_plan, plan_grid, PT_MSM_PLAN_THREADS, 0, &args)?;
    let (keys, cursor, sorted) = (Ptr(at(l.keys)), Ptr(at(l.cursor)), Ptr(at(l.sorted)));
    if shifted.is_some() {
        // one set of buckets for every window: binned (cuda/msm/pippenger.cuh)
        let (nbins, bins) = (bin_count(k.nb), Ptr(at(l.bins)));
        let args = [counts, cursor, U32(k.nb), bins];
        gpu.launch(s, &f.msm_bins, (nbins.div_ceil(256), 1), 256, 0, &args)?;
        // each entry's bucket inside its bin, a byte, in bsum (written only later, by the
        // accumulation) when it holds them (`pt_msm_bin_fine_fits`); else read back from keys
        let fine = if k.nb as usize * XYZZ >= entries {
            Ptr(at(l.bsum))
        } else {
            Ptr(0)
        };
        let args = [keys, U32(n32), U32(k.nb), bins, cursor, sorted, fine];
        gpu.launch(s, &f.msm_scatter_bins, (blocks, windows), 256, 0, &args)?;
        let args = [keys, fine, counts, U32(k.nb), bins, cursor, sorted];
        gpu.launch(
            s,
            &f.msm_bin_sort,
            (nbins, 1),
            PT_MSM_BIN_THREADS,
            BIN_SORT_SMEM,
            &args,
        )?;
    } else {
        let args = [keys, U32(n32), U32(k.nb), cursor, sorted];
        gpu.launch(s, &f.msm_scatter, (blocks, windows), 256, 0, &args)?;
    }
    if k.alv > 0 {
        // G1's alone: Config::g2 has no affine levels
        debug_assert_eq!(curve.xyzz, XYZZ);
        batch_affine::accumulate(gpu, s, points, n32, k, &l, scratch)?;
    } else {
        gpu.launch(
            s,
            (curve.chunks)(f),
            ((k.nwin * k.nchunk).div_ceil(PT_MSM_ACC_THREADS), 1),
            PT_MSM_ACC_THREADS,
            0,
            &[
                Ptr(points),
                Ptr(at(l.sorted)),
                Ptr(at(l.counts)),
                Ptr(at(l.cursor)),
                U32(entries as u32),
                U32(k.nb),
                U32(k.nwin),
                U32(k.chunk),
                U32(k.nchunk),
                Ptr(at(l.bsum)),
                Ptr(at(l.head)),
                Ptr(at(l.tail)),
                Ptr(at(l.edge)),
            ],
        )?;
        let chunks = (k.nwin, k.chunk, k.nchunk);
        let parts = (at(l.head), at(l.tail), at(l.edge));
        fixup(
            gpu,
            s,
            curve,
            (at(l.cursor), k.nb),
            chunks,
            parts,
            at(l.bsum),
        )?;
    }
    gpu.launch(
        s,
        (curve.bucket_reduce)(f),
        ((k.nwin * k.nbseg).div_ceil(PT_MSM_RED_THREADS), 1),
        PT_MSM_RED_THREADS,
        0,
        &[
            Ptr(at(l.bsum)),
            Ptr(at(l.counts)),
            U32(k.nb),
            U32(k.nwin),
            U32(k.bseg),
            Ptr(at(l.segs)),
        ],
    )?;
    let reduce = |groups: u32, args: &[Arg]| {
        let threads = curve.reduce_threads;
        gpu.launch(s, (curve.reduce)(f), (groups, 1), threads, 0, args)
    };
    reduce(
        k.nwin * k.nred,
        &[Ptr(at(l.segs)), U32(k.rgrp), Ptr(at(l.red))],
    )?;
    reduce(k.nwin, &[Ptr(at(l.red)), U32(k.nred), Ptr(at(l.wins))])?;
    Ok(at(l.wins))
}

/// `pt_msm_fixup` (`pt_g2_msm_fixup`): the sums of buckets cut by chunk edges, from each
/// chunk's head and tail partial sums, for `nwin` windows of `nchunk` chunks of `chunk`
/// entries; `ends` are the `nb` buckets' ends in each window.
pub(super) fn fixup(
    gpu: &Gpu,
    s: &CudaStream,
    curve: &Curve,
    (ends, nb): (u64, u32),
    (nwin, chunk, nchunk): (u32, u32, u32),
    (head, tail, edge): (u64, u64, u64),
    bsum: u64,
) -> Result<()> {
    use Arg::{Ptr, U32};
    let args = [
        Ptr(ends),
        Ptr(edge),
        U32(nb),
        U32(nwin),
        U32(chunk),
        U32(nchunk),
        Ptr(head),
        Ptr(tail),
        Ptr(bsum),
    ];
    let blocks = ((nwin * nchunk).div_ceil(PT_MSM_FIX_THREADS), 1);
    gpu.launch(
        s,
        (curve.fixup)(&gpu.f),
        blocks,
        PT_MSM_FIX_THREADS,
        0,
        &args,
    )
}
