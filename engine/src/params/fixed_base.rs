//! Fixed-base scalar multiplication with window tables: setup multiplies one generator by
//! millions of scalars, so a table of every window's multiples turns each product into ~32
//! mixed additions and no doublings.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::{prime::PrimeCurveAffine, Group};

use crate::curve;

const WINDOW: usize = 8;
const WINDOWS: usize = 256usize.div_ceil(WINDOW);

/// table[w][d − 1] = d · 2^(8w) · G for d in 1..256.
pub struct FixedBase<G: TableCurve> {
    table: Vec<G::Affine>,
}

pub trait TableCurve:
    Group<Scalar = Scalar> + Copy + Send + Sync + for<'a> std::ops::AddAssign<&'a Self::Affine>
{
    type Affine: PrimeCurveAffine + Copy + Send + Sync + Default;
    fn batch_to_affine(p: &[Self], out: &mut [Self::Affine]);
}

impl TableCurve for G1Projective {
    type Affine = G1Affine;
    fn batch_to_affine(p: &[Self], out: &mut [G1Affine]) {
        curve::g1_batch_to_affine(p, out)
    }
}

impl TableCurve for G2Projective {
    type Affine = G2Affine;
    fn batch_to_affine(p: &[Self], out: &mut [G2Affine]) {
        curve::g2_batch_to_affine(p, out)
    }
}

impl<G: TableCurve> FixedBase<G> {
    pub fn new(base: G) -> Self {
        let mut proj = Vec::with_capacity(WINDOWS * 255);
        let mut window_base = base;
        for _ in 0..WINDOWS {
            let mut acc = window_base;
            for _ in 0..255 {
                proj.push(acc);
                acc += window_base;
            }
            // acc is now 256 · window_base, the next window's base.
            window_base = acc;
        }
        let mut table = vec![G::Affine::default(); proj.len()];
        G::batch_to_affine(&proj, &mut table);
        FixedBase { table }
    }

    pub fn mul(&self, s: &Scalar) -> G {
        let bytes = s.to_bytes_le();
        let mut acc = G::identity();
        for (w, &d) in bytes.iter().enumerate() {
            if d != 0 {
                acc += &self.table[w * 255 + d as usize - 1];
            }
        }
        acc
    }

    /// Multiplies the base by every scalar, in parallel chunks, straight to affine.
    /// `tick` is called with the number of products finished, for progress reports.
    pub fn mul_many(&self, scalars: &[Scalar], tick: &(dyn Fn(usize) + Sync)) -> Vec<G::Affine> {
        use rayon::prelude::*;
        const CHUNK: usize = 1024;
        let mut out = vec![G::Affine::default(); scalars.len()];
        out.par_chunks_mut(CHUNK)
            .zip(scalars.par_chunks(CHUNK))
            .for_each(|(out, scalars)| {
                let proj: Vec<G> = scalars.iter().map(|s| self.mul(s)).collect();
                G::batch_to_affine(&proj, out);
                tick(scalars.len());
            });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand::SeedableRng;

    #[test]
    fn table_product_equals_scalar_multiplication() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let g = G1Projective::generator() * Scalar::random(&mut rng);
        let table = FixedBase::<G1Projective>::new(g);
        for s in [
            Scalar::ZERO,
            Scalar::ONE,
            -Scalar::ONE,
            Scalar::random(&mut rng),
        ] {
            assert_eq!(table.mul(&s), g * s);
        }
        let h = G2Projective::generator();
        let t2 = FixedBase::<G2Projective>::new(h);
        let s = Scalar::random(&mut rng);
        assert_eq!(t2.mul(&s), h * s);
    }
}
