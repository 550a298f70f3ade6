//! The host side of our Pippenger MSM (cuda/msm): the configuration and scratch layout the
//! kernels expect, mirrored from cuda/msm/config.cuh, and the launch sequence of
//! cuda/README.md. Everything runs on one stream with no host synchronisation.

use anyhow::Result;
use cudarc::driver::CudaStream;

use super::gpu::{Arg, Gpu};

const DIGIT_THREADS: u32 = 256;
const PLAN_THREADS: u32 = 1024;
const ACC_THREADS: u32 = 128;
const RED_THREADS: u32 = 128;
const FIX_THREADS: u32 = 32;
/// Batch-affine accumulation (cuda/msm/config.cuh, `PT_MSM_AFF_*`).
const AFF_THREADS: u32 = 128;
const AFF_K: u32 = 8;
const AFF_MAXLV: u32 = 8;
const AFF_GROUP: u32 = 1 << 21;
const AFF_FINAL: u32 = 1 << 17;
/// One affine G1 point and one Fp element.
const AFFINE: usize = 96;
const FP: usize = 48;
/// One XYZZ point.
const XYZZ: usize = 192;
/// One Jacobian point (blst_p1).
pub const JACOBIAN: usize = 144;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub c: u32,
    pub nwin: u32,
    pub nb: u32,
    pub chunk: u32,
    pub nchunk: u32,
    pub bseg: u32,
    pub nbseg: u32,
    pub rgrp: u32,
    pub nred: u32,
    /// Batch-affine levels (0: XYZZ accumulation only) and their buffer geometry.
    pub alv: u32,
    pub astr_a: u32,
    pub astr_b: u32,
    pub fstr: u32,
    pub aent: u32,
    pub aentb: u32,
    pub agw: u32,
    pub ablk: u32,
    pub achunk: u32,
    pub anchunk: u32,
}

/// Most outputs of affine level `l` in one window (`pt_msm_aff_omax`).
fn aff_omax(n: u32, nb: u32, l: u32) -> u32 {
    (n >> (l + 1)) + n.min(nb)
}

/// Whether MSMs accumulate buckets with batch-affine additions: on unless
/// PROVETOP_MSM_AFFINE=0 (the XYZZ path, kept for comparison).
pub fn affine_enabled() -> bool {
    std::env::var("PROVETOP_MSM_AFFINE").map_or(true, |v| v.trim() != "0")
}

fn log2_ceil(n: u64) -> u32 {
    64 - (n - 1).leading_zeros()
}

impl Config {
    /// `pt_msm_make_config(n, 0, 0, PT_MSM_AFF_AUTO)`.
    pub fn new(n: usize) -> Config {
        Config::with_affine(n, true)
    }

    /// `pt_msm_make_config(n, 0, 0, affine ? PT_MSM_AFF_AUTO : 0)`.
    pub fn with_affine(n: usize, affine: bool) -> Config {
        let n = n.max(1) as u64;
        let c = (log2_ceil(n.max(2)) as i64 - 4).clamp(5, 22) as u32;
        let nwin = 255u32.div_ceil(c);
        let nb = 1u32 << (c - 1);
        let per = (nwin as u64 * n) >> 18;
        let mut chunk = 32u32;
        while chunk < 2048 && chunk as u64 * 2 <= per {
            chunk *= 2;
        }
        let nchunk = n.div_ceil(chunk as u64) as u32;
        let mut bseg = 4u32;
        while bseg < 64 && nwin as u64 * nb as u64 / (bseg as u64 * 2) >= 65536 {
            bseg *= 2;
        }
        let bseg = bseg.min(nb);
        let nbseg = nb / bseg;
        let rgrp = nbseg.min(256);
        let mut k = Config {
            c,
            nwin,
            nb,
            chunk,
            nchunk,
            bseg,
            nbseg,
            rgrp,
            nred: nbseg / rgrp,
            alv: 0,
            astr_a: 0,
            astr_b: 0,
            fstr: 0,
            aent: 0,
            aentb: 0,
            agw: 0,
            ablk: 0,
            achunk: 0,
            anchunk: 0,
        };
        let mut alv = 0;
        while affine && alv < AFF_MAXLV && (nb as u64) << (alv + 1) <= n {
            alv += 1;
        }
        if alv > 0 {
            let n32 = n as u32;
            k.alv = alv;
            k.astr_a = aff_omax(n32, nb, 0);
            k.astr_b = aff_omax(n32, nb, 1);
            k.fstr = aff_omax(n32, nb, alv - 1);
            let ga = nwin as u64 * k.astr_a as u64;
            let gb = nwin as u64 * k.astr_b as u64;
            k.aent = (ga.min(AFF_GROUP as u64) as u32).max(k.astr_a);
            k.aentb = (gb.min(AFF_GROUP as u64) as u32).max(k.astr_b);
            k.agw = (k.aent / k.astr_a).min(nwin);
            k.ablk = k.astr_a.div_ceil(AFF_K * AFF_THREADS);
            k.achunk = 8;
            while k.agw as u64 * k.fstr.div_ceil(k.achunk) as u64 > AFF_FINAL as u64 {
                k.achunk *= 2;
            }
            k.anchunk = k.fstr.div_ceil(k.achunk);
        }
        k
    }
}

