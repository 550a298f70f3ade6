//! Number-theoretic transforms over BLS12-381's scalar field, and the Groth16 H polynomial: a
//! leaf that setup (Lagrange values at tau) and the cpu backend (H) both use.
//!
//! One forward twiddle table per domain; the inverse transform is the forward one on the
//! index-reversed output (ω^−ij = ω^(n−i)j), so no second table is kept.

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

/// A 2^k evaluation domain.
pub struct Domain {
    log2: u32,
    /// ω^i for i in 0..n/2.
    twiddles: Vec<Scalar>,
}

/// Butterflies below this many per chunk are not worth splitting across threads.
const MIN_PAR: usize = 1 << 10;

impl Domain {
    /// Builds the twiddle table of the 2^`log2` domain; panics past the field's two-adicity (2^32).
    pub fn new(log2: u32) -> Self {
        assert!(
            log2 <= Scalar::S,
            "domain 2^{log2} exceeds the field's two-adicity"
        );
        let n = 1usize << log2;
        let omega = Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - log2)]);
        let mut twiddles = vec![Scalar::ONE; (n / 2).max(1)];
        const CHUNK: usize = 4096;
        twiddles
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                let mut w = omega.pow_vartime([(c * CHUNK) as u64]);
                for t in chunk {
                    *t = w;
                    w *= omega;
                }
            });
        Domain { log2, twiddles }
    }

    /// Points in the domain, 2^`log2`.
    pub fn size(&self) -> usize {
        1 << self.log2
    }

    /// log2 of the domain's size.
    pub fn log2(&self) -> u32 {
        self.log2
    }

    /// y_i = Σ_j x_j ω^ij, natural order in and out.
    pub fn ntt(&self, x: &mut [Scalar]) {
        let n = self.size();
        assert_eq!(x.len(), n);
        bit_reverse(x, self.log2);
        let mut half = 1;
        while half < n {
            let stride = n / (2 * half);
            let tw = &self.twiddles;
            let butterfly = |j: usize, lo: &mut Scalar, hi: &mut Scalar| {
                let t = if j == 0 { *hi } else { *hi * tw[j * stride] };
                *hi = *lo - t;
                *lo += t;
            };
            x.par_chunks_mut(2 * half)
                .with_min_len((MIN_PAR / half).max(1))
                .for_each(|chunk| {
                    let (lo, hi) = chunk.split_at_mut(half);
                    if half >= MIN_PAR {
                        lo.par_iter_mut()
                            .zip(hi.par_iter_mut())
                            .enumerate()
                            .with_min_len(MIN_PAR)
                            .for_each(|(j, (l, h))| butterfly(j, l, h));
                    } else {
                        lo.iter_mut()
                            .zip(hi.iter_mut())
                            .enumerate()
                            .for_each(|(j, (l, h))| butterfly(j, l, h));
                    }
                });
            half *= 2;
        }
    }

    /// n · x_j = Σ_i y_i ω^−ij: the inverse transform without the 1/n factor.
    fn intt_unscaled(&self, y: &mut [Scalar]) {
        self.ntt(y);
        y[1..].reverse();
    }

    /// x_j = n⁻¹ Σ_i y_i ω^−ij.
    pub fn intt(&self, y: &mut [Scalar]) {
        self.intt_unscaled(y);
        let n_inv = self.n_inv();
        y.par_iter_mut()
            .with_min_len(MIN_PAR)
            .for_each(|v| *v *= n_inv);
    }

    /// Every Lagrange basis polynomial of the domain at `tau`, L_i(τ) = (τ^n − 1)/n · ω^i/(τ − ω^i):
    /// the inverse transform of τ's powers, in one pass and one batch inversion a chunk (at 2^27
    /// the transform took 15 s of 16 cores); None when τ lies in the domain.
    pub fn lagrange_at(&self, tau: Scalar) -> Option<Vec<Scalar>> {
        let n = self.size();
        let scale = (tau.pow_vartime([n as u64]) - Scalar::ONE) * self.n_inv();
        if bool::from(scale.is_zero()) {
            return None;
        }
        // ω^i from the half table: ω^(i + n/2) = −ω^i.
        let half = self.twiddles.len();
        let omega = |i: usize| match (n, i < half) {
            (1, _) => Scalar::ONE,
            (_, true) => self.twiddles[i],
            (_, false) => -self.twiddles[i - half],
        };
        let mut out = vec![Scalar::ZERO; n];
        out.par_chunks_mut(MIN_PAR)
            .enumerate()
            .for_each(|(c, chunk)| {
                let at = c * MIN_PAR;
                // Prefix products of the denominators, one inversion, then back to front.
                let mut acc = Scalar::ONE;
                for (k, v) in chunk.iter_mut().enumerate() {
                    *v = acc;
                    acc *= tau - omega(at + k);
                }
                let mut inv = acc.invert().unwrap();
                for (k, v) in chunk.iter_mut().enumerate().rev() {
                    let d = tau - omega(at + k);
                    *v *= inv * scale * omega(at + k);
                    inv *= d;
                }
            });
        Some(out)
    }

    fn n_inv(&self) -> Scalar {
        Scalar::from(self.size() as u64).invert().unwrap()
    }

    /// The H polynomial of Groth16: (A·B − C)/Z evaluated on the coset g·⟨ω⟩, back to
    /// coefficients. Takes evaluations over the domain, returns n − 1 coefficients.
    pub fn h_poly(
        &self,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Vec<Scalar> {
        let n = self.size();
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let n_inv = self.n_inv();
        let to_coset = |v: &mut Vec<Scalar>| {
            v.resize(n, Scalar::ZERO);
            self.intt_unscaled(v);
            // 1/n of the inverse transform folded into the coset shift.
            distribute_powers(v, g, n_inv);
            self.ntt(v);
        };
        rayon::join(
            || to_coset(a),
            || rayon::join(|| to_coset(b), || to_coset(c)),
        );
        a.par_iter_mut()
            .zip(b.par_iter())
            .zip(c.par_iter())
            .with_min_len(MIN_PAR)
            .for_each(|((a, b), c)| *a = *a * b - c);
        // Z(g·ω^i) = g^n − 1 on the whole coset; fold 1/Z and 1/n into the last shift.
        let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
        self.intt_unscaled(a);
        distribute_powers(a, g.invert().unwrap(), z_inv * n_inv);
        let mut h = std::mem::take(a);
        h.truncate(n - 1);
        h
    }
}

