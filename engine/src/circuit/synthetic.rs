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
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::precompiled;
use super::{par_columns, par_columns_into, Assignment, Density, Shape};

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

/// The constraint structure of one size: every row's kind and operands, a pure function of k.
/// Built once per size in parallel and shared by every partition, so synthesising a partition
/// only computes its witness.
#[derive(Debug)]
struct Structure {
    rows: usize,
    salt: u64,
    kinds: Vec<Kind>,
    /// Operands of row j are `ops[start[j]..start[j + 1]]`, in the order of `operands_of`.
    start: Vec<u32>,
    ops: Vec<u32>,
    /// Which aux variables A and B use, and whether B uses the constant one: structure too,
    /// so every partition copies them instead of marking them row by row.
    a_density: Density,
    b_density: Density,
    b_one: bool,
}

/// Operands a row of each kind takes: xor [x, y]; mux [c, p, q]; lin [b₀..b₁₂, y, z];
/// pack [s₀..s₃₁]. x, y, c, p, q, z and s are src variables, the b any bit variable.
fn operand_count(k: Kind) -> usize {
    match k {
        Kind::Input | Kind::Src => 0,
        Kind::Xor => 2,
        Kind::Mux => 3,
        Kind::Lin => LIN_TERMS as usize + 2,
        Kind::Pack => PACK_BITS as usize,
    }
}

impl Structure {
    fn build(k: u32) -> Structure {
        let rows = (1usize << k) - PUBLIC_INPUTS - 1;
        let salt = mix3(VERSION, k as u64, 0x5eed);
        let kinds: Vec<Kind> = (0..rows)
            .into_par_iter()
            .map(|r| kind_of(salt, r))
            .collect();
        let rows_of = |want: fn(Kind) -> bool| -> Vec<u32> {
            (0..rows as u32)
                .into_par_iter()
                .filter(|r| want(kinds[*r as usize]))
                .collect()
        };
        let (srcs, bits) = (rows_of(is_src), rows_of(is_bit));
        // One hash per operand, uniform over the variables of the kind it needs.
        let pick = |row: usize, salt_op: u64, from: &[u32]| -> u32 {
            let h = mix(salt
                ^ (row as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ salt_op.wrapping_mul(0xD6E8_FEB8_6659_FD93));
            from[(h % from.len() as u64) as usize]
        };
        let operands = |j: usize| -> Vec<u32> {
            match kinds[j] {
                Kind::Input | Kind::Src => vec![],
                Kind::Xor => (0..2).map(|t| pick(j, t, &srcs)).collect(),
                Kind::Mux => (0..3).map(|t| pick(j, t, &srcs)).collect(),
                Kind::Lin => (0..LIN_TERMS)
                    .map(|t| pick(j, 0x100 + t, &bits))
                    .chain([pick(j, 0x200, &srcs), pick(j, 0x201, &srcs)])
                    .collect(),
                Kind::Pack => (0..PACK_BITS).map(|t| pick(j, 0x300 + t, &srcs)).collect(),
            }
        };
        let mut start = Vec::with_capacity(rows + 1);
        let mut at = 0u32;
        for k in &kinds {
            start.push(at);
            at += operand_count(*k) as u32;
        }
        start.push(at);
        const CHUNK: usize = 1 << 14;
        let pieces: Vec<Vec<u32>> = (0..rows.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                (c * CHUNK..((c + 1) * CHUNK).min(rows))
                    .flat_map(operands)
                    .collect()
            })
            .collect();
        let mut st = Structure {
            rows,
            salt,
            kinds,
            start,
            ops: pieces.concat(),
            a_density: Density::default(),
            b_density: Density::default(),
            b_one: false,
        };
        (st.a_density, st.b_density, st.b_one) = st.densities();
        st
    }

    /// The aux variables row j's A and B use with a non-zero coefficient (`mark_a`,
    /// `mark_b`); true when its B uses the constant one. Must agree with `SyntheticCircuit::row`.
    fn marks(
        &self,
        j: usize,
        mark_a: &mut impl FnMut(usize),
        mark_b: &mut impl FnMut(usize),
    ) -> bool {
        let o = self.operands(j);
        match self.kinds[j] {
            Kind::Input => true,
            Kind::Src => {
                mark_a(j);
                mark_b(j);
                true
            }
            Kind::Xor => {
                mark_a(o[0] as usize);
                mark_b(o[1] as usize);
                false
            }
            Kind::Mux => {
                mark_a(o[0] as usize);
                // p − q merges to nothing when p = q: no term, no density.
                if o[1] != o[2] {
                    mark_b(o[1] as usize);
                    mark_b(o[2] as usize);
                }
                false
            }
            Kind::Lin => {
                for x in &o[..LIN_TERMS as usize] {
                    mark_a(*x as usize);
                }
                mark_b(o[13] as usize);
                true
            }
            Kind::Pack => {
                for s in o {
                    mark_a(*s as usize);
                }
                true
            }
        }
    }

