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

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{Assignment, Density, Shape};

/// Bumped whenever the mix changes: it is part of the params cache key.
pub const VERSION: u64 = 2;
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    /// Row i < PUBLIC_INPUTS copies public input i.
    Input,
    Src,
    Xor,
    Mux,
    Lin,
    Pack,
}

/// A variable of the synthetic circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Var {
    One,
    Input(usize),
    Aux(usize),
}

/// A linear combination with bellpepper's merge-on-insert semantics (the `Circuit` path).
#[derive(Default)]
struct Terms(Vec<(Var, Scalar)>);

impl Terms {
    fn add(mut self, var: Var, coeff: Scalar) -> Self {
        match self.0.iter_mut().find(|(v, _)| *v == var) {
            Some((_, c)) => *c += coeff,
            None => self.0.push((var, coeff)),
        }
        self
    }

    fn lc(&self) -> LinearCombination<Scalar> {
        self.0.iter().fold(LinearCombination::zero(), |lc, (v, c)| {
            let var = match *v {
                Var::One => Variable::new_unchecked(Index::Input(0)),
                Var::Input(i) => Variable::new_unchecked(Index::Input(i + 1)),
                Var::Aux(i) => Variable::new_unchecked(Index::Aux(i)),
            };
            lc + (*c, var)
        })
    }
}

struct Row {
    a: Terms,
    b: Terms,
    c: Terms,
}

/// One partition of the synthetic workload: the shape from `k`, the witness from `seed`.
#[derive(Clone, Debug)]
pub struct SyntheticCircuit {
    k: u32,
    seed: u64,
    rows: usize,
    structure: u64,
    /// The kind of every row, a pure function of (k, row), computed once in parallel.
    kinds: Arc<Vec<Kind>>,
    /// The rows of src variables, and of all bit variables: operands are drawn from these.
    srcs: Arc<Vec<u32>>,
    bit_rows: Arc<Vec<u32>>,
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

fn kind_of(structure: u64, row: usize) -> Kind {
    if row < PUBLIC_INPUTS {
        return Kind::Input;
    }
    // The first ordinary row is always a src, so there is always a src operand to draw.
    if row == PUBLIC_INPUTS {
        return Kind::Src;
    }
    match mix3(structure, row as u64, 0) % 1000 {
        0..250 => Kind::Src,
        250..550 => Kind::Xor,
        550..850 => Kind::Mux,
        850..990 => Kind::Lin,
        _ => Kind::Pack,
    }
}

fn bit_scalar(b: bool) -> Scalar {
    if b {
        Scalar::ONE
    } else {
        Scalar::ZERO
    }
}

fn is_src(k: Kind) -> bool {
    k == Kind::Src
}

fn is_bit(k: Kind) -> bool {
    matches!(k, Kind::Src | Kind::Xor | Kind::Mux)
}

impl SyntheticCircuit {
    pub fn new(k: u32, seed: u64) -> Self {
        let rows = (1usize << k) - PUBLIC_INPUTS - 1;
        let structure = mix3(VERSION, k as u64, 0x5eed);
        let kinds: Vec<Kind> = (0..rows)
            .into_par_iter()
            .map(|r| kind_of(structure, r))
            .collect();
        let rows_of = |want: fn(Kind) -> bool| -> Arc<Vec<u32>> {
            Arc::new(
                (0..rows as u32)
                    .into_par_iter()
                    .filter(|r| want(kinds[*r as usize]))
                    .collect(),
            )
        };
        let (srcs, bit_rows) = (rows_of(is_src), rows_of(is_bit));
        SyntheticCircuit {
            k,
            seed,
            rows,
            structure,
            kinds: Arc::new(kinds),
            srcs,
            bit_rows,
        }
    }

    pub fn shape(&self) -> Shape {
        shape(self.k)
    }

