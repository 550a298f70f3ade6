//! Pre-compiled circuits: a circuit shape's A, B and C recorded once as sparse matrices
//! ([`record`], cached beside the parameters by [`CircuitCache`]); per partition, synthesis
//! computes only the witness ([`WitnessCs`]) and a, b, c come from sparse products
//! ([`Precompiled::evaluate`]), giving exactly the [`crate::circuit::Assignment`] of the plain
//! path. The matrices keep the layout the CPU and GPU evaluators share (CSR-FORMAT.md).

mod cache;
mod eval;
mod file;
mod matrix;
mod record;
pub mod sha256;
#[cfg(test)]
mod tests;
mod witness;

pub use cache::CircuitCache;
pub use matrix::Csr;
pub use record::record;
pub use witness::{Witness, WitnessCs};

use anyhow::{anyhow, Result};
use bellpepper_core::Circuit;
use blstrs::Scalar;

use super::Density;

/// One circuit shape's constraints as matrices over the assignment [inputs…, aux…], the input
/// rows `input · 0 = 0` last, with the densities they imply. Built only by recording or by
/// reading a checked file, so every column and coefficient index is in range.
#[derive(Clone, Debug, PartialEq)]
pub struct Precompiled {
    num_inputs: usize,
    num_aux: usize,
    /// Constraints of the circuit, without the input rows.
    num_constraints: usize,
    /// The digest of the shape it was recorded for (its cache key).
    digest: String,
    /// Coefficients: 1 and −1 first, then each other distinct one.
    table: Vec<Scalar>,
    a: Csr,
    b: Csr,
    c: Csr,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
}

impl Precompiled {
    /// Inputs including the constant one.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Aux (private) variables.
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }

    /// Constraints of the circuit, without the input rows.
    pub fn num_constraints(&self) -> usize {
        self.num_constraints
    }

    /// Hex SHA-256 of the shape it was recorded for (its cache key).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Rows of every matrix: the constraints and the input rows.
    pub fn rows(&self) -> usize {
        self.num_constraints + self.num_inputs
    }

    /// The distinct coefficients the matrices index: 1 and −1 first.
    pub fn table(&self) -> &[Scalar] {
        &self.table
    }

    /// A, B and C.
    pub fn matrices(&self) -> [&Csr; 3] {
        [&self.a, &self.b, &self.c]
    }

    /// A's aux density, B's input and aux densities: every partition's.
    pub fn densities(&self) -> [&Density; 3] {
        [
            &self.a_aux_density,
            &self.b_input_density,
            &self.b_aux_density,
        ]
    }

    /// Entries of the three matrices.
    pub fn nnz(&self) -> usize {
        self.matrices().iter().map(|m| m.nnz()).sum()
    }

    /// Host memory of the matrices and the table (the densities are a bit a variable more).
    pub fn bytes(&self) -> usize {
        self.matrices().iter().map(|m| m.bytes()).sum::<usize>() + self.table.len() * 32
    }

    /// Bytes of its cache file, within its header.
    pub fn file_bytes(&self) -> u64 {
        self.bytes() as u64 + 128
    }
}

/// The witness of `circuit` alone, computed in a [`WitnessCs`] with room for `aux` values.
pub fn witness_of<C: Circuit<Scalar>>(circuit: C, aux: usize) -> Result<Witness> {
    let mut cs = WitnessCs::with_capacity(aux);
    circuit
        .synthesize(&mut cs)
        .map_err(|e| anyhow!("witness generation failed: {e}"))?;
    Ok(cs.finish())
}