    /// The densities of every row's marks, built in parallel.
    fn densities(&self) -> (Density, Density, bool) {
        let n = self.rows;
        let words = n.div_ceil(64);
        let atomics = || (0..words).map(|_| AtomicU64::new(0)).collect::<Vec<_>>();
        let (a, b) = (atomics(), atomics());
        let set = |d: &[AtomicU64], i: usize| {
            d[i / 64].fetch_or(1 << (i % 64), Ordering::Relaxed);
        };
        let b_one = (0..n)
            .into_par_iter()
            .map(|j| self.marks(j, &mut |x| set(&a, x), &mut |x| set(&b, x)))
            .reduce(|| false, |x, y| x || y);
        let collect = |d: Vec<AtomicU64>| d.into_iter().map(AtomicU64::into_inner).collect();
        (
            Density::from_words(collect(a), n),
            Density::from_words(collect(b), n),
            b_one,
        )
    }

    /// The structure of size 2^k, built on first use and kept for the process.
    fn of(k: u32) -> Arc<Structure> {
        static CACHE: std::sync::OnceLock<parking_lot::Mutex<HashMap<u32, Arc<Structure>>>> =
            std::sync::OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(s) = cache.lock().get(&k) {
            return s.clone();
        }
        let built = Arc::new(Structure::build(k));
        cache.lock().entry(k).or_insert(built).clone()
    }

    fn operands(&self, j: usize) -> &[u32] {
        &self.ops[self.start[j] as usize..self.start[j + 1] as usize]
    }

    fn lin_coeff(&self, row: usize, t: u64) -> u64 {
        mix3(self.salt, row as u64, 0x1000 + t) | 1
    }

    /// Σ kₜ·bₜ over the 13 bit operands of lin row `j`: kₜ < 2^64, so the sum fits a u128
    /// and converts once.
    fn lin_sum(&self, j: usize, mut bit: impl FnMut(usize) -> bool) -> Scalar {
        let sum: u128 = self.operands(j)[..LIN_TERMS as usize]
            .iter()
            .enumerate()
            .filter(|(_, x)| bit(**x as usize))
            .map(|(t, _)| self.lin_coeff(j, t as u64) as u128)
            .sum();
        Scalar::from_u64s_le(&[sum as u64, (sum >> 64) as u64, 0, 0]).unwrap()
    }
}

/// One bit per variable, packed. Rows read their operands' bits at random; packed, 2^24
/// variables take 2 MB, which stays in a core's L2 cache where a byte each (16 MB) did not.
struct Bits(Vec<u64>);

impl Bits {
    /// Bit j is `f(j)`, for j < n; words are filled in parallel.
    fn build(n: usize, f: impl Fn(usize) -> bool + Sync) -> Bits {
        Bits(
            (0..n.div_ceil(64))
                .into_par_iter()
                .map(|w| {
                    let base = w * 64;
                    (0..64.min(n - base)).fold(0u64, |word, i| word | (f(base + i) as u64) << i)
                })
                .collect(),
        )
    }

    #[inline]
    fn get(&self, i: usize) -> bool {
        self.0[i >> 6] >> (i & 63) & 1 == 1
    }
}

