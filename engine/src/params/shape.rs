//! The shape of a circuit: its counts and a digest of every constraint's terms. Two circuits
//! with the same shape share Groth16 parameters.

use anyhow::Result;
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::PrimeField;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A circuit's counts and the digest of its constraints: circuits of one shape share parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Public inputs including the constant one.
    pub num_inputs: usize,
    /// Aux (private) variables.
    pub num_aux: usize,
    /// Constraints of the circuit, without the `x * 0 = 0` row of each input.
    pub num_constraints: usize,
    /// Hex SHA-256 of the constraint structure.
    pub digest: String,
}

impl Shape {
    /// Rows of the evaluation domain before padding to a power of two.
    pub fn num_rows(&self) -> usize {
        self.num_constraints + self.num_inputs
    }

    /// log2 of the evaluation domain.
    pub fn log2_domain(&self) -> u32 {
        self.num_rows().next_power_of_two().trailing_zeros()
    }

    /// Synthesises `circuit` without a witness, hashing each constraint's terms.
    pub fn of<C: Circuit<Scalar>>(circuit: C) -> Result<Shape> {
        let mut cs = ShapeCs::default();
        circuit
            .synthesize(&mut cs)
            .map_err(|e| anyhow::anyhow!("synthesis failed: {e}"))?;
        Ok(Shape {
            num_inputs: cs.num_inputs,
            num_aux: cs.num_aux,
            num_constraints: cs.num_constraints,
            digest: hex(&cs.hasher.finalize()),
        })
    }
}

/// Lower-case hex of `bytes`, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

struct ShapeCs {
    num_inputs: usize,
    num_aux: usize,
    num_constraints: usize,
    hasher: Sha256,
}

impl Default for ShapeCs {
    fn default() -> Self {
        ShapeCs {
            num_inputs: 1,
            num_aux: 0,
            num_constraints: 0,
            hasher: Sha256::new(),
        }
    }
}

impl ShapeCs {
    fn hash_lc(&mut self, tag: u8, lc: &LinearCombination<Scalar>) {
        self.hasher.update([tag]);
        for (var, coeff) in lc.iter() {
            let (kind, i) = match var.get_unchecked() {
                Index::Input(i) => (0u8, i),
                Index::Aux(i) => (1u8, i),
            };
            self.hasher.update([kind]);
            self.hasher.update((i as u64).to_le_bytes());
            self.hasher.update(coeff.to_repr());
        }
    }
}

impl ConstraintSystem<Scalar> for ShapeCs {
    type Root = Self;

    crate::constraint_system::counting_alloc!();

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.num_constraints += 1;
        self.hash_lc(b'a', &a(LinearCombination::zero()));
        self.hash_lc(b'b', &b(LinearCombination::zero()));
        self.hash_lc(b'c', &c(LinearCombination::zero()));
    }

    crate::constraint_system::namespaces_ignored!();
}