/// Byte offsets inside one scratch allocation (`pt_msm_scratch_layout`).
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    keys: usize,
    sorted: usize,
    counts: usize,
    cursor: usize,
    edge: usize,
    bsum: usize,
    head: usize,
    tail: usize,
    segs: usize,
    red: usize,
    wins: usize,
    aend: usize,
    abuf: usize,
    bbuf: usize,
    pre: usize,
    tp: usize,
    bp: usize,
    ahead: usize,
    atail: usize,
    aedge: usize,
    pub total: usize,
}

fn align(x: usize) -> usize {
    (x + 255) & !255
}

impl Layout {
    pub fn new(n: usize, k: &Config) -> Layout {
        let (nwin, nb, nchunk) = (k.nwin as usize, k.nb as usize, k.nchunk as usize);
        let mut o = 0;
        let mut take = |bytes: usize| {
            let at = o;
            o = align(o + bytes);
            at
        };
        let keys = take(nwin * n * 4);
        let sorted = take(nwin * n * 4);
        let counts = take(nwin * nb * 4);
        let cursor = take(nwin * nb * 4);
        let edge = take(nwin * nchunk * 4);
        let bsum = take(nwin * nb * XYZZ);
        let head = take(nwin * nchunk * XYZZ);
        let tail = take(nwin * nchunk * XYZZ);
        let segs = take(nwin * k.nbseg as usize * XYZZ);
        let red = take(nwin * k.nred as usize * XYZZ);
        let wins = take(nwin * XYZZ);
        let aff = k.alv != 0;
        let on = |b: bool, bytes: usize| if b { bytes } else { 0 };
        let (aent, alv) = (k.aent as usize, k.alv as usize);
        let ends = (k.agw as usize * nb).max(aent / 8);
        let aend = take(on(aff, 4 * alv * ends));
        let abuf = take(on(aff, AFFINE * aent));
        let bbuf = take(on(k.alv >= 2, AFFINE * k.aentb as usize));
        let pre = take(on(aff, FP * aent));
        let per_blk = (AFF_K * AFF_THREADS) as usize;
        let tp = take(on(
            aff,
            FP * (aent / AFF_K as usize + 256 * AFF_THREADS as usize),
        ));
        let bp = take(on(aff, FP * (aent / per_blk + 256)));
        let ahead = take(on(aff, XYZZ * AFF_FINAL as usize));
        let atail = take(on(aff, XYZZ * AFF_FINAL as usize));
        let aedge = take(on(aff, 4 * AFF_FINAL as usize));
        Layout {
            keys,
            sorted,
            counts,
            cursor,
            edge,
            bsum,
            head,
            tail,
            segs,
            red,
            wins,
            aend,
            abuf,
            bbuf,
            pre,
            tp,
            bp,
            ahead,
            atail,
            aedge,
            total: o,
        }
    }
}