/// What evaluating a row reads of the partition's witness.
#[derive(Clone, Copy)]
struct Witness<'a> {
    /// The value of every bit variable (false elsewhere).
    bits: &'a Bits,
    /// Public inputs, the constant one first.
    inputs: &'a [Scalar],
    /// −1, 0, 1, 2 as field elements (`small[i + 1]` is i).
    small: &'a [Scalar; 4],
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
    /// The circuit of size 2^`k` whose witness is drawn from `seed`; builds (or reuses) the shape's
    /// row structure.
    pub fn new(k: u32, seed: u64) -> Self {
        let st = Structure::of(k);
        SyntheticCircuit {
            k,
            seed,
            rows: st.rows,
            st,
        }
    }

    /// Its shape, computed from `k` without synthesis.
    pub fn shape(&self) -> Shape {
        shape(self.k)
    }

    /// Constraints including the input rows: the length of A, B and C.
    pub fn num_rows(&self) -> usize {
        self.rows + PUBLIC_INPUTS + 1
    }

    fn src_bit(&self, j: usize) -> u8 {
        (mix(self.seed ^ (j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) & 1) as u8
    }

    fn input_value(&self, i: usize) -> Scalar {
        let limbs = [0, 1, 2, 3].map(|l| mix3(self.seed, 1 << 40 | i as u64, l));
        // Clear the top two bits so the integer is below the modulus.
        let limbs = [limbs[0], limbs[1], limbs[2], limbs[3] >> 2];
        Scalar::from_u64s_le(&limbs).unwrap()
    }

    /// The value of every bit variable, false elsewhere: sources first, then the gates on
    /// them, whose operands are all sources.
    fn bits(&self) -> Bits {
        let st = &self.st;
        let src = Bits::build(self.rows, |j| {
            st.kinds[j] == Kind::Src && self.src_bit(j) == 1
        });
        Bits::build(self.rows, |j| {
            let o = st.operands(j);
            match st.kinds[j] {
                Kind::Src => src.get(j),
                Kind::Xor => src.get(o[0] as usize) ^ src.get(o[1] as usize),
                Kind::Mux if src.get(o[0] as usize) => src.get(o[1] as usize),
                Kind::Mux => src.get(o[2] as usize),
                _ => false,
            }
        })
    }

    /// The value of aux variable `j`, given the bit values of every bit variable.
    fn value(&self, j: usize, bits: &Bits) -> Scalar {
        let st = &self.st;
        let o = st.operands(j);
        match st.kinds[j] {
            Kind::Input => self.input_value(j),
            Kind::Src | Kind::Xor | Kind::Mux => bit_scalar(bits.get(j)),
            Kind::Lin => {
                let sum = st.lin_sum(j, |x| bits.get(x));
                let (y, z) = (bits.get(o[13] as usize), bits.get(o[14] as usize));
                if y {
                    sum.double() + bit_scalar(z)
                } else {
                    sum + bit_scalar(z)
                }
            }
            Kind::Pack => Scalar::from(
                o.iter()
                    .enumerate()
                    .map(|(t, s)| (bits.get(*s as usize) as u64) << t)
                    .sum::<u64>(),
            ),
        }
    }

    fn row(&self, j: usize) -> Row {
        let one = Scalar::ONE;
        let w = Var::Aux(j);
        let t = Terms::default;
        let st = &self.st;
        let o: Vec<Var> = st
            .operands(j)
            .iter()
            .map(|x| Var::Aux(*x as usize))
            .collect();
        match st.kinds[j] {
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
            Kind::Xor => Row {
                a: t().add(o[0], Scalar::from(2)),
                b: t().add(o[1], one),
                c: t().add(o[0], one).add(o[1], one).add(w, -one),
            },
            Kind::Mux => Row {
                a: t().add(o[0], one),
                b: t().add(o[1], one).add(o[2], -one),
                c: t().add(w, one).add(o[2], -one),
            },
            Kind::Lin => {
                let a = (0..LIN_TERMS as usize).fold(t(), |lc, i| {
                    lc.add(o[i], Scalar::from(st.lin_coeff(j, i as u64)))
                });
                Row {
                    a,
                    b: t().add(o[13], one).add(Var::One, one),
                    c: t().add(w, one).add(o[14], -one),
                }
            }
            Kind::Pack => {
                let a = o
                    .iter()
                    .enumerate()
                    .fold(t(), |lc, (i, s)| lc.add(*s, Scalar::from(1u64 << i)));
                Row {
                    a,
                    b: t().add(Var::One, one),
                    c: t().add(w, one),
                }
            }
        }
    }

    /// A(z), B(z), C(z) of row j and the value w of its own variable, straight from its kind,
    /// without building linear combinations: operands are bit variables, read from `bits`.
    /// Lin and pack rows compute their sum once for A and w. Must agree with `row` and `value`.
    fn eval_row(&self, j: usize, wit: Witness<'_>) -> [Scalar; 4] {
        let (st, bits, inputs) = (&self.st, wit.bits, wit.inputs);
        let o = st.operands(j);
        // Bit rows' A, B, C are small integers (−1..2): looked up, not computed in the field.
        let b = |x: u32| bits.get(x as usize) as i64;
        let s = |i: i64| wit.small[(i + 1) as usize];
        let own = bits.get(j) as i64;
        match st.kinds[j] {
            Kind::Input => {
                let w = inputs[j + 1];
                [w, Scalar::ONE, w, w]
            }
            Kind::Src => [s(own), s(1 - own), s(0), s(own)],
            Kind::Xor => [
                s(2 * b(o[0])),
                s(b(o[1])),
                s(b(o[0]) + b(o[1]) - own),
                s(own),
            ],
            Kind::Mux => [s(b(o[0])), s(b(o[1]) - b(o[2])), s(own - b(o[2])), s(own)],
            Kind::Lin => {
                let sum = st.lin_sum(j, |x| bits.get(x));
                let (y, z) = (b(o[13]), s(b(o[14])));
                let w = if y == 1 { sum.double() } else { sum } + z;
                [sum, s(y + 1), w - z, w]
            }
            Kind::Pack => {
                let a = o.iter().enumerate().fold(0u64, |acc, (t, s)| {
                    acc + ((bits.get(*s as usize) as u64) << t)
                });
                let w = Scalar::from(a);
                [w, Scalar::ONE, w, w]
            }
        }
    }

    /// The witness alone, variables in parallel on the current rayon pool: the pre-compiled
    /// path's synthesis.
    pub fn witness(&self) -> precompiled::Witness {
        let bits = self.bits();
        let [aux] = par_columns(self.rows, |j| [self.value(j, &bits)]);
        precompiled::Witness {
            input: self.inputs(),
            aux,
        }
    }

    /// The constant one and the public inputs.
    fn inputs(&self) -> Vec<Scalar> {
        std::iter::once(Scalar::ONE)
            .chain((0..PUBLIC_INPUTS).map(|i| self.input_value(i)))
            .collect()
    }

    /// Synthesises rows in parallel on the current rayon pool; equals the `Circuit` path.
    pub fn synthesize_parallel(&self) -> Assignment {
        self.synthesize_parallel_into(None)
    }

    /// `synthesize_parallel`, writing A, B and C into `abc` when given (each at least as long
    /// as the rows); the assignment's own a, b and c are then empty.
    pub fn synthesize_parallel_into(&self, abc: Option<[&mut [Scalar]; 3]>) -> Assignment {
        let n = self.rows;
        let inputs = self.inputs();
        let bits = self.bits();
        let small = [
            -Scalar::ONE,
            Scalar::ZERO,
            Scalar::ONE,
            Scalar::ONE.double(),
        ];
        let wit = Witness {
            bits: &bits,
            inputs: &inputs,
            small: &small,
        };
        // One pass over the rows writes A, B, C and the witness; the input rows `x * 0 = 0`
        // come last and have no variable of their own.
        let rows = n + inputs.len();
        let lent = match abc {
            Some([a, b, c]) => [Some(a), Some(b), Some(c), None],
            None => [None, None, None, None],
        };
        let [a, b, c, mut aux] = par_columns_into(
            rows,
            |j| match j.checked_sub(n) {
                None => self.eval_row(j, wit),
                Some(i) => [inputs[i], Scalar::ZERO, Scalar::ZERO, Scalar::ZERO],
            },
            lent,
        );
        aux.truncate(n);
        let st = &self.st;
        Assignment {
            a,
            b,
            c,
            rows,
            a_aux_density: st.a_density.clone(),
            b_aux_density: st.b_density.clone(),
            b_input_density: Density::from_words(vec![st.b_one as u64], inputs.len()),
            input: inputs,
            aux,
        }
    }
}

