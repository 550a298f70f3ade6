//! The witness alone: a constraint system whose allocations run their closures and whose
//! `enforce` runs none, so no linear combination is built for a constraint. It says it is a
//! witness generator, so gadgets with a bulk path (neptune's `SizedWitness`) write their values
//! straight into it.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

/// A partition's assignment: inputs (the constant one first) and aux, in allocation order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Witness {
    /// Public inputs, the constant one first.
    pub input: Vec<Scalar>,
    /// Aux (private) variables, in allocation order.
    pub aux: Vec<Scalar>,
}

impl Witness {
    /// Host memory the witness holds.
    pub fn bytes(&self) -> usize {
        (self.input.len() + self.aux.len()) * 32
    }
}

/// A constraint system that records the witness alone: allocations run, `enforce` does nothing.
#[derive(Clone, Debug)]
pub struct WitnessCs {
    w: Witness,
}

impl WitnessCs {
    /// Room for `aux` values ahead, so a large partition's witness is not copied as it grows.
    pub fn with_capacity(aux: usize) -> Self {
        WitnessCs {
            w: Witness {
                input: vec![Scalar::ONE],
                aux: Vec::with_capacity(aux),
            },
        }
    }

    /// The aux values so far, for a fast path that computes a gadget's allocations itself and
    /// appends them (`sha256`).
    pub fn aux_mut(&mut self) -> &mut Vec<Scalar> {
        &mut self.w.aux
    }

    /// The witness allocated so far.
    pub fn finish(self) -> Witness {
        self.w
    }
}

impl Default for WitnessCs {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    /// A piece for `extend`, without the constant one: as bellperson's proving system, whose
    /// callers allocate a temporary one first (storage-proofs-post's FallbackPoSt circuit
    /// does), which `extend` skips.
    fn new() -> Self {
        WitnessCs {
            w: Witness::default(),
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.w.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.w.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.w.input.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(
            self.w.input.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
    }

    crate::circuit::namespaces_ignored!();

    fn is_extensible() -> bool {
        true
    }

    /// Appends an independent piece synthesised in its own system, as bellpepper's
    /// `WitnessCS` does: its first input is that system's constant one, not a new input.
    fn extend(&mut self, other: &Self) {
        self.w.input.extend_from_slice(&other.w.input[1..]);
        self.w.aux.extend_from_slice(&other.w.aux);
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.w.input.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.w.aux.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let (a, i) = (self.w.aux.len(), self.w.input.len());
        self.w.aux.resize(a + aux_n, Scalar::ZERO);
        self.w.input.resize(i + inputs_n, Scalar::ZERO);
        (&mut self.w.aux[a..], &mut self.w.input[i..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        let i = self.w.input.len();
        self.w.input.resize(i + n, Scalar::ZERO);
        &mut self.w.input[i..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        let a = self.w.aux.len();
        self.w.aux.resize(a + n, Scalar::ZERO);
        &mut self.w.aux[a..]
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.w.input
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.w.aux
    }
}
