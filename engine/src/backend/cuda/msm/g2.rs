//! G2's Pippenger MSM (B in G2's full-width scalars, cuda/README.md "MSM (G2, Pippenger)"): G1's
//! sort and launch sequence over 384-byte XYZZ points up to the window sums, which come back
//! as blst_p2 for the host to combine (`g2_combine`: ~250 doublings, ~0.3 ms of one core).

use anyhow::Result;
use blstrs::G2Projective;
use cudarc::driver::CudaStream;
use group::Group;

use super::super::gpu::{Arg, Gpu};
use super::curve::{G2, G2_XYZZ};
use super::pippenger::windows;
use super::{g2_jacobian, Config, Layout, G2_JACOBIAN};

/// What the host needs to combine a G2 MSM's window sums: how many, and their width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct G2Windows {
    /// Window sums, one per window of `c` bits.
    pub count: usize,
    /// Window width in bits.
    pub c: u32,
}

impl G2Windows {
    /// Bytes of the window sums as blst_p2.
    pub fn bytes(&self) -> usize {
        self.count * G2_JACOBIAN
    }
}

/// Scratch bytes `g2_enqueue` needs for `n` scalars of which about `terms` are neither 0 nor 1.
pub fn g2_scratch_bytes(n: usize, terms: usize) -> usize {
    Layout::new(n, &Config::g2(n, terms), G2_XYZZ).total
}

/// Enqueues Σ points[i]·scalars[i] over `n` device-resident G2 points (blst_p2_affine) and
/// Montgomery scalars, about `terms` of them neither 0 nor 1 (any count is correct, it only
/// sizes the windows): its window sums land at `out` as blst_p2, at most `WINDOWS_MAX` of them,
/// for `g2_combine` once they are copied back.
pub fn g2_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    (points, scalars): (u64, u64),
    (n, terms): (usize, usize),
    (scratch, out): (u64, u64),
) -> Result<G2Windows> {
    let k = Config::g2(n, terms);
    let wins = windows(gpu, s, &G2, (points, None), (scalars, n), &k, scratch)?;
    to_jacobian(gpu, s, wins, k.nwin, out)?;
    Ok(G2Windows {
        count: k.nwin as usize,
        c: k.c,
    })
}

/// `pt_g2_to_jac`: `count` XYZZ points at `xyzz` as blst_p2 at `out`.
pub(super) fn to_jacobian(
    gpu: &Gpu,
    s: &CudaStream,
    xyzz: u64,
    count: u32,
    out: u64,
) -> Result<()> {
    use Arg::{Ptr, U32};
    let args = [Ptr(xyzz), U32(count), Ptr(out)];
    gpu.launch(s, &gpu.f.g2_to_jac, (count.div_ceil(128), 1), 128, 0, &args)
}

/// Σ 2^(c·w)·wins[w] from the window sums as the device wrote them (blst_p2, window 0 first):
/// Horner from the top window, c doublings between windows.
pub fn g2_combine(wins: &[u8], w: G2Windows) -> G2Projective {
    assert_eq!(wins.len(), w.bytes());
    wins.chunks_exact(G2_JACOBIAN)
        .rev()
        .map(g2_jacobian)
        .fold(G2Projective::identity(), |acc, win| {
            (0..w.c).fold(acc, |a, _| a.double()) + win
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar;
    use ff::Field;
    use rand::SeedableRng;

    fn bytes(p: &G2Projective) -> Vec<u8> {
        // SAFETY: G2Projective is repr(transparent) over blst_p2, 288 bytes.
        let raw = unsafe { std::slice::from_raw_parts(p as *const _ as *const u8, G2_JACOBIAN) };
        raw.to_vec()
    }

    #[test]
    fn window_sums_combine_into_the_msm() {
        // Σ 2^(c·w)·P_w for random P_w, an infinity among them, against scalar multiples.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for (count, c) in [(1usize, 16u32), (3, 5), (13, 20), (51, 5)] {
            let pts: Vec<G2Projective> = (0..count)
                .map(|i| match i {
                    1 => G2Projective::identity(),
                    _ => G2Projective::random(&mut rng),
                })
                .collect();
            let wins: Vec<u8> = pts.iter().flat_map(bytes).collect();
            let shift = Scalar::from(2u64).pow_vartime([c as u64]);
            let (want, _) = pts
                .iter()
                .fold((G2Projective::identity(), Scalar::ONE), |(sum, f), p| {
                    (sum + *p * f, f * shift)
                });
            assert_eq!(
                g2_combine(&wins, G2Windows { count, c }),
                want,
                "{count} windows of {c} bits"
            );
        }
    }

    #[test]
    fn g2_tails_take_no_affine_levels_and_the_windows_fit_the_results() {
        for (n, terms) in [
            (1usize, 1usize),
            (4097, 100),
            (1 << 20, 1 << 20),
            (1 << 27, 5000),
        ] {
            let k = Config::g2(n, terms);
            assert_eq!(k.alv, 0, "{n}");
            assert!(k.nwin as usize <= super::super::WINDOWS_MAX, "{n}");
            let mut g1 = Config::sized(n, terms);
            g1.alv = 0;
            assert_eq!((k.c, k.chunk, k.nchunk), (g1.c, g1.chunk, g1.nchunk), "{n}");
        }
        // The README's sizes: 2^16 c 12, 22 windows, 68 MB; 2^20 c 16, 16 windows, 567 MB.
        for (n, c, nwin, mb) in [(1usize << 16, 12, 22, 68.0), (1 << 20, 16, 16, 567.0)] {
            let k = Config::g2(n, n);
            assert_eq!((k.c, k.nwin), (c, nwin), "{n}");
            let got = g2_scratch_bytes(n, n) as f64 / 1e6;
            assert!((got - mb).abs() < 0.02 * mb, "{n}: {got} MB");
        }
    }
}