/// Coefficients of operand `t` of a row of kind `k` in A, B and C (`lin` is the row's lin
/// coefficient for t < 13). Must agree with `SyntheticCircuit::row`.
fn operand_coeffs(k: Kind, t: usize, lin: impl Fn() -> u64) -> [i128; 3] {
    match (k, t) {
        (Kind::Xor, 0) => [2, 0, 1],
        (Kind::Xor, _) => [0, 1, 1],
        (Kind::Mux, 0) => [1, 0, 0],
        (Kind::Mux, 1) => [0, 1, 0],
        (Kind::Mux, _) => [0, -1, -1],
        (Kind::Lin, 13) => [0, 1, 0],
        (Kind::Lin, 14) => [0, 0, -1],
        (Kind::Lin, _) => [lin() as i128, 0, 0],
        (Kind::Pack, t) => [1 << t, 0, 0],
        (Kind::Input | Kind::Src, _) => [0, 0, 0],
    }
}

/// A small integer (|v| < 2^64) times `x`.
fn times(v: i128, x: Scalar) -> Scalar {
    match v {
        0 => Scalar::ZERO,
        1 => x,
        -1 => -x,
        2 => x.double(),
        v if v > 0 => x * Scalar::from(v as u64),
        v => -(x * Scalar::from(v.unsigned_abs() as u64)),
    }
}

