//! The host side of our Pippenger MSM (cuda/msm): the configuration and scratch layout the
//! kernels expect, mirrored from cuda/msm/config.cuh, and the launch sequence of
//! cuda/README.md. Everything runs on one stream with no host synchronisation.

use anyhow::Result;
use cudarc::driver::CudaStream;

use super::gpu::{Arg, Gpu};

const DIGIT_THREADS: u32 = 256;
const PLAN_THREADS: u32 = 1024;
/// Buckets per block of the plan (`PT_MSM_PLAN_PART`).
const PLAN_PART: u32 = PLAN_THREADS * 8;
/// The shifted bases' binned scatter: buckets per bin (`PT_MSM_BIN`), most entries a bin
/// sorts in shared memory (`PT_MSM_BIN_CAP`), threads of the sort, its shared memory.
const BIN: u32 = 128;
const BIN_CAP: u32 = 16_384;
const BIN_THREADS: u32 = 256;
pub const BIN_SORT_SMEM: u32 = (BIN_CAP + BIN) * 4;
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

/// Whether MSMs accumulate buckets with batch-affine additions: only with
/// PROVETOP_MSM_AFFINE=1. Correct on the H200 but 4.4x slower than XYZZ at 2^24 there
/// (bench/results/h200-2026-11-30d, docs/notes.md), so XYZZ is the default.
fn affine_enabled() -> bool {
    std::env::var("PROVETOP_MSM_AFFINE").is_ok_and(|v| v.trim() == "1")
}

fn log2_ceil(n: u64) -> u32 {
    64 - (n - 1).leading_zeros()
}

/// The default window for an MSM of `m` points: ceil(log2 m) − 4, within 5..=22.
fn window(m: u64) -> u32 {
    (log2_ceil(m.max(2)) as i64 - 4).clamp(5, 22) as u32
}

impl Config {
    /// `pt_msm_make_config(n, 0, 0, PT_MSM_AFF_AUTO)`.
    pub fn new(n: usize) -> Config {
        Config::sized(n, n)
    }

    /// `pt_msm_make_config(n, 0, 0, affine ? PT_MSM_AFF_AUTO : 0)`: the kernels' own
    /// configurations, which the tests pin.
    #[cfg(test)]
    fn with_affine(n: usize, affine: bool) -> Config {
        let n = n.max(1) as u64;
        let c = window(n);
        Config::with(n, c, 255u32.div_ceil(c), n, affine)
    }

    /// For `n` scalars of which about `terms` are neither 0 nor 1 (the 0/1 split's tail MSMs:
    /// mostly zeros): window, chunk and affine levels as for an MSM of `terms` points, so its
    /// buckets are few and its threads many, with room for all `n` in case more are non-zero.
    /// `pt_msm_config_for(n, c, chunk, nwin, levels)` with those.
    pub fn sized(n: usize, terms: usize) -> Config {
        let n = n.max(1) as u64;
        let terms = (terms as u64).clamp(1, n);
        // Keys and sorted entries take windows × n × 8 bytes whatever the terms: at most
        // 6 bits narrower than an MSM of n, so a nearly empty tail of 2^27 scalars does not
        // ask for 51 windows (55 GB).
        let c = window(terms).max(window(n).saturating_sub(6)).max(5);
        Config::with(n, c, 255u32.div_ceil(c), terms, affine_enabled())
    }

    /// The bucket phase of an MSM over shifted bases: one set of buckets over the n·W
    /// (window, base) entries, XYZZ accumulation (`pt_msm_make_config_shifted(n, c, 0, 0)`):
    /// affine levels over one window of n·W entries would take tens of GB at 2^26.
    pub fn shifted(n: usize, sh: Shifted) -> Config {
        let entries = (n.max(1) * sh.windows as usize) as u64;
        Config::with(entries, sh.c, 1, entries, false)
    }

