//! What synthesis produces: the A, B, C evaluations of every constraint, the variable
//! assignments, and which variables each MSM touches (its density).

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

/// A set of variable indices, as a bitmap; bellperson's "density tracker".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    bits: Vec<u64>,
    len: usize,
}

impl Density {
    /// An empty set over indices `0..len`.
    pub fn with_len(len: usize) -> Self {
        Density {
            bits: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// Extends the range by one index, not in the set.
    pub fn push(&mut self) {
        if self.len % 64 == 0 {
            self.bits.push(0);
        }
        self.len += 1;
    }

    /// Adds `i` (below `len`) to the set.
    pub fn set(&mut self, i: usize) {
        debug_assert!(i < self.len);
        self.bits[i / 64] |= 1 << (i % 64);
    }

    /// Whether `i` is in the set; `i` must be below `len`.
    pub fn get(&self, i: usize) -> bool {
        self.bits[i / 64] >> (i % 64) & 1 == 1
    }

    /// Indices the set ranges over (in it or not).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set ranges over no index at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Indices in the set.
    pub fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Raw words, for building densities in parallel.
    pub fn from_words(bits: Vec<u64>, len: usize) -> Self {
        assert!(bits.len() == len.div_ceil(64));
        Density { bits, len }
    }

    /// `head`, then the values whose index is in the set, in order. Built in parallel in one
    /// vector (64 Ki values a piece): a serial copy of a 2^24 selection, into fresh pages, held
    /// a GPU host's pipeline up for most of a second.
    pub fn select_after<T: Copy + Default + Send + Sync>(
        &self,
        head: &[T],
        values: &[T],
    ) -> Vec<T> {
        use rayon::prelude::*;
        assert_eq!(values.len(), self.len);
        const PIECE: usize = 1 << 16;
        let counts: Vec<usize> = self
            .bits
            .par_chunks(PIECE / 64)
            .map(|w| w.iter().map(|x| x.count_ones() as usize).sum())
            .collect();
        let len = head.len() + counts.iter().sum::<usize>();
        // Written once, without a zeroing pass first.
        let mut out = Vec::with_capacity(len);
        let spare = &mut out.spare_capacity_mut()[..len];
        for (d, h) in spare.iter_mut().zip(head) {
            d.write(*h);
        }
        let mut rest = &mut spare[head.len()..];
        let mut parts = Vec::with_capacity(counts.len());
        for &c in &counts {
            let (part, r) = std::mem::take(&mut rest).split_at_mut(c);
            parts.push(part);
            rest = r;
        }
        parts
            .into_par_iter()
            .zip(values.par_chunks(PIECE))
            .enumerate()
            .for_each(|(p, (dst, src))| {
                let picked = src
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| self.get(p * PIECE + i))
                    .map(|(_, v)| *v);
                let mut written = 0;
                for (d, v) in dst.iter_mut().zip(picked) {
                    d.write(v);
                    written += 1;
                }
                // The piece's set bits are its picks, unless bits past the length were set.
                assert_eq!(written, dst.len(), "a density with bits past its length");
            });
        // SAFETY: the head and every piece's picks were written above (checked).
        unsafe { out.set_len(len) };
        out
    }
}

/// N vectors of `len`, element i of each from `f(i)`, filled in parallel and written once (no
/// zeroing pass first: at 2^24 that pass alone writes 1.6 GB): A, B, C and the witness of a
/// synthesis, in one pass over the rows.
pub fn par_columns<T: crate::hostmem::PlainData, const N: usize>(
    len: usize,
    f: impl Fn(usize) -> [T; N] + Sync,
) -> [Vec<T>; N] {
    par_columns_into(len, f, std::array::from_fn(|_| None))
}

/// `par_columns`, writing column k into `lent[k]` where it is given (at least `len` long; its
/// vector then comes back empty): a page-locked block the copy engines read, with no host
/// copy between synthesis and the link.
pub fn par_columns_into<T: crate::hostmem::PlainData, const N: usize>(
    len: usize,
    f: impl Fn(usize) -> [T; N] + Sync,
    mut lent: [Option<&mut [T]>; N],
) -> [Vec<T>; N] {
    use rayon::prelude::*;
    /// Column bases, shared by the chunks, which write disjoint ranges.
    struct Bases<T, const N: usize>([*mut T; N]);
    // SAFETY: each chunk writes only its own indices of each column.
    unsafe impl<T: Send, const N: usize> Sync for Bases<T, N> {}
    const CHUNK: usize = 1 << 12;
    let mut cols: [Vec<T>; N] = std::array::from_fn(|k| match lent[k] {
        Some(_) => vec![],
        None => Vec::with_capacity(len),
    });
    let bases: Bases<T, N> = Bases(std::array::from_fn(|k| match lent[k].as_deref_mut() {
        Some(dst) => {
            assert!(dst.len() >= len, "a lent column shorter than the rows");
            dst.as_mut_ptr()
        }
        None => cols[k].as_mut_ptr(),
    }));
    // Streaming stores: the columns bypass the caches, so no line is read from memory before
    // it is overwritten (2^24 on 2 cores: 0.82×; smaller sizes gain too).
    (0..len.div_ceil(CHUNK)).into_par_iter().for_each(|ci| {
        let bases = &bases;
        for i in ci * CHUNK..((ci + 1) * CHUNK).min(len) {
            for (k, v) in f(i).into_iter().enumerate() {
                // SAFETY: i < len ≤ each column's room, and no other chunk writes index i.
                let p = unsafe { bases.0[k].add(i) };
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `p` is element i of a column with room for it, written by this chunk
                // alone; a 32-byte `PlainData` value has no padding, so its halves are
                // initialised, and the streaming stores get the 16-byte alignment checked.
                unsafe {
                    if std::mem::size_of::<T>() == 32 && (p as usize) % 16 == 0 {
                        use std::arch::x86_64::*;
                        // T is 32 bytes, read as two 16-byte halves and moved into the store.
                        let halves: [__m128i; 2] = std::mem::transmute_copy(&v);
                        _mm_stream_si128(p as *mut __m128i, halves[0]);
                        _mm_stream_si128((p as *mut __m128i).add(1), halves[1]);
                    } else {
                        p.write(v)
                    }
                };
                #[cfg(not(target_arch = "x86_64"))]
                // SAFETY: as above: element i, written by this chunk alone.
                unsafe {
                    p.write(v)
                };
            }
        }
        // Streaming stores are weakly ordered: fence them before the chunk counts as done.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a store fence has no preconditions.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
    });
    // SAFETY: every element below `len` of an owned column was written above (a panic in `f`
    // never gets here).
    for (c, l) in cols.iter_mut().zip(&lent) {
        if l.is_none() {
            // SAFETY: as said above the loop.
            unsafe { c.set_len(len) };
        }
    }
    cols
}

/// One satisfied R1CS instance, ready for the prover.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// A(z), B(z), C(z) per constraint, the input constraints `x * 0 = 0` last.
    pub a: Vec<Scalar>,
    /// B(z) per constraint, in the same order as `a`.
    pub b: Vec<Scalar>,
    /// C(z) per constraint, in the same order as `a`.
    pub c: Vec<Scalar>,
    /// How many constraints: a, b and c hold that many unless synthesis wrote them into
    /// memory it was lent (`Workload::synthesize_into`), when they are empty.
    pub rows: usize,
    /// Public inputs, the constant one first.
    pub input: Vec<Scalar>,
    /// The private (auxiliary) variables' values.
    pub aux: Vec<Scalar>,
    /// The aux variables A uses with a non-zero coefficient (inputs are dense in A).
    pub a_aux_density: Density,
    /// The inputs B uses with a non-zero coefficient.
    pub b_input_density: Density,
    /// The aux variables B uses with a non-zero coefficient.
    pub b_aux_density: Density,
}

