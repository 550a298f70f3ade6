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
}

fn log2_ceil(n: u64) -> u32 {
    64 - (n - 1).leading_zeros()
}

impl Config {
    /// `pt_msm_make_config(n, 0, 0)`.
    pub fn new(n: usize) -> Config {
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
        Config {
            c,
            nwin,
            nb,
            chunk,
            nchunk,
            bseg,
            nbseg,
            rgrp,
            nred: nbseg / rgrp,
        }
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
            total: o,
        }
    }
}

/// Scratch bytes an MSM of `n` points needs.
pub fn scratch_bytes(n: usize) -> usize {
    Layout::new(n, &Config::new(n)).total
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
    let k = Config::new(n);
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
        // Scratch at 2^24 is about 3.3 GB (README).
        let gb = scratch_bytes(1 << 24) as f64 / 1e9;
        assert!((3.0..3.6).contains(&gb), "{gb}");
    }
}