    /// The `salt`-th operand of `row`, uniform over `from`: one hash per operand.
    fn pick(&self, row: usize, salt: u64, from: &[u32]) -> usize {
        let h = mix(self.structure
            ^ (row as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ salt.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        from[(h % from.len() as u64) as usize] as usize
    }

    fn src(&self, row: usize, salt: u64) -> usize {
        self.pick(row, salt, &self.srcs)
    }

    fn bit(&self, row: usize, salt: u64) -> usize {
        self.pick(row, salt, &self.bit_rows)
    }

    fn src_bit(&self, j: usize) -> u64 {
        mix(self.seed ^ (j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) & 1
    }

    fn bit_value(&self, j: usize) -> u64 {
        match self.kinds[j] {
            Kind::Src => self.src_bit(j),
            Kind::Xor => self.src_bit(self.src(j, 0)) ^ self.src_bit(self.src(j, 1)),
            Kind::Mux => {
                let (c, p, q) = (self.src(j, 0), self.src(j, 1), self.src(j, 2));
                if self.src_bit(c) == 1 {
                    self.src_bit(p)
                } else {
                    self.src_bit(q)
                }
            }
            _ => unreachable!("not a bit variable"),
        }
    }

    fn input_value(&self, i: usize) -> Scalar {
        let limbs = [0, 1, 2, 3].map(|l| mix3(self.seed, 1 << 40 | i as u64, l));
        // Clear the top two bits so the integer is below the modulus.
        let limbs = [limbs[0], limbs[1], limbs[2], limbs[3] >> 2];
        Scalar::from_u64s_le(&limbs).unwrap()
    }

    fn lin_coeff(&self, row: usize, t: u64) -> u64 {
        mix3(self.structure, row as u64, 0x1000 + t) | 1
    }

    /// The value of aux variable `j`, given the bit values of every bit variable.
    fn value(&self, j: usize, bits: &[u8]) -> Scalar {
        match self.kinds[j] {
            Kind::Input => self.input_value(j),
            Kind::Src | Kind::Xor | Kind::Mux => bit_scalar(bits[j] == 1),
            Kind::Lin => {
                let sum = self.lin_sum(j, |x| bits[x] == 1);
                let y = bits[self.src(j, 0x200)] as u64 + 1;
                let z = bits[self.src(j, 0x201)] == 1;
                if y == 2 {
                    sum.double() + bit_scalar(z)
                } else {
                    sum + bit_scalar(z)
                }
            }
            Kind::Pack => Scalar::from(
                (0..PACK_BITS)
                    .map(|t| (bits[self.src(j, 0x300 + t)] as u64) << t)
                    .sum::<u64>(),
            ),
        }
    }

    /// Σ kₜ·bₜ over the 13 bit operands of lin row `j`: kₜ < 2^64, so the sum fits a u128
    /// and converts once.
    fn lin_sum(&self, j: usize, mut bit: impl FnMut(usize) -> bool) -> Scalar {
        let sum: u128 = (0..LIN_TERMS)
            .filter(|&t| bit(self.bit(j, 0x100 + t)))
            .map(|t| self.lin_coeff(j, t) as u128)
            .sum();
        Scalar::from_u64s_le(&[sum as u64, (sum >> 64) as u64, 0, 0]).unwrap()
    }

    /// Bit values of every bit variable (0 elsewhere): sources first, then the gates on them.
    fn bits(&self) -> Vec<u8> {
        (0..self.rows)
            .into_par_iter()
            .map(|j| {
                if is_bit(self.kinds[j]) {
                    self.bit_value(j) as u8
                } else {
                    0
                }
            })
            .collect()
    }

    fn row(&self, j: usize) -> Row {
        let one = Scalar::ONE;
        let w = Var::Aux(j);
        let t = Terms::default;
        match self.kinds[j] {
            Kind::Input => Row {
                a: t().add(Var::Input(j), one),
                b: t().add(Var::One, one),
                c: t().add(w, one),
            },
            Kind::Src => Row {
                a: t().add(w, one),
                b: t().add(Var::One, one).add(w, -one),
                c: t(),
            },
            Kind::Xor => {
                let (x, y) = (Var::Aux(self.src(j, 0)), Var::Aux(self.src(j, 1)));
                Row {
                    a: t().add(x, Scalar::from(2)),
                    b: t().add(y, one),
                    c: t().add(x, one).add(y, one).add(w, -one),
                }
            }
            Kind::Mux => {
                let c = Var::Aux(self.src(j, 0));
                let (p, q) = (Var::Aux(self.src(j, 1)), Var::Aux(self.src(j, 2)));
                Row {
                    a: t().add(c, one),
                    b: t().add(p, one).add(q, -one),
                    c: t().add(w, one).add(q, -one),
                }
            }
            Kind::Lin => {
                let a = (0..LIN_TERMS).fold(t(), |lc, i| {
                    lc.add(
                        Var::Aux(self.bit(j, 0x100 + i)),
                        Scalar::from(self.lin_coeff(j, i)),
                    )
                });
                let (y, z) = (Var::Aux(self.src(j, 0x200)), Var::Aux(self.src(j, 0x201)));
                Row {
                    a,
                    b: t().add(y, one).add(Var::One, one),
                    c: t().add(w, one).add(z, -one),
                }
            }
            Kind::Pack => {
                let a = (0..PACK_BITS).fold(t(), |lc, i| {
                    lc.add(Var::Aux(self.src(j, 0x300 + i)), Scalar::from(1u64 << i))
                });
                Row {
                    a,
                    b: t().add(Var::One, one),
                    c: t().add(w, one),
                }
            }
        }
    }

    /// A(z), B(z), C(z) of row j straight from its kind, without building linear
    /// combinations; `mark_a` / `mark_b` record the aux variables A and B use with a non-zero
    /// coefficient and `b_one` whether B uses the constant one. Must agree with `row`.
    fn eval_row(
        &self,
        j: usize,
        v: &[Scalar],
        mark_a: &mut impl FnMut(usize),
        mark_b: &mut impl FnMut(usize),
        b_one: &mut bool,
        inputs: &[Scalar],
    ) -> (Scalar, Scalar, Scalar) {
        let w = v[j];
        match self.kinds[j] {
            Kind::Input => {
                *b_one = true;
                (inputs[j + 1], Scalar::ONE, w)
            }
            Kind::Src => {
                mark_a(j);
                mark_b(j);
                *b_one = true;
                (w, Scalar::ONE - w, Scalar::ZERO)
            }
            Kind::Xor => {
                let (x, y) = (self.src(j, 0), self.src(j, 1));
                mark_a(x);
                mark_b(y);
                (v[x].double(), v[y], v[x] + v[y] - w)
            }
            Kind::Mux => {
                let (c, p, q) = (self.src(j, 0), self.src(j, 1), self.src(j, 2));
                mark_a(c);
                // p − q merges to nothing when p = q: no term, no density.
                if p != q {
                    mark_b(p);
                    mark_b(q);
                }
                (v[c], v[p] - v[q], w - v[q])
            }
            Kind::Lin => {
                let a = self.lin_sum(j, |x| {
                    mark_a(x);
                    v[x] == Scalar::ONE
                });
                let (y, z) = (self.src(j, 0x200), self.src(j, 0x201));
                mark_b(y);
                *b_one = true;
                (a, v[y] + Scalar::ONE, w - v[z])
            }
            Kind::Pack => {
                let a = (0..PACK_BITS).fold(0u64, |acc, t| {
                    let s = self.src(j, 0x300 + t);
                    mark_a(s);
                    acc + (((v[s] == Scalar::ONE) as u64) << t)
                });
                *b_one = true;
                (Scalar::from(a), Scalar::ONE, w)
            }
        }
    }

    /// Synthesises rows in parallel on the current rayon pool; equals the `Circuit` path.
    pub fn synthesize_parallel(&self) -> Assignment {
        let n = self.rows;
        let inputs: Vec<Scalar> = std::iter::once(Scalar::ONE)
            .chain((0..PUBLIC_INPUTS).map(|i| self.input_value(i)))
            .collect();
        let bits = self.bits();
        let aux: Vec<Scalar> = (0..n)
            .into_par_iter()
            .map(|j| self.value(j, &bits))
            .collect();
        let words = n.div_ceil(64);
        let atomics = || (0..words).map(|_| AtomicU64::new(0)).collect::<Vec<_>>();
        let (a_dens, b_dens) = (atomics(), atomics());
        let set = |d: &[AtomicU64], i: usize| {
            d[i / 64].fetch_or(1 << (i % 64), Ordering::Relaxed);
        };
        const CHUNK: usize = 1 << 12;
        let mut a = vec![Scalar::ZERO; n + inputs.len()];
        let mut b = vec![Scalar::ZERO; n + inputs.len()];
        let mut c = vec![Scalar::ZERO; n + inputs.len()];
        let b_one = a[..n]
            .par_chunks_mut(CHUNK)
            .zip(b[..n].par_chunks_mut(CHUNK))
            .zip(c[..n].par_chunks_mut(CHUNK))
            .enumerate()
            .map(|(ci, ((a, b), c))| {
                let mut one = false;
                for (i, ((a, b), c)) in a.iter_mut().zip(b.iter_mut()).zip(c.iter_mut()).enumerate()
                {
                    let j = ci * CHUNK + i;
                    (*a, *b, *c) = self.eval_row(
                        j,
                        &aux,
                        &mut |x| set(&a_dens, x),
                        &mut |x| set(&b_dens, x),
                        &mut one,
                        &inputs,
                    );
                }
                one
            })
            .reduce(|| false, |x, y| x || y);
        // The input rows `x * 0 = 0`.
        a[n..].copy_from_slice(&inputs);
        let collect = |d: Vec<AtomicU64>| d.into_iter().map(AtomicU64::into_inner).collect();
        Assignment {
            a,
            b,
            c,
            a_aux_density: Density::from_words(collect(a_dens), n),
            b_aux_density: Density::from_words(collect(b_dens), n),
            b_input_density: Density::from_words(vec![b_one as u64], inputs.len()),
            input: inputs,
            aux,
        }
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