impl Assignment {
    /// Rows of the evaluation domain before padding.
    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// Moves a, b and c into `dst` (each at least `rows` long), leaving them empty: into memory
    /// the copy engines read, around the caches.
    pub fn move_abc_into(&mut self, dst: [&mut [Scalar]; 3]) {
        use crate::hostmem::{as_bytes, bytes_mut, stream_copy};
        for (d, s) in dst.into_iter().zip([&mut self.a, &mut self.b, &mut self.c]) {
            stream_copy(bytes_mut(&mut d[..s.len()]), as_bytes(s));
            *s = vec![];
        }
    }

    /// Public inputs without the leading one, as a verifier takes them.
    pub fn public_inputs(&self) -> &[Scalar] {
        &self.input[1..]
    }

    /// Host memory this assignment holds, for admission budgets.
    pub fn bytes(&self) -> usize {
        (self.a.len() * 3 + self.input.len() + self.aux.len()) * 32
    }

    /// Adds the constraints `input_i * 0 = 0` that make every input appear in A, as
    /// bellperson's prover and generator both do.
    pub(crate) fn push_input_constraints(&mut self) {
        for x in &self.input {
            self.a.push(*x);
            self.b.push(Scalar::ZERO);
            self.c.push(Scalar::ZERO);
        }
    }
}

/// A constraint system that evaluates every constraint as it is enforced.
pub struct ProvingCs {
    asg: Assignment,
}

impl ProvingCs {
    /// An empty system holding the constant one as input 0.
    pub fn new() -> Self {
        let mut cs = ProvingCs {
            asg: Assignment {
                a: vec![],
                b: vec![],
                c: vec![],
                rows: 0,
                input: vec![],
                aux: vec![],
                a_aux_density: Density::default(),
                b_input_density: Density::default(),
                b_aux_density: Density::default(),
            },
        };
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))
            .expect("the constant one");
        cs
    }

    /// Adds the input constraints and returns the assignment.
    pub fn finish(mut self) -> Assignment {
        self.asg.push_input_constraints();
        self.asg.rows = self.asg.a.len();
        self.asg
    }
}