/// Scratch bytes an MSM of `n` points needs, and any smaller MSM too (the workspace sized for
/// N also runs the L, A and B tail MSMs of fewer points). The layout is not monotone in n: it
/// drops where the chunk doubles (head/tail halve, ~100 MB at 2^21..2^25) or the affine group or
/// level count changes. Within a run of equal (c, chunk, alv, agw) every array grows with n, so
/// the most over m <= n is at the top of one of those runs: walk them downwards.
pub fn scratch_bytes(n: usize) -> usize {
    scratch_bytes_with(n, affine_enabled())
}

fn scratch_bytes_with(n: usize, affine: bool) -> usize {
    let key = |m: usize| {
        let k = Config::with_affine(m, affine);
        (k.c, k.chunk, k.alv, k.agw)
    };
    let mut most = 0;
    let mut m = n.max(1);
    loop {
        most = most.max(Layout::new(m, &Config::with_affine(m, affine)).total);
        // the first m0 <= m of m's run: each key part is monotone in m for a fixed c, so the
        // run is an interval
        let km = key(m);
        let (mut lo, mut hi) = (1usize, m);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key(mid) == km {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if lo <= 1 {
            return most;
        }
        m = lo - 1;
    }
}

/// Enqueues Σ points[i]·scalars[i] over `n` device-resident points and Montgomery scalars;
/// the Jacobian result lands at `result` (144 bytes of device memory).
pub fn enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    points: u64,
    scalars: u64,
    n: usize,
    scratch: u64,
    result: u64,
) -> Result<()> {
    let k = Config::with_affine(n, affine_enabled());
    let l = Layout::new(n, &k);
    let at = |o: usize| scratch + o as u64;
    let n32 = n as u32;
    let f = &gpu.f;
    let blocks = n32.div_ceil(DIGIT_THREADS);
    gpu.zero_u32(s, at(l.counts), (k.nwin * k.nb) as usize)?;
    use Arg::{Ptr, U32};
    gpu.launch(
        s,
        &f.msm_digits,
        (blocks, 1),
        DIGIT_THREADS,
        0,
        &[
            Ptr(scalars),
            U32(n32),
            U32(k.c),
            U32(k.nwin),
            Ptr(at(l.keys)),
        ],
    )?;
    gpu.launch(
        s,
        &f.msm_hist,
        (blocks, k.nwin),
        256,
        0,
        &[Ptr(at(l.keys)), U32(n32), U32(k.nb), Ptr(at(l.counts))],
    )?;
    gpu.launch(
        s,
        &f.msm_plan,
        (k.nwin, 1),
        PLAN_THREADS,
        0,
        &[Ptr(at(l.counts)), U32(k.nb), Ptr(at(l.cursor))],
    )?;
    gpu.launch(
        s,
        &f.msm_scatter,
        (blocks, k.nwin),
        256,
        0,
        &[
            Ptr(at(l.keys)),
            U32(n32),
            U32(k.nb),
            Ptr(at(l.cursor)),
            Ptr(at(l.sorted)),
        ],
    )?;
    if k.alv > 0 {
        affine(gpu, s, points, n32, &k, &l, scratch)?;
    } else {
        gpu.launch(
            s,
            &f.msm_chunks,
            ((k.nwin * k.nchunk).div_ceil(ACC_THREADS), 1),
            ACC_THREADS,
            0,
            &[
                Ptr(points),
                Ptr(at(l.sorted)),
                Ptr(at(l.counts)),
                Ptr(at(l.cursor)),
                U32(n32),
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
        gpu.launch(
            s,
            &f.msm_fixup,
            ((k.nwin * k.nchunk).div_ceil(FIX_THREADS), 1),
            FIX_THREADS,
            0,
            &[
                Ptr(at(l.cursor)),
                Ptr(at(l.edge)),
                U32(k.nb),
                U32(k.nwin),
                U32(k.chunk),
                U32(k.nchunk),
                Ptr(at(l.head)),
                Ptr(at(l.tail)),
                Ptr(at(l.bsum)),
            ],
        )?;
    }
    gpu.launch(
        s,
        &f.msm_bucket_reduce,
        ((k.nwin * k.nbseg).div_ceil(RED_THREADS), 1),
        RED_THREADS,
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
    gpu.launch(
        s,
        &f.msm_reduce,
        (k.nwin * k.nred, 1),
        RED_THREADS,
        0,
        &[Ptr(at(l.segs)), U32(k.rgrp), Ptr(at(l.red))],
    )?;
    gpu.launch(
        s,
        &f.msm_reduce,
        (k.nwin, 1),
        RED_THREADS,
        0,
        &[Ptr(at(l.red)), U32(k.nred), Ptr(at(l.wins))],
    )?;
    gpu.launch(
        s,
        &f.msm_final,
        (1, 1),
        1,
        0,
        &[Ptr(at(l.wins)), U32(k.nwin), U32(k.c), Ptr(result)],
    )?;
    Ok(())
}

/// The batch-affine accumulation (cuda/README.md): per group of `agw` windows, the level
/// plan, `alv` levels of (fwd, inv, bwd), then the XYZZ chunks/fixup over the last level, which
/// leave bsum exactly as the XYZZ path does.
fn affine(
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
    let per_blk = AFF_K * AFF_THREADS;
    let mut w0 = 0;
    while w0 < k.nwin {
        let gw = k.agw.min(k.nwin - w0);
        let (counts, cursor) = (at(l.counts) + u32s(w0), at(l.cursor) + u32s(w0));
        let sorted = at(l.sorted) + w0 as u64 * n32 as u64 * 4;
        gpu.launch(
            s,
            &f.msm_aff_plan,
            (gw, 1),
            PLAN_THREADS,
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
                U32(blocks * AFF_THREADS),
                Ptr(at(l.bp)),
                U32(blocks),
            ];
            gpu.launch(s, &f.msm_aff_fwd, (blocks, gw), AFF_THREADS, 0, &common)?;
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
            gpu.launch(s, &f.msm_aff_bwd, (blocks, gw), AFF_THREADS, 0, &args)?;
        }
        let last = ((k.alv - 1) & 1) as usize;
        let fend = at(l.aend) + (k.alv - 1) as u64 * u32s(gw);
        let bsum = at(l.bsum) + w0 as u64 * nb as u64 * XYZZ as u64;
        gpu.launch(
            s,
            &f.msm_chunks_direct,
            ((gw * k.anchunk).div_ceil(ACC_THREADS), 1),
            ACC_THREADS,
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
        gpu.launch(
            s,
            &f.msm_fixup,
            ((gw * k.anchunk).div_ceil(FIX_THREADS), 1),
            FIX_THREADS,
            0,
            &[
                Ptr(fend),
                Ptr(at(l.aedge)),
                U32(nb),
                U32(gw),
                U32(k.achunk),
                U32(k.anchunk),
                Ptr(at(l.ahead)),
                Ptr(at(l.atail)),
                Ptr(bsum),
            ],
        )?;
        w0 += gw;
    }
    Ok(())
}

/// Scratch bytes `sum_enqueue` needs for `count` points.
pub fn sum_scratch_bytes(count: usize) -> usize {
    (sum_parts(count) + 1) * XYZZ
}

fn sum_chunk(count: usize) -> usize {
    // About 2^14 threads, at least 64 points each.
    (count >> 14).next_power_of_two().max(64)
}

fn sum_parts(count: usize) -> usize {
    count.div_ceil(sum_chunk(count)).max(1)
}

/// Launches `pt_g1_sum_parts` or `pt_g2_sum_parts`: (points, idx, count, chunk, nparts).
fn sum_parts_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    kernel: &cudarc::driver::CudaFunction,
    (points, idx, count, chunk, nparts): (u64, u64, usize, usize, u32),
    parts: u64,
) -> Result<()> {
    use Arg::{Ptr, U32};
    gpu.launch(
        s,
        kernel,
        (nparts.div_ceil(ACC_THREADS), 1),
        ACC_THREADS,
        0,
        &[
            Ptr(points),
            Ptr(idx),
            U32(count as u32),
            U32(chunk as u32),
            U32(nparts),
            Ptr(parts),
        ],
    )
}

/// Enqueues Σ points[idx[i]] for i < count (the bases whose scalar is one).
pub fn sum_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    points: u64,
    idx: u64,
    count: usize,
    scratch: u64,
    result: u64,
) -> Result<()> {
    let nparts = sum_parts(count) as u32;
    let parts_end = scratch + nparts as u64 * XYZZ as u64;
    use Arg::{Ptr, U32};
    let f = &gpu.f;
    let part = (points, idx, count, sum_chunk(count), nparts);
    sum_parts_enqueue(gpu, s, &f.g1_sum_parts, part, scratch)?;
    gpu.launch(
        s,
        &f.msm_reduce,
        (1, 1),
        RED_THREADS,
        0,
        &[Ptr(scratch), U32(nparts), Ptr(parts_end)],
    )?;
    gpu.launch(
        s,
        &f.msm_final,
        (1, 1),
        1,
        0,
        &[Ptr(parts_end), U32(1), U32(0), Ptr(result)],
    )?;
    Ok(())
}

/// One G2 point in XYZZ over Fp2, and as blst_p2 (Jacobian over Fp2).
const G2_XYZZ: usize = 384;
pub const G2_JACOBIAN: usize = 288;

/// G2 parts: up to about 2^13 of them (64 blocks of threads on the device), which the host
/// adds in parallel in a few milliseconds.
fn g2_sum_chunk(count: usize) -> usize {
    count.div_ceil(1 << 13).next_power_of_two().max(32)
}

/// How many Jacobian parts `g2_sum_enqueue` leaves for the host to add.
pub fn g2_sum_parts(count: usize) -> usize {
    count.div_ceil(g2_sum_chunk(count)).max(1)
}

/// Scratch bytes `g2_sum_enqueue` needs for `count` points: the parts, then their Jacobian forms.
pub fn g2_sum_scratch_bytes(count: usize) -> usize {
    g2_sum_parts(count) * (G2_XYZZ + G2_JACOBIAN)
}

/// `g2_sum_scratch_bytes` of any count: a chunk is at least count / 2^13, so at most 2^13 parts.
pub const G2_SUM_SCRATCH_MAX: usize = (1 << 13) * (G2_XYZZ + G2_JACOBIAN);

/// Enqueues the sums of G2 `points[idx[i]]`, i < count, in `g2_sum_parts(count)` parts, and
/// returns where their Jacobian forms (blst_p2) will be; the host adds them.
pub fn g2_sum_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    points: u64,
    idx: u64,
    count: usize,
    scratch: u64,
) -> Result<u64> {
    let nparts = g2_sum_parts(count) as u32;
    let jac = scratch + nparts as u64 * G2_XYZZ as u64;
    use Arg::{Ptr, U32};
    let f = &gpu.f;
    let part = (points, idx, count, g2_sum_chunk(count), nparts);
    sum_parts_enqueue(gpu, s, &f.g2_sum_parts, part, scratch)?;
    gpu.launch(
        s,
        &f.g2_to_jac,
        (nparts.div_ceil(128), 1),
        128,
        0,
        &[Ptr(scratch), U32(nparts), Ptr(jac)],
    )?;
    Ok(jac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_g2_scratch_fits_any_count() {
        let counts = (0..40).flat_map(|k| [(1usize << k) - 1, 1 << k, (1 << k) + 1]);
        assert!(counts
            .into_iter()
            .all(|c| g2_sum_scratch_bytes(c) <= G2_SUM_SCRATCH_MAX));
    }

    #[test]
    fn g2_sums_leave_a_few_thousand_parts_at_most() {
        for n in [1usize, 31, 32, 33, 1 << 20, 2_100_000, 1 << 27] {
            let parts = g2_sum_parts(n);
            assert!(parts * g2_sum_chunk(n) >= n, "{n}: every point in a part");
            assert!(parts <= 8192, "{n}: {parts} parts");
        }
    }

    #[test]
    fn config_matches_the_documented_examples() {
        // cuda/README.md: c = 16 at 2^20, 20 at 2^24, 22 at 2^26.
        assert_eq!(Config::new(1 << 20).c, 16);
        assert_eq!(Config::new(1 << 24).c, 20);
        assert_eq!(Config::new(1 << 26).c, 22);
        assert_eq!(Config::new(1).c, 5);
        let k = Config::new(1 << 24);
        assert_eq!(k.nwin, 13);
        assert_eq!(k.nb * 2, 1 << 20);
        assert!(k.chunk.is_power_of_two() && (32..=2048).contains(&k.chunk));
        // Scratch at 2^24 is about 3.3 GB for XYZZ, 5.1 GB with the batch-affine buffers (README).
        let xyzz = Layout::new(1 << 24, &Config::with_affine(1 << 24, false)).total as f64 / 1e9;
        assert!((3.0..3.6).contains(&xyzz), "{xyzz}");
        let aff = Layout::new(1 << 24, &Config::new(1 << 24)).total as f64 / 1e9;
        assert!((4.5..5.5).contains(&aff), "{aff}");
        assert_eq!(Config::new(1 << 24).alv, 5);
        assert_eq!(Config::new(1 << 26).alv, 5);
    }

    #[test]
    fn config_and_layout_equal_the_kernels_own() {
        // (n, alv, agw, achunk, anchunk, total) from pt_msm_make_config(n, 0, 0, AUTO) and
        // pt_msm_scratch_layout in cuda/msm/config.cuh
        let want: [(usize, u32, u32, u32, u32, usize); 8] = [
            (64, 2, 51, 8, 4, 53260544),
            (1000, 4, 43, 8, 12, 58320896),
            (1024, 5, 43, 8, 8, 58443520),
            (65539, 4, 20, 8, 1024, 250589440),
            (1048576, 5, 3, 8, 8192, 927104000),
            (3000000, 4, 1, 8, 39822, 1485946880),
            (16777216, 5, 1, 8, 131072, 5158851072),
            (67108864, 5, 1, 32, 131072, 19006896384),
        ];
        for (n, alv, agw, achunk, anchunk, total) in want {
            let k = Config::new(n);
            assert_eq!(
                (k.alv, k.agw, k.achunk, k.anchunk),
                (alv, agw, achunk, anchunk),
                "{n}"
            );
            assert_eq!(Layout::new(n, &k).total, total, "{n}");
        }
    }

    #[test]
    fn affine_buffers_hold_every_group_and_the_scratch_covers_smaller_msms() {
        for affine in [false, true] {
            let mut last = 0;
            let mut most_below = 0;
            let mut n = 1usize;
            while n < 1 << 26 {
                let own = Layout::new(n, &Config::with_affine(n, affine)).total;
                most_below = most_below.max(own);
                let s = scratch_bytes_with(n, affine);
                assert!(s >= most_below, "{n}: {s} < {most_below}");
                assert!(s >= last, "{n}: not monotone");
                last = s;
                n += 1 + n / 61;
            }
        }
        for lg in 1..=27u32 {
            for n in [
                (1usize << lg) - 1,
                1 << lg,
                (1 << lg) + 1,
                (3usize << lg) / 2,
            ] {
                let k = Config::new(n);
                if k.alv == 0 {
                    continue;
                }
                let per_blk = AFF_K * AFF_THREADS;
                assert!(k.agw >= 1 && k.agw <= k.nwin);
                assert!(k.agw as u64 * k.astr_a as u64 <= k.aent as u64, "{n}: A");
                assert!(k.agw as u64 * k.astr_b as u64 <= k.aentb as u64, "{n}: B");
                let tp = k.agw as u64 * k.ablk as u64 * AFF_THREADS as u64;
                assert!(tp <= (k.aent / AFF_K + 256 * AFF_THREADS) as u64, "{n}: tp");
                assert!(k.agw * k.ablk <= k.aent / per_blk + 256, "{n}: bp");
                assert!(
                    k.agw as u64 * k.anchunk as u64 <= AFF_FINAL as u64,
                    "{n}: final"
                );
                assert!(k.anchunk as u64 * k.achunk as u64 >= k.fstr as u64);
                for lv in 0..k.alv {
                    let stride = if lv & 1 == 0 { k.astr_a } else { k.astr_b };
                    assert!(aff_omax(n as u32, k.nb, lv) <= stride, "{n}: level {lv}");
                }
            }
        }
    }
}