    /// `pt_msm_config_for(n, c, chunk, nwin, levels)` with the chunk and levels for about
    /// `work` entries a set, buffers for `n`.
    fn with(n: u64, c: u32, nwin: u32, work: u64, affine: bool) -> Config {
        let nb = 1u32 << (c - 1);
        let per = (nwin as u64 * work) >> 18;
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
        while affine && alv < AFF_MAXLV && (nb as u64) << (alv + 1) <= work {
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

/// Precomputed shifted bases (cuda/msm/shifted.cuh): W = ⌈255/c⌉ copies of every base,
/// 2^(c·w)·P, so all windows share one set of buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shifted {
    pub c: u32,
    pub windows: u32,
}

impl Shifted {
    /// `pt_msm_shifted_c`: the window that minimises n·W additions into buckets plus about
    /// 1.4·2^c for the running sums.
    pub fn for_points(n: usize) -> Shifted {
        let cost = |c: u32| n as f64 * 255u32.div_ceil(c) as f64 + 1.4 * (1u64 << c) as f64;
        let c = (8..=24u32)
            .min_by(|a, b| cost(*a).total_cmp(&cost(*b)))
            .expect("a range of windows");
        Shifted {
            c,
            windows: 255u32.div_ceil(c),
        }
    }

    /// Device bytes of the shifted copies of `n` bases (the bases themselves among them).
    pub fn bytes(&self, n: usize) -> usize {
        n * self.windows as usize * AFFINE
    }
}

/// Byte offsets inside one scratch allocation (`pt_msm_scratch_layout`).
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    keys: usize,
    sorted: usize,
    counts: usize,
    cursor: usize,
    parts: usize,
    bins: usize,
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

/// Blocks of the plan a window (`pt_msm_plan_parts`).
fn plan_parts(nb: u32) -> u32 {
    nb.div_ceil(PLAN_PART)
}

/// Bins of the shifted bases' scatter (`pt_msm_bin_count`).
fn bin_count(nb: u32) -> u32 {
    nb.div_ceil(BIN)
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
        let parts = take(nwin * plan_parts(k.nb) as usize * 4);
        let bins = take(nwin * 2 * bin_count(k.nb) as usize * 4);
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
            parts,
            bins,
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

/// Scratch bytes an MSM of `n` points with about `terms` scalars other than 0 and 1 needs
/// (the layout is not monotone in n: a workspace takes the most of the MSMs it runs).
pub fn scratch_bytes(n: usize, terms: usize) -> usize {
    Layout::new(n, &Config::sized(n, terms)).total
}

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
    launch(gpu, s, (points, None), scalars, n, &k, (scratch, result))
}

/// Scratch bytes of an MSM of `n` scalars over shifted bases.
pub fn shifted_scratch_bytes(n: usize, sh: Shifted) -> usize {
    Layout::new(n * sh.windows as usize, &Config::shifted(n, sh)).total
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
    launch(gpu, s, (q, Some(sh)), scalars, n, &k, (scratch, result))
}

/// Bases shifted a slice at a time: the XYZZ temporaries of one slice.
const SHIFT_SLICE: usize = 1 << 20;

/// Device bytes `shift_enqueue` needs besides its output.
pub fn shift_scratch_bytes(n: usize, sh: Shifted) -> usize {
    n.clamp(1, SHIFT_SLICE) * sh.windows as usize * XYZZ
}

/// Enqueues the shifted copies of `n` affine bases into `q` (`sh.bytes(n)` bytes): Q[w·n + i]
/// = 2^(c·w)·P[i]; `tmp` holds `shift_scratch_bytes(n, sh)`.
pub fn shift_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    (bases, n): (u64, usize),
    sh: Shifted,
    q: u64,
    tmp: u64,
) -> Result<()> {
    use Arg::{Ptr, U32};
    let f = &gpu.f;
    for i0 in (0..n).step_by(SHIFT_SLICE) {
        let cnt = (n - i0).min(SHIFT_SLICE) as u32;
        let blocks = (cnt.div_ceil(128), 1);
        let src = bases + (i0 * AFFINE) as u64;
        let (c, w) = (U32(sh.c), U32(sh.windows));
        gpu.launch(
            s,
            &f.msm_shift,
            blocks,
            128,
            0,
            &[Ptr(src), U32(cnt), c, w, Ptr(tmp)],
        )?;
        let dst = Ptr(q + (i0 * AFFINE) as u64);
        let args = [Ptr(tmp), U32(cnt), w, U32(n as u32), dst];
        gpu.launch(s, &f.msm_shift_affine, blocks, 128, 0, &args)?;
    }
    Ok(())
}

/// The launch sequence of cuda/README.md for `n` scalars: over the bases, or with `shifted`
/// over their shifted copies with every window in one set of buckets.
fn launch(
    gpu: &Gpu,
    s: &CudaStream,
    (points, shifted): (u64, Option<Shifted>),
    scalars: u64,
    n: usize,
    k: &Config,
    (scratch, result): (u64, u64),
) -> Result<()> {
    // Digit windows, and the entries of the bucket phase (every window's, when shifted).
    let (windows, entries) = match shifted {
        Some(sh) => (sh.windows, n * sh.windows as usize),
        None => (k.nwin, n),
    };
    let hist = match shifted {
        Some(_) => &gpu.f.msm_hist_shared,
        None => &gpu.f.msm_hist,
    };
    let l = Layout::new(entries, k);
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
        PLAN_THREADS,
        0,
        &[counts, U32(k.nb), parts],
    )?;
    let args = [counts, U32(k.nb), parts, Ptr(at(l.cursor))];
    gpu.launch(s, &f.msm_plan, plan_grid, PLAN_THREADS, 0, &args)?;
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
            BIN_THREADS,
            BIN_SORT_SMEM,
            &args,
        )?;
    } else {
        let args = [keys, U32(n32), U32(k.nb), cursor, sorted];
        gpu.launch(s, &f.msm_scatter, (blocks, windows), 256, 0, &args)?;
    }
    if k.alv > 0 {
        affine(gpu, s, points, n32, k, &l, scratch)?;
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
        fixup(gpu, s, at(l.cursor), k.nb, chunks, parts, at(l.bsum))?;
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

/// `pt_msm_fixup`: the sums of buckets cut by chunk edges, from each chunk's head and tail
/// partial sums, for `nwin` windows of `nchunk` chunks of `chunk` entries; `ends` are the
/// buckets' ends.
fn fixup(
    gpu: &Gpu,
    s: &CudaStream,
    ends: u64,
    nb: u32,
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
    let blocks = ((nwin * nchunk).div_ceil(FIX_THREADS), 1);
    gpu.launch(s, &gpu.f.msm_fixup, blocks, FIX_THREADS, 0, &args)
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
        let chunks = (gw, k.achunk, k.anchunk);
        let parts = (at(l.ahead), at(l.atail), at(l.aedge));
        fixup(gpu, s, fend, nb, chunks, parts, bsum)?;
        w0 += gw;
    }
    Ok(())
}

