//! Multi-scalar multiplication on the CPU, shaped for mostly-bit witnesses: zero scalars are
//! skipped, bases whose scalar is one are summed with batch affine additions, and only the
//! rest goes through Pippenger (blst's, one chunk per thread of the current pool).

use blst::blst_scalar;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use rayon::prelude::*;
use std::time::{Duration, Instant};

use crate::curve;

/// Time spent in the batch addition of the scalar-one bases, reported as its own stage.
#[derive(Default, Debug, Clone, Copy)]
pub struct MsmSplit {
    /// Wall time of splitting the scalars and summing the scalar-one bases.
    pub batch_add: Duration,
    /// Scalars equal to one, whose bases were summed without Pippenger.
    pub ones: usize,
    /// Scalars equal to zero, whose bases were skipped.
    pub zeros: usize,
}

/// A group whose affine points blst can batch-add and run Pippenger on.
pub trait MsmCurve: Group<Scalar = Scalar> + Copy + Send + Sync {
    /// The affine form its points are stored in.
    type Affine: Copy + Send + Sync;
    /// The sum of `points`, by blst's batch affine addition.
    fn sum_affine(points: &[Self::Affine]) -> Self;
    /// Σ scalars_i · points_i by blst's Pippenger; the slices have equal lengths.
    fn pippenger(points: &[Self::Affine], scalars: &[blst_scalar]) -> Self;
}

impl MsmCurve for G1Projective {
    type Affine = G1Affine;
    fn sum_affine(points: &[G1Affine]) -> Self {
        curve::g1_sum(points)
    }
    fn pippenger(points: &[G1Affine], scalars: &[blst_scalar]) -> Self {
        curve::g1_pippenger(points, scalars)
    }
}

impl MsmCurve for G2Projective {
    type Affine = G2Affine;
    fn sum_affine(points: &[G2Affine]) -> Self {
        curve::g2_sum(points)
    }
    fn pippenger(points: &[G2Affine], scalars: &[blst_scalar]) -> Self {
        curve::g2_pippenger(points, scalars)
    }
}

/// Points per parallel piece: one piece a thread (each piece pays its own bucket sums, so
/// fewer, larger pieces win: msm_h at 2^20 on two threads 4.51 -> 4.27 s against two a
/// thread), and never so small that Pippenger stops paying.
fn piece(n: usize) -> usize {
    n.div_ceil(rayon::current_num_threads()).max(1 << 12)
}

/// One parallel piece of an MSM: the scalar-one bases, the other bases with their encoded
/// scalars, and how many scalars were zero.
struct Piece<A> {
    ones: Vec<A>,
    rest: Vec<A>,
    scalars: Vec<blst_scalar>,
    zeros: usize,
}

/// Σ bases[i] · scalars[i] on the current rayon pool.
pub fn msm<G: MsmCurve>(bases: &[G::Affine], scalars: &[Scalar]) -> (G, MsmSplit) {
    assert_eq!(bases.len(), scalars.len(), "one scalar per base");
    let t0 = Instant::now();
    // Split in parallel pieces: ones gathered, the rest encoded for blst.
    let pieces: Vec<Piece<G::Affine>> = bases
        .par_chunks(piece(bases.len()))
        .zip(scalars.par_chunks(piece(bases.len())))
        .map(|(b, s)| {
            let mut piece = Piece {
                ones: vec![],
                rest: vec![],
                scalars: vec![],
                zeros: 0,
            };
            for (p, x) in b.iter().zip(s) {
                if bool::from(x.is_zero()) {
                    piece.zeros += 1;
                } else if *x == Scalar::ONE {
                    piece.ones.push(*p);
                } else {
                    piece.rest.push(*p);
                    piece.scalars.push(curve::scalar_to_bytes(x));
                }
            }
            piece
        })
        .collect();
    let split_time = t0.elapsed();
    let t1 = Instant::now();
    let ones_sum: G = pieces
        .par_iter()
        .map(|p| G::sum_affine(&p.ones))
        .reduce(G::identity, |a, b| a + b);
    let batch_add = t1.elapsed() + split_time;
    let tail: G = pieces
        .par_iter()
        .map(|p| G::pippenger(&p.rest, &p.scalars))
        .reduce(G::identity, |a, b| a + b);
    let split = MsmSplit {
        batch_add,
        ones: pieces.iter().map(|p| p.ones.len()).sum(),
        zeros: pieces.iter().map(|p| p.zeros).sum(),
    };
    (ones_sum + tail, split)
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::{prime::PrimeCurveAffine, Curve};
    use rand::SeedableRng;

    #[test]
    fn msm_equals_the_naive_sum_with_zeros_and_ones() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let n = 5000;
        let bases: Vec<G1Affine> = (0..n)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        let g2: Vec<G2Affine> = (0..n)
            .map(|_| G2Projective::random(&mut rng).to_affine())
            .collect();
        let scalars: Vec<Scalar> = (0..n)
            .map(|i| match i % 4 {
                0 => Scalar::ZERO,
                1 => Scalar::ONE,
                2 => -Scalar::ONE,
                _ => Scalar::random(&mut rng),
            })
            .collect();
        let want: G1Projective = bases.iter().zip(&scalars).map(|(b, s)| *b * s).sum();
        let (got, split) = msm::<G1Projective>(&bases, &scalars);
        assert_eq!(got, want);
        assert_eq!((split.zeros, split.ones), (1250, 1250));
        let want2: G2Projective = g2.iter().zip(&scalars).map(|(b, s)| *b * s).sum();
        assert_eq!(msm::<G2Projective>(&g2, &scalars).0, want2);
        // The point at infinity among the bases.
        let mut with_inf = bases.clone();
        with_inf[3] = G1Affine::identity();
        with_inf[5] = G1Affine::identity();
        let want3: G1Projective = with_inf.iter().zip(&scalars).map(|(b, s)| *b * s).sum();
        assert_eq!(msm::<G1Projective>(&with_inf, &scalars).0, want3);
    }
}
