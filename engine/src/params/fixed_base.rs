//! Fixed-base scalar multiplication with window tables: setup multiplies one generator by
//! millions of scalars, so a table of every window's multiples turns each product into one
//! mixed addition a window and no doublings. Digits are signed (a negated table entry is free
//! in affine form), so a window of w bits needs 2^(w−1) entries; large setups take 16-bit
//! windows (16 additions a product, a 50 MB G1 table), small ones 8-bit windows, whose table
//! costs almost nothing to build.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::{prime::PrimeCurveAffine, Group};

use crate::curve;

/// Products from which a 16-bit table pays for its ~half a million additions.
const WIDE_FROM: usize = 1 << 18;

/// table[w · half + d − 1] = d · 2^(bits·w) · G for d in 1..=half, half = 2^(bits−1).
pub struct FixedBase<G: TableCurve> {
    table: Vec<G::Affine>,
    bits: usize,
}

/// A group whose fixed-base tables hold affine points that convert from projective in batches.
pub trait TableCurve:
    Group<Scalar = Scalar> + Copy + Send + Sync + for<'a> std::ops::AddAssign<&'a Self::Affine>
{
    /// The affine form of the table's points and of the products.
    type Affine: PrimeCurveAffine
        + Copy
        + Send
        + Sync
        + Default
        + PartialEq
        + crate::hostmem::PlainData
        + std::ops::Neg<Output = Self::Affine>;
    /// Converts every point of `p` to affine into `out` (of the same length), with one inversion.
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
    /// A table sized for about `products` multiplications.
    pub fn new(base: G, products: usize) -> Self {
        let bits = if products >= WIDE_FROM { 16 } else { 8 };
        let half = 1usize << (bits - 1);
        let windows = windows(bits);
        // Each window's base is 2^bits times the last one's; the windows' entries are then
        // independent chains (a sequential 16-bit G2 table took seconds of a large setup).
        let mut bases = vec![base];
        for _ in 1..windows {
            let mut b = *bases.last().expect("one base at least");
            for _ in 0..bits {
                b = b.double();
            }
            bases.push(b);
        }
        use rayon::prelude::*;
        let proj: Vec<G> = bases
            .par_iter()
            .flat_map_iter(|wb| {
                std::iter::successors(Some(*wb), move |acc| Some(*acc + wb)).take(half)
            })
            .collect();
        let mut table = vec![G::Affine::default(); proj.len()];
        // In parallel pieces: a 16-bit G2 table is half a million points.
        table
            .par_chunks_mut(4096)
            .zip(proj.par_chunks(4096))
            .for_each(|(t, p)| G::batch_to_affine(p, t));
        FixedBase { table, bits }
    }

    /// The table: entry w · 2^(bits−1) + d − 1 is d · 2^(bits·w) · G.
    pub fn table(&self) -> &[G::Affine] {
        &self.table
    }

    /// Bits per window.
    pub fn bits(&self) -> usize {
        self.bits
    }

    /// s · G, one table addition per window with signed digits.
    pub fn mul(&self, s: &Scalar) -> G {
        let bytes = s.to_bytes_le();
        let half = 1i64 << (self.bits - 1);
        let mut acc = G::identity();
        let mut carry = 0i64;
        for w in 0..windows(self.bits) {
            let mut d = digit(&bytes, w * self.bits, self.bits) as i64 + carry;
            carry = 0;
            if d > half {
                d -= 2 * half;
                carry = 1;
            }
            let base = w * half as usize;
            if d > 0 {
                acc += &self.table[base + d as usize - 1];
            } else if d < 0 {
                acc += &-self.table[base + (-d) as usize - 1];
            }
        }
        debug_assert_eq!(carry, 0, "scalars are below 2^255");
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

/// Windows of a 255-bit scalar, one more than its bits need so the last carry has a place.
pub fn windows(bits: usize) -> usize {
    255usize.div_ceil(bits) + usize::from(255 % bits == 0)
}

/// `bits` bits of the little-endian `bytes` from bit `at` (zeros past the end).
fn digit(bytes: &[u8; 32], at: usize, bits: usize) -> u32 {
    let mut v = 0u32;
    for i in 0..bits.div_ceil(8) + 1 {
        let byte = bytes.get(at / 8 + i).copied().unwrap_or(0) as u32;
        v |= byte << (8 * i);
    }
    (v >> (at % 8)) & ((1 << bits) - 1)
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
        // Both window widths; scalars whose windows all carry (r − 1, 2^k − 1) included.
        for products in [1, WIDE_FROM] {
            let table = FixedBase::<G1Projective>::new(g, products);
            let ones = Scalar::from(u64::MAX) * Scalar::from(u64::MAX);
            for s in [
                Scalar::ZERO,
                Scalar::ONE,
                -Scalar::ONE,
                Scalar::from(0x8000u64),
                Scalar::from(0xffffu64),
                ones,
                Scalar::random(&mut rng),
                Scalar::random(&mut rng),
            ] {
                assert_eq!(table.mul(&s), g * s);
            }
        }
        let h = G2Projective::generator();
        let t2 = FixedBase::<G2Projective>::new(h, 1);
        let s = Scalar::random(&mut rng);
        assert_eq!(t2.mul(&s), h * s);
    }
}