/// A sum of points runs one serial chain of additions a part: enough parts to fill the GPU
/// (~2^17 threads for G1, ~2^16 for G2's larger kernel), then sums of groups of parts.
const SUM_GROUP: usize = 256;

fn sum_chunk(count: usize, threads_log2: u32) -> usize {
    (count >> threads_log2).next_power_of_two().max(32)
}

/// Parts of `chunk` points, padded to whole groups (a part past the end is infinity).
fn sum_parts(count: usize, threads_log2: u32) -> usize {
    count
        .div_ceil(sum_chunk(count, threads_log2))
        .next_multiple_of(SUM_GROUP)
}

const G1_SUM_THREADS_LOG2: u32 = 17;

/// Scratch bytes `sum_enqueue` needs for `count` points: parts, group sums, the total.
pub fn sum_scratch_bytes(count: usize) -> usize {
    let parts = sum_parts(count, G1_SUM_THREADS_LOG2);
    (parts + parts / SUM_GROUP + 1) * XYZZ
}

/// Launches `pt_g1_sum_parts` or `pt_g2_sum_parts`: (points, idx, count, chunk, nparts).
fn sum_parts_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    kernel: &cudarc::driver::CudaFunction,
    (points, idx, count, chunk, nparts): (u64, u64, usize, usize, usize),
    parts: u64,
) -> Result<()> {
    use Arg::{Ptr, U32};
    gpu.launch(
        s,
        kernel,
        ((nparts as u32).div_ceil(ACC_THREADS), 1),
        ACC_THREADS,
        0,
        &[
            Ptr(points),
            Ptr(idx),
            U32(count as u32),
            U32(chunk as u32),
            U32(nparts as u32),
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
    let nparts = sum_parts(count, G1_SUM_THREADS_LOG2);
    let groups = nparts / SUM_GROUP;
    let group_sums = scratch + (nparts * XYZZ) as u64;
    let total = group_sums + (groups * XYZZ) as u64;
    use Arg::{Ptr, U32};
    let f = &gpu.f;
    let chunk = sum_chunk(count, G1_SUM_THREADS_LOG2);
    sum_parts_enqueue(
        gpu,
        s,
        &f.g1_sum_parts,
        (points, idx, count, chunk, nparts),
        scratch,
    )?;
    let reduce = |input: u64, count: usize, groups: usize, out: u64| {
        gpu.launch(
            s,
            &f.msm_reduce,
            (groups as u32, 1),
            RED_THREADS,
            0,
            &[Ptr(input), U32(count as u32), Ptr(out)],
        )
    };
    reduce(scratch, SUM_GROUP, groups, group_sums)?;
    reduce(group_sums, groups, 1, total)?;
    gpu.launch(
        s,
        &f.msm_final,
        (1, 1),
        1,
        0,
        &[Ptr(total), U32(1), U32(0), Ptr(result)],
    )?;
    Ok(())
}

/// One G2 point in XYZZ over Fp2, and as blst_p2 (Jacobian over Fp2).
const G2_XYZZ: usize = 384;
pub const G2_JACOBIAN: usize = 288;
const G2_SUM_THREADS_LOG2: u32 = 16;
const G2_RED_THREADS: u32 = 64;

/// How many Jacobian sums `g2_sum_enqueue` leaves for the host to add: one a group of parts,
/// at most 257.
pub fn g2_sum_parts(count: usize) -> usize {
    sum_parts(count, G2_SUM_THREADS_LOG2) / SUM_GROUP
}

/// Scratch bytes `g2_sum_enqueue` needs for `count` points: the parts, the group sums, then
/// their Jacobian forms.
pub fn g2_sum_scratch_bytes(count: usize) -> usize {
    let parts = sum_parts(count, G2_SUM_THREADS_LOG2);
    parts * G2_XYZZ + parts / SUM_GROUP * (G2_XYZZ + G2_JACOBIAN)
}

/// `g2_sum_scratch_bytes` of any count: a chunk is at least count / 2^16, so at most 2^16 + 1
/// parts before padding to a whole group.
pub const G2_SUM_SCRATCH_MAX: usize =
    ((1 << 16) + SUM_GROUP) * G2_XYZZ + ((1 << 16) / SUM_GROUP + 1) * (G2_XYZZ + G2_JACOBIAN);

/// Enqueues the sums of G2 `points[idx[i]]`, i < count, in `g2_sum_parts(count)` group sums,
/// and returns where their Jacobian forms (blst_p2) will be; the host adds them.
pub fn g2_sum_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    points: u64,
    idx: u64,
    count: usize,
    scratch: u64,
) -> Result<u64> {
    let nparts = sum_parts(count, G2_SUM_THREADS_LOG2);
    let groups = nparts / SUM_GROUP;
    let group_sums = scratch + (nparts * G2_XYZZ) as u64;
    let jac = group_sums + (groups * G2_XYZZ) as u64;
    use Arg::{Ptr, U32};
    let f = &gpu.f;
    let chunk = sum_chunk(count, G2_SUM_THREADS_LOG2);
    sum_parts_enqueue(
        gpu,
        s,
        &f.g2_sum_parts,
        (points, idx, count, chunk, nparts),
        scratch,
    )?;
    gpu.launch(
        s,
        &f.g2_reduce,
        (groups as u32, 1),
        G2_RED_THREADS,
        0,
        &[Ptr(scratch), U32(SUM_GROUP as u32), Ptr(group_sums)],
    )?;
    gpu.launch(
        s,
        &f.g2_to_jac,
        ((groups as u32).div_ceil(128), 1),
        128,
        0,
        &[Ptr(group_sums), U32(groups as u32), Ptr(jac)],
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
    fn sums_cover_every_point_in_whole_groups_and_leave_the_host_a_few_hundred() {
        for n in [1usize, 31, 32, 33, 1 << 20, 2_100_000, 1 << 27] {
            for threads in [G1_SUM_THREADS_LOG2, G2_SUM_THREADS_LOG2] {
                let parts = sum_parts(n, threads);
                assert!(
                    parts * sum_chunk(n, threads) >= n,
                    "{n}: every point in a part"
                );
                assert_eq!(parts % SUM_GROUP, 0);
                assert!(parts <= (1 << threads) + SUM_GROUP, "{n}: {parts} parts");
            }
            assert!(g2_sum_parts(n) <= 257, "{n}");
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
        let aff = Config::with_affine(1 << 24, true);
        let gb = Layout::new(1 << 24, &aff).total as f64 / 1e9;
        assert!((4.5..5.5).contains(&gb), "{gb}");
        assert_eq!(aff.alv, 5);
        assert_eq!(Config::with_affine(1 << 26, true).alv, 5);
    }

    #[test]
    fn config_and_layout_equal_the_kernels_own() {
        // (n, alv, agw, achunk, anchunk, total) from pt_msm_make_config(n, 0, 0, AUTO) and
        // pt_msm_scratch_layout in cuda/msm/config.cuh
        let want: [(usize, u32, u32, u32, u32, usize); 8] = [
            (64, 2, 51, 8, 4, 53261312),
            (1000, 4, 43, 8, 12, 58321664),
            (1024, 5, 43, 8, 8, 58444288),
            (65539, 4, 20, 8, 1024, 250594816),
            (1048576, 5, 3, 8, 8192, 927137024),
            (3000000, 4, 1, 8, 39822, 1486070784),
            (16777216, 5, 1, 8, 131072, 5159280384),
            (67108864, 5, 1, 32, 131072, 19008481536),
        ];
        for (n, alv, agw, achunk, anchunk, total) in want {
            let k = Config::with_affine(n, true);
            assert_eq!(
                (k.alv, k.agw, k.achunk, k.anchunk),
                (alv, agw, achunk, anchunk),
                "{n}"
            );
            assert_eq!(Layout::new(n, &k).total, total, "{n}");
        }
    }

    #[test]
    fn affine_buffers_hold_every_group() {
        for lg in 1..=27u32 {
            for n in [
                (1usize << lg) - 1,
                1 << lg,
                (1 << lg) + 1,
                (3usize << lg) / 2,
            ] {
                let k = Config::with_affine(n, true);
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

    #[test]
    fn shifted_bases_take_the_window_that_minimises_additions() {
        // As pt_msm_shifted_c: 2^20 → 20, 2^24 → 22, 2^26 → 24 (11 windows, 71 GB of copies).
        let c = |lg: u32| Shifted::for_points(1usize << lg).c;
        assert_eq!((c(20), c(24), c(26)), (20, 22, 24));
        let sh = Shifted::for_points(1 << 26);
        assert_eq!(sh.windows, 11);
        assert_eq!(sh.bytes(1 << 26), (11 * 96) << 26);
        let k = Config::shifted(1 << 26, sh);
        assert_eq!((k.nwin, k.nb), (1, 1 << 23));
        assert!(k.nchunk as usize * k.chunk as usize >= 11 << 26);
        assert!(
            Shifted::for_points(1).windows <= 32,
            "the kernel's window limit"
        );
    }

    #[test]
    fn a_mostly_zero_msm_gets_the_window_and_threads_of_its_terms() {
        let (n, terms) = (1usize << 26, 10_000_000);
        let (full, tail) = (Config::new(n), Config::sized(n, terms));
        assert_eq!((full.c, tail.c), (22, 20));
        // Threads for every non-zero term, however many: chunks cover all n entries.
        assert!(tail.chunk < full.chunk);
        assert!(tail.nchunk as u64 * tail.chunk as u64 >= n as u64);
        assert_eq!(Config::sized(n, n), full);
        // However few the terms, the keys take at most 16 windows of n here.
        assert_eq!(Config::sized(n, 0).c, 16);
        assert!(Layout::new(n, &Config::sized(n, 1)).total < 2 * Layout::new(n, &full).total);
        assert_eq!(Config::sized(1000, 0).c, 5);
    }
}
