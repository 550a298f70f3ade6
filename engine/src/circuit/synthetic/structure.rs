//! The synthetic circuit's rows: each row's kind and operands as a pure function of (k, row),
//! the shape's structure built once, and the witness's bits.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
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
pub(super) enum Var {
    One,
    Input(usize),
    Aux(usize),
}

/// A linear combination with bellpepper's merge-on-insert semantics (the `Circuit` path).
#[derive(Default)]
pub(super) struct Terms(pub(super) Vec<(Var, Scalar)>);

impl Terms {
    pub(super) fn add(mut self, var: Var, coeff: Scalar) -> Self {
        match self.0.iter_mut().find(|(v, _)| *v == var) {
            Some((_, c)) => *c += coeff,
            None => self.0.push((var, coeff)),
        }
        self
    }

    pub(super) fn lc(&self) -> LinearCombination<Scalar> {
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

pub(super) struct Row {
    pub(super) a: Terms,
    pub(super) b: Terms,
    pub(super) c: Terms,
}

/// The constraint structure of one size: every row's kind and operands, a pure function of k.
/// Built once per size in parallel and shared by every partition, so synthesising a partition
/// only computes its witness.
#[derive(Debug)]
pub(super) struct Structure {
    pub(super) rows: usize,
    pub(super) salt: u64,
    pub(super) kinds: Vec<Kind>,
    /// Operands of row j are `ops[start[j]..start[j + 1]]`, in the order of `operands_of`.
    pub(super) start: Vec<u32>,
    pub(super) ops: Vec<u32>,
    /// Which aux variables A and B use, and whether B uses the constant one: structure too,
    /// so every partition copies them instead of marking them row by row.
    pub(super) a_density: Density,
    pub(super) b_density: Density,
    pub(super) b_one: bool,
}

/// Operands a row of each kind takes: xor [x, y]; mux [c, p, q]; lin [b₀..b₁₂, y, z];
/// pack [s₀..s₃₁]. x, y, c, p, q, z and s are src variables, the b any bit variable.
pub(super) fn operand_count(k: Kind) -> usize {
    match k {
        Kind::Input | Kind::Src => 0,
        Kind::Xor => 2,
        Kind::Mux => 3,
        Kind::Lin => LIN_TERMS as usize + 2,
        Kind::Pack => PACK_BITS as usize,
    }
}

impl Structure {
    pub(super) fn build(k: u32) -> Structure {
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
        pub(super) const CHUNK: usize = 1 << 14;
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
    pub(super) fn marks(
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
    pub(super) fn densities(&self) -> (Density, Density, bool) {
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
    pub(super) fn of(k: u32) -> Arc<Structure> {
        static CACHE: std::sync::OnceLock<parking_lot::Mutex<HashMap<u32, Arc<Structure>>>> =
            std::sync::OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(s) = cache.lock().get(&k) {
            return s.clone();
        }
        let built = Arc::new(Structure::build(k));
        cache.lock().entry(k).or_insert(built).clone()
    }

    pub(super) fn operands(&self, j: usize) -> &[u32] {
        &self.ops[self.start[j] as usize..self.start[j + 1] as usize]
    }

    pub(super) fn lin_coeff(&self, row: usize, t: u64) -> u64 {
        mix3(self.salt, row as u64, 0x1000 + t) | 1
    }

    /// Σ kₜ·bₜ over the 13 bit operands of lin row `j`: kₜ < 2^64, so the sum fits a u128
    /// and converts once.
    pub(super) fn lin_sum(&self, j: usize, mut bit: impl FnMut(usize) -> bool) -> Scalar {
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
pub(super) struct Bits(Vec<u64>);

impl Bits {
    /// Bit j is `f(j)`, for j < n; words are filled in parallel.
    pub(super) fn build(n: usize, f: impl Fn(usize) -> bool + Sync) -> Bits {
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
    pub(super) fn get(&self, i: usize) -> bool {
        self.0[i >> 6] >> (i & 63) & 1 == 1
    }
}

/// What evaluating a row reads of the partition's witness.
#[derive(Clone, Copy)]
pub(super) struct Witness<'a> {
    /// The value of every bit variable (false elsewhere).
    pub(super) bits: &'a Bits,
    /// Public inputs, the constant one first.
    pub(super) inputs: &'a [Scalar],
    /// −1, 0, 1, 2 as field elements (`small[i + 1]` is i).
    pub(super) small: &'a [Scalar; 4],
}

pub(super) fn kind_of(structure: u64, row: usize) -> Kind {
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

pub(super) fn bit_scalar(b: bool) -> Scalar {
    if b {
        Scalar::ONE
    } else {
        Scalar::ZERO
    }
}

pub(super) fn is_src(k: Kind) -> bool {
    k == Kind::Src
}

pub(super) fn is_bit(k: Kind) -> bool {
    matches!(k, Kind::Src | Kind::Xor | Kind::Mux)
}