impl Default for ProvingCs {
    fn default() -> Self {
        Self::new()
    }
}

/// Evaluates `lc` and marks the variables it uses with a non-zero coefficient.
fn eval(
    lc: &LinearCombination<Scalar>,
    input_density: Option<&mut Density>,
    aux_density: Option<&mut Density>,
    input: &[Scalar],
    aux: &[Scalar],
) -> Scalar {
    let mut acc = Scalar::ZERO;
    let mut input_density = input_density;
    let mut aux_density = aux_density;
    for (var, coeff) in lc.iter() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        let (value, density, i) = match var.get_unchecked() {
            Index::Input(i) => (input[i], input_density.as_deref_mut(), i),
            Index::Aux(i) => (aux[i], aux_density.as_deref_mut(), i),
        };
        acc += if *coeff == Scalar::ONE {
            value
        } else {
            value * coeff
        };
        if let Some(d) = density {
            d.set(i);
        }
    }
    acc
}

impl ConstraintSystem<Scalar> for ProvingCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.asg.aux.push(f()?);
        self.asg.a_aux_density.push();
        self.asg.b_aux_density.push();
        Ok(Variable::new_unchecked(Index::Aux(self.asg.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.asg.input.push(f()?);
        self.asg.b_input_density.push();
        Ok(Variable::new_unchecked(Index::Input(
            self.asg.input.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        let asg = &mut self.asg;
        // Inputs are fully dense in A (every input has its `x * 0 = 0` row), so A tracks aux only.
        let av = eval(&a, None, Some(&mut asg.a_aux_density), &asg.input, &asg.aux);
        let bv = eval(
            &b,
            Some(&mut asg.b_input_density),
            Some(&mut asg.b_aux_density),
            &asg.input,
            &asg.aux,
        );
        let cv = eval(&c, None, None, &asg.input, &asg.aux);
        asg.a.push(av);
        asg.b.push(bv);
        asg.c.push(cv);
    }

    crate::circuit::namespaces_ignored!();
}

/// Checks that every constraint holds: A(z)·B(z) = C(z). Used by tests and `--check`.
pub fn is_satisfied(asg: &Assignment) -> Option<usize> {
    (0..asg.a.len()).find(|&i| asg.a[i] * asg.b[i] != asg.c[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces of every fill (empty, full, sparse), a ragged last piece, and a head.
    #[test]
    fn columns_hold_every_value_whether_streamed_or_not() {
        // Four 32-byte values a row (streaming stores), across many parallel chunks.
        let len = (1 << 18) + 3;
        let cols = par_columns(len, |i| {
            let i = i as u64;
            [
                [i, 1, 2, 3],
                [i, i, 0, 7],
                [0, 0, 0, i],
                [u64::MAX, i, i, i],
            ]
        });
        for (i, row) in (0..len as u64).zip(0..len) {
            assert_eq!(cols[0][row], [i, 1, 2, 3]);
            assert_eq!(cols[1][row], [i, i, 0, 7]);
            assert_eq!(cols[2][row], [0, 0, 0, i]);
            assert_eq!(cols[3][row], [u64::MAX, i, i, i]);
        }
        let small = par_columns(5, |i| [i as u8, 2 * i as u8]);
        assert_eq!(small, [vec![0, 1, 2, 3, 4], vec![0, 2, 4, 6, 8]]);
        // A lent column is written in place (past `len` untouched) and comes back empty.
        let mut lent = [[9u64; 4]; 70];
        let [own, none] =
            par_columns_into(66, |i| [[i as u64; 4], [1; 4]], [None, Some(&mut lent)]);
        assert_eq!((own.len(), own[65], none.len()), (66, [65; 4], 0));
        assert_eq!((lent[65], lent[66]), ([1; 4], [9; 4]));
    }

    #[test]
    fn select_after_equals_a_filter() {
        let n = 3 * (1 << 16) + 77;
        let values: Vec<u64> = (0..n as u64).collect();
        let mut d = Density::with_len(n);
        for i in 0..n {
            let piece = i >> 16;
            if piece == 1 || (piece != 0 && i % 7 == 3) || i == n - 1 {
                d.set(i);
            }
        }
        let want: Vec<u64> = [9, 8]
            .into_iter()
            .chain(values.iter().copied().filter(|&v| d.get(v as usize)))
            .collect();
        assert_eq!(d.select_after(&[9, 8], &values), want);
        assert_eq!(want.len(), 2 + d.count());
        assert!(Density::with_len(5)
            .select_after(&[], &[1u8, 2, 3, 4, 5])
            .is_empty());
    }
}
