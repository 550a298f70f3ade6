//! The batch-affine accumulation (cuda/msm/batch_affine.cuh): each bucket's points added
//! pairwise in affine levels (one inversion per 1024 additions), then the XYZZ pass over what
//! is left. Off unless `msm_accumulation = "batch-affine"` (`select`, `enabled`).

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use cudarc::driver::CudaStream;

use crate::config::Accumulation;

use super::super::consts::{
    PT_MSM_ACC_THREADS, PT_MSM_AFF_K, PT_MSM_AFF_THREADS, PT_MSM_PLAN_THREADS,
};
use super::super::gpu::{Arg, Gpu};
use super::curve::G1;
use super::pippenger::fixup;
use super::{aff_omax, Config, Layout, XYZZ};

/// The process's accumulation: a startup key, since workspaces are sized for it and every
/// executor shares the kernels.
static BATCH_AFFINE: AtomicBool = AtomicBool::new(false);

/// Sets how MSMs accumulate buckets, before the first region. Batch-affine is correct on the
/// H200 but 4.4x slower than XYZZ at 2^24 there (bench/results/h200-2026-11-30d,
/// docs/notes.md), so XYZZ is the default.
pub fn select(a: Accumulation) {
    BATCH_AFFINE.store(a == Accumulation::BatchAffine, Ordering::Relaxed);
}

/// Whether MSMs accumulate buckets with batch-affine additions.
pub(super) fn enabled() -> bool {
    BATCH_AFFINE.load(Ordering::Relaxed)
}

/// The batch-affine accumulation (cuda/README.md): per group of `agw` windows, the level
/// plan, `alv` levels of (fwd, inv, bwd), then the XYZZ chunks/fixup over the last level, which
/// leave bsum exactly as the XYZZ path does.
pub(super) fn accumulate(
    gpu: &Gpu,
    s: &CudaStream,
    points: u64,
    n32: u32,
    k: &Config,
    l: &Layout,
    scratch: u64,
) -> Result<()> {
    use Arg::{Ptr, U32};
    let f = &gpu.f;
    let at = |o: usize| scratch + o as u64;
    let nb = k.nb;
    let u32s = |w: u32| (w as u64) * nb as u64 * 4;
    let bufs = [at(l.abuf), at(l.bbuf)];
    let strs = [k.astr_a, k.astr_b];
    let per_blk = PT_MSM_AFF_K * PT_MSM_AFF_THREADS;
    let mut w0 = 0;
    while w0 < k.nwin {
        let gw = k.agw.min(k.nwin - w0);
        let (counts, cursor) = (at(l.counts) + u32s(w0), at(l.cursor) + u32s(w0));
        let sorted = at(l.sorted) + w0 as u64 * n32 as u64 * 4;
        gpu.launch(
            s,
            &f.msm_aff_plan,
            (gw, 1),
            PT_MSM_PLAN_THREADS,
            0,
            &[Ptr(counts), U32(nb), U32(gw), U32(k.alv), Ptr(at(l.aend))],
        )?;
        for lv in 0..k.alv {
            let blocks = aff_omax(n32, nb, lv).div_ceil(per_blk);
            let (input, istr) = if lv > 0 {
                let i = ((lv - 1) & 1) as usize;
                (bufs[i], strs[i])
            } else {
                (0, 0)
            };
            let o = (lv & 1) as usize;
            let common = [
                Ptr(points),
                Ptr(sorted),
                Ptr(counts),
                Ptr(cursor),
                Ptr(at(l.aend)),
                Ptr(input),
                U32(istr),
                U32(n32),
                U32(nb),
                U32(gw),
                U32(lv),
                Ptr(at(l.pre)),
                U32(k.astr_a),
                Ptr(at(l.tp)),
                U32(blocks * PT_MSM_AFF_THREADS),
                Ptr(at(l.bp)),
                U32(blocks),
            ];
            gpu.launch(
                s,
                &f.msm_aff_fwd,
                (blocks, gw),
                PT_MSM_AFF_THREADS,
                0,
                &common,
            )?;
            gpu.launch(
                s,
                &f.msm_aff_inv,
                ((blocks * gw).div_ceil(128), 1),
                128,
                0,
                &[Ptr(at(l.bp)), U32(blocks * gw)],
            )?;
            let mut args = common.to_vec();
            args.extend([Ptr(bufs[o]), U32(strs[o])]);
            gpu.launch(
                s,
                &f.msm_aff_bwd,
                (blocks, gw),
                PT_MSM_AFF_THREADS,
                0,
                &args,
            )?;
        }
        let last = ((k.alv - 1) & 1) as usize;
        let fend = at(l.aend) + (k.alv - 1) as u64 * u32s(gw);
        let bsum = at(l.bsum) + w0 as u64 * nb as u64 * XYZZ as u64;
        gpu.launch(
            s,
            &f.msm_chunks_direct,
            ((gw * k.anchunk).div_ceil(PT_MSM_ACC_THREADS), 1),
            PT_MSM_ACC_THREADS,
            0,
            &[
                Ptr(bufs[last]),
                Ptr(counts),
                Ptr(fend),
                U32(strs[last]),
                U32(nb),
                U32(gw),
                U32(k.achunk),
                U32(k.anchunk),
                Ptr(bsum),
                Ptr(at(l.ahead)),
                Ptr(at(l.atail)),
                Ptr(at(l.aedge)),
                U32(k.alv),
            ],
        )?;
        let chunks = (gw, k.achunk, k.anchunk);
        let parts = (at(l.ahead), at(l.atail), at(l.aedge));
        fixup(gpu, s, &G1, (fend, nb), chunks, parts, bsum)?;
        w0 += gw;
    }
    Ok(())
}
