//! The host side of our MSMs (cuda/msm): the configuration and scratch layout the Pippenger
//! kernels expect (`pt_msm_make_config`, `pt_msm_scratch_layout` of cuda/msm/config.cuh, with
//! the kernels' own constants from `consts`), what G1's and G2's launches differ in (`curve`),
//! and one file per technique: the Pippenger launch sequence of cuda/README.md, its
//! batch-affine accumulation, shifted bases, G2's window sums and their combination on the
//! host, and the sums of scalar-one bases. Everything runs on one stream with no host
//! synchronisation.

mod batch_affine;
mod curve;
mod g2;
mod pippenger;
mod shifted;
mod sums;

pub use batch_affine::select as select_accumulation;
pub use g2::{g2_combine, g2_enqueue, g2_scratch_bytes, G2Windows};
pub use pippenger::{enqueue, enqueue_shifted};
pub use shifted::{shift_enqueue, shift_scratch_bytes, shifted_scratch_bytes, Shifted};
pub use sums::{
    g2_sum_enqueue, g2_sum_parts, g2_sum_scratch_bytes, sum_enqueue, sum_scratch_bytes,
    G2_JACOBIAN, G2_SUM_PARTS_MAX, G2_SUM_SCRATCH_MAX,
};

use super::consts::{
    PT_MSM_AFF_FINAL, PT_MSM_AFF_GROUP, PT_MSM_AFF_K, PT_MSM_AFF_MAXLV, PT_MSM_AFF_THREADS,
    PT_MSM_BIN, PT_MSM_BIN_CAP, PT_MSM_PLAN_PART,
};

/// Dynamic shared memory of the shifted bases' bin sort (`pt_msm_bin_smem`).
pub const BIN_SORT_SMEM: u32 = (PT_MSM_BIN_CAP + PT_MSM_BIN) * 4;
/// One affine G1 point and one Fp element.
const AFFINE: usize = 96;
const FP: usize = 48;
/// One G1 XYZZ point (the batch-affine path and shifted bases are G1's alone).
const XYZZ: usize = curve::G1_XYZZ;
/// One Jacobian point (blst_p1).
pub const JACOBIAN: usize = 144;

/// blst's projective G1 point (Jacobian) as the device writes it.
pub fn jacobian(bytes: &[u8]) -> blstrs::G1Projective {
    assert_eq!(bytes.len(), JACOBIAN);
    // SAFETY: G1Projective is repr(transparent) over blst_p1, three Fp of 48 bytes (Jacobian).
    unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const blstrs::G1Projective) }
}

/// blst_p2 (Jacobian over Fp2) as the device writes it.
pub fn g2_jacobian(bytes: &[u8]) -> blstrs::G2Projective {
    assert_eq!(bytes.len(), G2_JACOBIAN);
    // SAFETY: G2Projective is repr(transparent) over blst_p2, three Fp2 of 96 bytes.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const blstrs::G2Projective) }
}

/// The launch configuration of one MSM (`pt_msm_config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Window width in bits.
    pub c: u32,
    /// Windows (bucket sets): ⌈255 / c⌉ for a plain MSM.
    pub nwin: u32,
    /// Buckets per window: 2^(c−1), for signed digits of magnitude 1..=2^(c−1).
    pub nb: u32,
    /// Sorted entries per accumulation thread (a power of two).
    pub chunk: u32,
    /// Accumulation threads per window: ⌈n / chunk⌉.
    pub nchunk: u32,
    /// Buckets per bucket-reduction thread (4..=64).
    pub bseg: u32,
    /// Bucket-reduction threads per window: nb / bseg.
    pub nbseg: u32,
    /// First-stage reduction group: min(256, nbseg).
    pub rgrp: u32,
    /// First-stage reduction groups per window: nbseg / rgrp.
    pub nred: u32,
    /// Batch-affine levels (0: XYZZ accumulation only) and their buffer geometry.
    pub alv: u32,
    /// Level-0 outputs per window at most, n/2 + min(n, nb): buffer A's stride.
    pub astr_a: u32,
    /// Level-1 outputs per window at most, n/4 + min(n, nb): buffer B's stride.
    pub astr_b: u32,
    /// Outputs of the last affine level per window at most, n/2^alv + min(n, nb).
    pub fstr: u32,
    /// Entries of buffer A (and of its precomputed inverses): max(astr_a, min(GROUP, nwin ·
    /// astr_a)).
    pub aent: u32,
    /// Entries of buffer B: max(astr_b, min(GROUP, nwin · astr_b)).
    pub aentb: u32,
    /// Windows per affine group: clamp(aent / astr_a, 1, nwin).
    pub agw: u32,
    /// Level-0 blocks per window: ⌈astr_a / (K · THREADS)⌉.
    pub ablk: u32,
    /// Final-pass entries per thread: a power of two ≥ 8, with agw · anchunk ≤ FINAL.
    pub achunk: u32,
    /// Final-pass threads per window: ⌈fstr / achunk⌉.
    pub anchunk: u32,
}

/// Most outputs of affine level `l` in one window (`pt_msm_aff_omax`).
fn aff_omax(n: u32, nb: u32, l: u32) -> u32 {
    (n >> (l + 1)) + n.min(nb)
}

fn log2_ceil(n: u64) -> u32 {
    64 - (n - 1).leading_zeros()
}

/// The narrowest window a configuration takes, and so the most windows an MSM has.
const WINDOW_MIN: u32 = 5;
/// The most windows an MSM has: ⌈255 / 5⌉, at the narrowest window; bounds G2's window sums.
pub const WINDOWS_MAX: usize = 255usize.div_ceil(WINDOW_MIN as usize);

