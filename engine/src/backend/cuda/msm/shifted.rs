//! Shifted bases (cuda/msm/shifted.cuh): W = ⌈255/c⌉ copies of every base, 2^(c·w)·P, made
//! once on the device (the executor makes them of H's query), so an MSM over them runs every
//! window in one set of buckets (the Pippenger launch's `shifted` path).

use anyhow::Result;
use cudarc::driver::CudaStream;

use super::super::gpu::{Arg, Gpu};
use super::{Config, Layout, AFFINE, XYZZ};

/// Precomputed shifted bases (cuda/msm/shifted.cuh): W = ⌈255/c⌉ copies of every base,
/// 2^(c·w)·P, so all windows share one set of buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shifted {
    /// Window width in bits (8..=24).
    pub c: u32,
    /// Copies of every base: ⌈255 / c⌉.
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

/// Scratch bytes of an MSM of `n` scalars over shifted bases.
pub fn shifted_scratch_bytes(n: usize, sh: Shifted) -> usize {
    Layout::new(n * sh.windows as usize, &Config::shifted(n, sh), XYZZ).total
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