impl SyntheticCircuit {
    /// Every variable's A, B and C polynomials at a point, from the rows' Lagrange values
    /// there (`lagrange[j]` for row j): the constant one and the inputs first, then aux — what
    /// setup's evaluating constraint system accumulates row by row, here in parallel. Each
    /// variable gathers the rows that use it as an operand (an inverted index of the operand
    /// lists), plus its own row.
    pub fn evaluate_at(&self, lagrange: &[Scalar]) -> [Vec<Scalar>; 3] {
        let st = &self.st;
        let (n, first_aux) = (self.rows, PUBLIC_INPUTS + 1);
        assert!(lagrange.len() >= n);
        // The operand positions of each variable, by a counting sort (any order: field sums
        // do not depend on it).
        let zeros = |len: usize| -> Vec<AtomicU64> {
            (0..len)
                .into_par_iter()
                .map(|_| AtomicU64::new(0))
                .collect()
        };
        let counts = zeros(n + 1);
        st.ops.par_iter().for_each(|v| {
            counts[*v as usize + 1].fetch_add(1, Ordering::Relaxed);
        });
        let mut at = 0u64;
        let first: Vec<u64> = counts
            .iter()
            .map(|c| {
                at += c.load(Ordering::Relaxed);
                at
            })
            .collect();
        let cursor: Vec<AtomicU64> = first.par_iter().map(|f| AtomicU64::new(*f)).collect();
        let used_by = zeros(st.ops.len());
        // Each use: its row, its kind and its operand position (< 32), so the gather below
        // reads no row's kind at random.
        (0..n).into_par_iter().for_each(|j| {
            let kind = (st.kinds[j] as u64) << 5;
            for (t, v) in st.operands(j).iter().enumerate() {
                let slot = cursor[*v as usize].fetch_add(1, Ordering::Relaxed);
                used_by[slot as usize].store((j as u64) << 8 | kind | t as u64, Ordering::Relaxed);
            }
        });
        let kinds = [
            Kind::Input,
            Kind::Src,
            Kind::Xor,
            Kind::Mux,
            Kind::Lin,
            Kind::Pack,
        ];
        debug_assert!(kinds.iter().enumerate().all(|(i, k)| *k as usize == i));
        let own = |j: usize| -> [i128; 3] {
            match st.kinds[j] {
                Kind::Input => [0, 0, 1],
                Kind::Src => [1, -1, 0],
                Kind::Xor => [0, 0, -1],
                Kind::Mux | Kind::Lin | Kind::Pack => [0, 0, 1],
            }
        };
        let mut cols = par_columns(n, |v| {
            let mut sum = own(v).map(|c| times(c, lagrange[v]));
            let refs = &used_by[first[v] as usize..first[v + 1] as usize];
            for r in refs {
                let r = r.load(Ordering::Relaxed);
                let (j, kind, t) = ((r >> 8) as usize, kinds[(r >> 5 & 7) as usize], r & 31);
                let c = operand_coeffs(kind, t as usize, || st.lin_coeff(j, t));
                for (s, c) in sum.iter_mut().zip(c) {
                    *s += times(c, lagrange[j]);
                }
            }
            sum
        });
        // The constant one (B of input, src, lin and pack rows) and each input (A of its row).
        let one_in_b = (0..n)
            .into_par_iter()
            .filter(|j| {
                matches!(
                    st.kinds[*j],
                    Kind::Input | Kind::Src | Kind::Lin | Kind::Pack
                )
            })
            .map(|j| lagrange[j])
            .reduce(|| Scalar::ZERO, |a, b| a + b);
        for (k, col) in cols.iter_mut().enumerate() {
            let mut head = vec![Scalar::ZERO; first_aux];
            if k == 0 {
                for (i, h) in head[1..].iter_mut().enumerate() {
                    *h = lagrange[i];
                }
            } else if k == 1 {
                head[0] = one_in_b;
            }
            head.append(col);
            *col = head;
        }
        cols
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