/// The default window for an MSM of `m` points: ceil(log2 m) − 4, within 5..=22.
fn window(m: u64) -> u32 {
    (log2_ceil(m.max(2)) as i64 - 4).clamp(WINDOW_MIN as i64, 22) as u32
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
        Config::sized_with(n, terms, batch_affine::enabled())
    }

    /// `sized` for G2, which has no batch-affine path (`pt_msm_config_for(.., levels = 0)`).
    pub fn g2(n: usize, terms: usize) -> Config {
        Config::sized_with(n, terms, false)
    }

    fn sized_with(n: usize, terms: usize, affine: bool) -> Config {
        let n = n.max(1) as u64;
        let terms = (terms as u64).clamp(1, n);
        // Keys and sorted entries take windows × n × 8 bytes whatever the terms: at most
        // 6 bits narrower than an MSM of n, so a nearly empty tail of 2^27 scalars does not
        // ask for 51 windows (55 GB).
        let c = window(terms)
            .max(window(n).saturating_sub(6))
            .max(WINDOW_MIN);
        Config::with(n, c, 255u32.div_ceil(c), terms, affine)
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
        while affine && alv < PT_MSM_AFF_MAXLV && (nb as u64) << (alv + 1) <= work {
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
            k.aent = (ga.min(PT_MSM_AFF_GROUP as u64) as u32).max(k.astr_a);
            k.aentb = (gb.min(PT_MSM_AFF_GROUP as u64) as u32).max(k.astr_b);
            k.agw = (k.aent / k.astr_a).min(nwin);
            k.ablk = k.astr_a.div_ceil(PT_MSM_AFF_K * PT_MSM_AFF_THREADS);
            k.achunk = 8;
            while k.agw as u64 * k.fstr.div_ceil(k.achunk) as u64 > PT_MSM_AFF_FINAL as u64 {
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
    /// Bytes of the whole scratch allocation.
    pub total: usize,
}

/// Blocks of the plan a window (`pt_msm_plan_parts`).
fn plan_parts(nb: u32) -> u32 {
    nb.div_ceil(PT_MSM_PLAN_PART)
}

/// Bins of the shifted bases' scatter (`pt_msm_bin_count`).
fn bin_count(nb: u32) -> u32 {
    nb.div_ceil(PT_MSM_BIN)
}

fn align(x: usize) -> usize {
    (x + 255) & !255
}

impl Layout {
    /// For `n` entries of a configuration `k` over XYZZ points of `point` bytes (G1's or G2's).
    pub fn new(n: usize, k: &Config, point: usize) -> Layout {
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
        let bsum = take(nwin * nb * point);
        let head = take(nwin * nchunk * point);
        let tail = take(nwin * nchunk * point);
        let segs = take(nwin * k.nbseg as usize * point);
        let red = take(nwin * k.nred as usize * point);
        let wins = take(nwin * point);
        let aff = k.alv != 0;
        let on = |b: bool, bytes: usize| if b { bytes } else { 0 };
        let (aent, alv) = (k.aent as usize, k.alv as usize);
        let ends = (k.agw as usize * nb).max(aent / 8);
        let aend = take(on(aff, 4 * alv * ends));
        let abuf = take(on(aff, AFFINE * aent));
        let bbuf = take(on(k.alv >= 2, AFFINE * k.aentb as usize));
        let pre = take(on(aff, FP * aent));
        let per_blk = (PT_MSM_AFF_K * PT_MSM_AFF_THREADS) as usize;
        let tp = take(on(
            aff,
            FP * (aent / PT_MSM_AFF_K as usize + 256 * PT_MSM_AFF_THREADS as usize),
        ));
        let bp = take(on(aff, FP * (aent / per_blk + 256)));
        let ahead = take(on(aff, XYZZ * PT_MSM_AFF_FINAL as usize));
        let atail = take(on(aff, XYZZ * PT_MSM_AFF_FINAL as usize));
        let aedge = take(on(aff, 4 * PT_MSM_AFF_FINAL as usize));
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
    Layout::new(n, &Config::sized(n, terms), XYZZ).total
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let xyzz =
            Layout::new(1 << 24, &Config::with_affine(1 << 24, false), XYZZ).total as f64 / 1e9;
        assert!((3.0..3.6).contains(&xyzz), "{xyzz}");
        let aff = Config::with_affine(1 << 24, true);
        let gb = Layout::new(1 << 24, &aff, XYZZ).total as f64 / 1e9;
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
            assert_eq!(Layout::new(n, &k, XYZZ).total, total, "{n}");
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
                let per_blk = PT_MSM_AFF_K * PT_MSM_AFF_THREADS;
                assert!(k.agw >= 1 && k.agw <= k.nwin);
                assert!(k.agw as u64 * k.astr_a as u64 <= k.aent as u64, "{n}: A");
                assert!(k.agw as u64 * k.astr_b as u64 <= k.aentb as u64, "{n}: B");
                let tp = k.agw as u64 * k.ablk as u64 * PT_MSM_AFF_THREADS as u64;
                assert!(
                    tp <= (k.aent / PT_MSM_AFF_K + 256 * PT_MSM_AFF_THREADS) as u64,
                    "{n}: tp"
                );
                assert!(k.agw * k.ablk <= k.aent / per_blk + 256, "{n}: bp");
                assert!(
                    k.agw as u64 * k.anchunk as u64 <= PT_MSM_AFF_FINAL as u64,
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
        assert!(
            Layout::new(n, &Config::sized(n, 1), XYZZ).total
                < 2 * Layout::new(n, &full, XYZZ).total
        );
        assert_eq!(Config::sized(1000, 0).c, 5);
    }
}
