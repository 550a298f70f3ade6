//! The synthetic PoRep-shaped workload.
//!
//! Rows fill a 2^k domain together with the public inputs (the constant one and
//! `PUBLIC_INPUTS` values): `2^k − PUBLIC_INPUTS − 1` constraints, and every row introduces
//! exactly one aux variable. A row's kind and operands are a pure function of (k, row), so all
//! partitions share one shape; the witness is a pure function of (seed, variable), so rows can
//! be evaluated in parallel in any order. The mix (kept stable: GPU targets are measured on it):
//!
//! | kind | share | row                          | new variable        | terms A/B/C |
//! |------|-------|------------------------------|---------------------|-------------|
//! | src  | 25 %  | w · (1 − w) = 0              | random bit          | 1 / 2 / 0   |
//! | xor  | 30 %  | 2x · y = x + y − w           | x ⊕ y (bits)        | 1 / 1 / 3   |
//! | mux  | 30 %  | c · (p − q) = w − q          | c ? p : q (bits)    | 1 / 2 / 2   |
//! | lin  | 14 %  | (Σ₁₃ kᵢ·bᵢ) · (y + 1) = w − z | full width          | 13 / 2 / 2  |
//! | pack |  1 %  | (Σ₃₂ 2ⁱ·sᵢ) · 1 = w          | 32-bit value        | 32 / 1 / 1  |
//!
//! plus one `input · 1 = w` row per public input. Operands of xor, mux and pack, and y, z of
//! lin, are src variables; the bᵢ of lin are any bit variable. So 85 % of the witness is bits
//! (half zeros, half ones), 15 % full width; rows average 3.0 terms in A, 1.7 in B, 1.8 in C,
//! 1 % of rows are dense (32 terms). A touches ~85 % of aux, B only the src variables (~25 %).

mod evaluate;
mod structure;
mod witness;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::precompiled;
use super::{par_columns, par_columns_into, Assignment, Density, Shape};
use structure::*;

/// Bumped whenever the mix changes: it is part of the params cache key.
pub const VERSION: u64 = 2;
/// Public inputs besides the constant one.
pub const PUBLIC_INPUTS: usize = 2;
const LIN_TERMS: u64 = 13;
const PACK_BITS: u64 = 32;

/// SplitMix64 finaliser: a fast, well-mixed hash of one word.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn mix3(a: u64, b: u64, c: u64) -> u64 {
    mix(a ^ mix(b ^ mix(c)))
}

/// One partition of the synthetic workload: the shape from `k`, the witness from `seed`.
#[derive(Clone, Debug)]
pub struct SyntheticCircuit {
    k: u32,
    seed: u64,
    rows: usize,
    st: Arc<Structure>,
}

/// The shape of the synthetic circuit of size 2^k, without building it.
pub fn shape(k: u32) -> Shape {
    let rows = (1usize << k) - PUBLIC_INPUTS - 1;
    let digest = super::shape::hex(&sha2_of(&format!(
        "provetop synthetic v{VERSION} k{k} inputs{PUBLIC_INPUTS}"
    )));
    Shape {
        num_inputs: PUBLIC_INPUTS + 1,
        num_aux: rows,
        num_constraints: rows,
        digest,
    }
}

fn sha2_of(s: &str) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(s.as_bytes()).to_vec()
}

impl Circuit<Scalar> for SyntheticCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let inputs = (0..PUBLIC_INPUTS)
            .map(|i| cs.alloc_input(|| format!("input {i}"), || Ok(self.input_value(i))))
            .collect::<Result<Vec<_>, _>>()?;
        let bits = self.bits();
        debug_assert!(inputs
            .iter()
            .enumerate()
            .all(|(i, v)| v.get_unchecked() == Index::Input(i + 1)));
        for j in 0..self.rows {
            cs.alloc(|| "w", || Ok(self.value(j, &bits)))?;
        }
        for j in 0..self.rows {
            let row = self.row(j);
            cs.enforce(|| "row", |_| row.a.lc(), |_| row.b.lc(), |_| row.c.lc());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::{is_satisfied, synthesize_generic};

    #[test]
    fn parallel_synthesis_equals_the_circuit_path() {
        for k in [4, 6, 10] {
            let c = SyntheticCircuit::new(k, 42);
            let fast = c.synthesize_parallel();
            let slow = synthesize_generic(c.clone()).unwrap();
            assert_eq!(fast, slow, "k = {k}");
            assert_eq!(is_satisfied(&fast), None);
            assert_eq!(fast.num_rows(), 1 << k, "rows plus inputs fill the domain");
        }
    }

    #[test]
    fn mix_is_as_documented() {
        let c = SyntheticCircuit::new(14, 7);
        let asg = c.synthesize_parallel();
        let n = asg.aux.len() as f64;
        let zeros = asg.aux.iter().filter(|v| bool::from(v.is_zero())).count() as f64;
        let ones = asg.aux.iter().filter(|v| **v == Scalar::ONE).count() as f64;
        let bits = (zeros + ones) / n;
        assert!((0.83..0.88).contains(&bits), "bits {bits}");
        assert!((0.38..0.47).contains(&(zeros / n)), "zeros {}", zeros / n);
        let rows: Vec<Row> = (0..c.rows).map(|j| c.row(j)).collect();
        let avg =
            |f: fn(&Row) -> usize| rows.iter().map(f).sum::<usize>() as f64 / rows.len() as f64;
        let (a, b, cc) = (
            avg(|r| r.a.0.len()),
            avg(|r| r.b.0.len()),
            avg(|r| r.c.0.len()),
        );
        assert!((2.7..3.3).contains(&a), "A terms {a}");
        assert!((1.5..2.0).contains(&b), "B terms {b}");
        assert!((1.5..2.1).contains(&cc), "C terms {cc}");
        let dense = rows.iter().filter(|r| r.a.0.len() >= 30).count() as f64 / rows.len() as f64;
        assert!((0.005..0.015).contains(&dense), "dense rows {dense}");
    }

    /// A digest of one partition's A, B, C and witness, to be updated only with `VERSION`: the
    /// parameter cache is keyed by the version, so a silent change of the circuit would leave
    /// cached parameters that no longer fit it.
    fn digest(asg: &Assignment) -> String {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        for v in [&asg.a, &asg.b, &asg.c, &asg.aux, &asg.input] {
            for x in v.iter() {
                h.update(x.to_bytes_le());
            }
        }
        crate::circuit::shape::hex(&h.finalize())
    }

    #[test]
    fn the_circuit_is_what_version_names() {
        let asg = SyntheticCircuit::new(12, 42).synthesize_parallel();
        assert_eq!(
            digest(&asg),
            "068b12aa23b727699ce54f9ede6a8491e35a5b7bcb5de69b4679aa5bb680ec49"
        );
    }

    #[test]
    fn seeds_change_the_witness_not_the_shape() {
        let (x, y) = (SyntheticCircuit::new(8, 1), SyntheticCircuit::new(8, 2));
        assert_eq!(
            crate::circuit::Shape::of(x.clone()).unwrap(),
            crate::circuit::Shape::of(y.clone()).unwrap()
        );
        assert_ne!(x.synthesize_parallel().aux, y.synthesize_parallel().aux);
    }
}