/// v_i ← v_i · scale · g^i.
pub fn distribute_powers(v: &mut [Scalar], g: Scalar, scale: Scalar) {
    const CHUNK: usize = 4096;
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let mut p = g.pow_vartime([(c * CHUNK) as u64]) * scale;
        for x in chunk {
            *x *= p;
            p *= g;
        }
    });
}

fn bit_reverse(x: &mut [Scalar], log2: u32) {
    if log2 == 0 {
        return;
    }
    let shift = usize::BITS - log2;
    for i in 0..x.len() {
        let j = i.reverse_bits() >> shift;
        if i < j {
            x.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn lagrange_values_in_closed_form_are_the_inverse_transform_of_powers() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for log2 in [0, 1, 3, 10, 11, 13] {
            let d = Domain::new(log2);
            let tau = Scalar::random(&mut rng);
            let mut want: Vec<Scalar> =
                (0..d.size() as u64).map(|j| tau.pow_vartime([j])).collect();
            d.intt(&mut want);
            assert_eq!(d.lagrange_at(tau).unwrap(), want, "2^{log2}");
        }
        // A point of the domain has no such values.
        assert!(Domain::new(4)
            .lagrange_at(Domain::new(4).twiddles[3])
            .is_none());
    }

    fn naive(x: &[Scalar], omega: Scalar) -> Vec<Scalar> {
        (0..x.len())
            .map(|i| {
                let wi = omega.pow_vartime([i as u64]);
                x.iter().rev().fold(Scalar::ZERO, |acc, v| acc * wi + v)
            })
            .collect()
    }

    #[test]
    fn ntt_matches_the_definition_and_inverts() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for k in [0, 1, 2, 5, 8, 11, 12] {
            let d = Domain::new(k);
            let x: Vec<Scalar> = (0..d.size()).map(|_| Scalar::random(&mut rng)).collect();
            let mut y = x.clone();
            d.ntt(&mut y);
            if k <= 8 {
                let omega = Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - k)]);
                assert_eq!(y, naive(&x, omega), "k = {k}");
            }
            d.intt(&mut y);
            assert_eq!(y, x, "k = {k}");
        }
    }

    #[test]
    fn h_times_z_is_ab_minus_c() {
        // With a, b, c the evaluations of polynomials A, B, C: A·B − C = H·Z as polynomials.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let d = Domain::new(6);
        let n = d.size();
        let mut ev = || (0..n).map(|_| Scalar::random(&mut rng)).collect::<Vec<_>>();
        let (a0, b0) = (ev(), ev());
        // C = A·B on the domain, so A·B − C vanishes there and Z divides it.
        let c0: Vec<Scalar> = a0.iter().zip(&b0).map(|(a, b)| a * b).collect();
        let (mut a, mut b, mut c) = (a0.clone(), b0.clone(), c0.clone());
        let h = d.h_poly(&mut a, &mut b, &mut c);
        assert_eq!(h.len(), n - 1);
        let x = Scalar::random(&mut rng);
        let eval_coeffs = |v: &[Scalar]| v.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c);
        let coeffs = |mut v: Vec<Scalar>| {
            d.intt(&mut v);
            eval_coeffs(&v)
        };
        let lhs = coeffs(a0) * coeffs(b0) - coeffs(c0);
        let z = x.pow_vartime([n as u64]) - Scalar::ONE;
        assert_eq!(lhs, eval_coeffs(&h) * z);
    }
}
