//! Recording a circuit's constraints once: a constraint system that keeps every term of A, B
//! and C as matrix entries, and never runs an allocation's closure (a blank circuit has no
//! values).

use anyhow::{bail, Result};
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

use super::matrix::{densities, Csr};
use super::Precompiled;
use crate::circuit::Shape;
use crate::params::setup::Progress;

/// Records `circuit` (a blank one does: no closure is run), a circuit of `shape`, reporting
/// progress as `("recording", constraints done, of the shape's)`.
pub fn record<C: Circuit<Scalar>>(
    circuit: C,
    shape: &Shape,
    progress: Progress,
) -> Result<Precompiled> {
    let start = Instant::now();
    let mut cs = RecordingCs::new(shape.num_constraints, progress);
    circuit
        .synthesize(&mut cs)
        .map_err(|e| anyhow::anyhow!("recording the circuit failed: {e}"))?;
    let mut pc = cs.finish()?;
    let got = (pc.num_inputs, pc.num_aux, pc.num_constraints);
    let want = (shape.num_inputs, shape.num_aux, shape.num_constraints);
    if got != want {
        bail!("the recorded circuit has (inputs, aux, constraints) {got:?}, its shape {want:?}");
    }
    pc.digest = shape.digest.clone();
    tracing::info!(
        "recorded {} constraints ({} terms) in {:.1} s",
        pc.num_constraints,
        pc.a.nnz() + pc.b.nnz() + pc.c.nnz(),
        start.elapsed().as_secs_f64()
    );
    Ok(pc)
}

/// The coefficient table: 1 and −1 first, then each distinct coefficient as first seen.
struct Table {
    values: Vec<Scalar>,
    index: HashMap<[u64; 4], u32, BuildHasherDefault<LimbHasher>>,
}

/// A hash of a field element's Montgomery limbs, which are already uniform: a multiply per
/// limb, where SipHash took a fifth of recording a circuit of many coefficients.
#[derive(Default)]
struct LimbHasher(u64);

impl Hasher for LimbHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Table {
    fn new() -> Self {
        let mut t = Table {
            values: vec![],
            index: HashMap::default(),
        };
        t.intern(&Scalar::ONE);
        t.intern(&-Scalar::ONE);
        t
    }

    fn intern(&mut self, c: &Scalar) -> u32 {
        let key = blst::blst_fr::from(*c).l;
        if let Some(k) = self.index.get(&key) {
            return *k;
        }
        // Indices stay below 2^32 − 1 only by the entries' own bound (checked at the end).
        let k = self.values.len() as u32;
        self.values.push(*c);
        self.index.insert(key, k);
        k
    }
}

/// Columns while inputs may still be allocated between constraints (`inputize`,
/// `pack_into_inputs`): aux k is recorded as k and input i as `u32::MAX − i`, and both become
/// final columns once the number of inputs is known. (Offsetting aux by the inputs seen so far
/// would give early constraints the wrong columns.)
fn tagged(var: Variable) -> Option<u32> {
    match var.get_unchecked() {
        Index::Input(i) => u32::try_from(i).ok().map(|i| u32::MAX - i),
        Index::Aux(k) => u32::try_from(k).ok(),
    }
}

struct RecordingCs<'p> {
    num_inputs: usize,
    num_aux: usize,
    num_constraints: usize,
    m: [Csr; 3],
    table: Table,
    /// `enforce` cannot fail: the first reason the recording is unusable, reported at the end.
    error: Option<String>,
    expected: usize,
    progress: Progress<'p>,
}

impl<'p> RecordingCs<'p> {
    fn new(expected: usize, progress: Progress<'p>) -> Self {
        RecordingCs {
            num_inputs: 1,
            num_aux: 0,
            num_constraints: 0,
            m: Default::default(),
            table: Table::new(),
            error: None,
            expected,
            progress,
        }
    }

    fn push(&mut self, which: usize, lc: &LinearCombination<Scalar>) {
        let table = &mut self.table;
        let mut bad = false;
        let entries = lc.iter().filter(|(_, c)| !bool::from(c.is_zero()));
        let entries = entries.map(|(var, c)| match tagged(var) {
            Some(col) => (col, table.intern(c)),
            None => {
                bad = true;
                (0, 0)
            }
        });
        let fits = self.m[which].push_row(entries);
        if (bad || !fits) && self.error.is_none() {
            self.error = Some("more variables or terms than a u32 indexes".into());
        }
    }

    fn finish(mut self) -> Result<Precompiled> {
        let (ni, na) = (self.num_inputs, self.num_aux);
        if let Some(e) = self.error {
            bail!("the circuit cannot be recorded: {e}");
        }
        if ni + na > u32::MAX as usize || self.table.values.len() > u32::MAX as usize {
            bail!("the circuit cannot be recorded: {ni} inputs and {na} aux exceed a u32");
        }
        // Every input's `input · 0 = 0` row, as the plain path appends them.
        for i in 0..ni as u32 {
            let ok = self.m[0].push_row(std::iter::once((u32::MAX - i, 0)))
                && self.m[1].push_row(std::iter::empty())
                && self.m[2].push_row(std::iter::empty());
            if !ok {
                bail!("the circuit cannot be recorded: more terms than a u32 indexes");
            }
        }
        let first_input = u32::MAX - (ni as u32 - 1);
        for m in &mut self.m {
            m.cols.par_iter_mut().for_each(|c| {
                *c = match *c >= first_input {
                    true => u32::MAX - *c,
                    false => *c + ni as u32,
                }
            });
        }
        let [a, b, c] = self.m;
        let (_, a_aux_density) = densities(&a, ni, na);
        let (b_input_density, b_aux_density) = densities(&b, ni, na);
        Ok(Precompiled {
            num_inputs: ni,
            num_aux: na,
            num_constraints: self.num_constraints,
            digest: String::new(),
            table: self.table.values,
            a,
            b,
            c,
            a_aux_density,
            b_input_density,
            b_aux_density,
        })
    }
}

impl ConstraintSystem<Scalar> for RecordingCs<'_> {
    type Root = Self;

    crate::circuit::counting_alloc!();

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let z = LinearCombination::zero;
        let (a, b, c) = (a(z()), b(z()), c(z()));
        self.push(0, &a);
        self.push(1, &b);
        self.push(2, &c);
        self.num_constraints += 1;
        if self.num_constraints % (1 << 16) == 0 {
            (self.progress)("recording", self.num_constraints, self.expected);
        }
    }

    crate::circuit::namespaces_ignored!();
}
