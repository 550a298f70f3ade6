//! Workloads and synthesis: every built-in circuit, deterministic from a seed, turned into the
//! A/B/C evaluations, assignments and densities the prover consumes.

/// Namespaces only name things: none of our constraint systems keeps names.
macro_rules! namespaces_ignored {
    () => {
        fn push_namespace<NR, N>(&mut self, _: N)
        where
            NR: Into<String>,
            N: FnOnce() -> NR,
        {
        }

        fn pop_namespace(&mut self) {}

        fn get_root(&mut self) -> &mut Self::Root {
            self
        }
    };
}
pub(crate) use namespaces_ignored;

/// Allocation for constraint systems that count variables and never look at their values.
macro_rules! counting_alloc {
    () => {
        fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
        where
            F: FnOnce() -> Result<Scalar, SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            self.num_aux += 1;
            Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
        }

        fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
        where
            F: FnOnce() -> Result<Scalar, SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            self.num_inputs += 1;
            Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
        }
    };
}
pub(crate) use counting_alloc;

mod assignment;
pub mod external;
pub mod sha256;
pub mod shape;
pub mod synthetic;

pub use assignment::{is_satisfied, par_columns, Assignment, Density, ProvingCs};
pub use shape::Shape;

use anyhow::{bail, Result};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use serde::{Deserialize, Serialize};

use crate::params::{setup, setup::Progress, Parameters};
use rand::rngs::OsRng;
use sha256::Sha256Circuit;
use synthetic::SyntheticCircuit;

/// A built-in workload: which circuit, at which size.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "lowercase")]
pub enum Workload {
    /// SHA-256 of `blocks` × 64 bytes, the digest packed into public inputs.
    Sha256 { blocks: usize },
    /// PoRep-shaped rows that, with the inputs, fill a 2^log2_constraints domain.
    Synthetic { log2_constraints: u32 },
    /// A circuit registered from outside the engine (see [`external`]), such as a PoRep C2.
    External { circuit: String },
}

impl Workload {
    pub fn validate(&self) -> Result<()> {
        match *self {
            Workload::Sha256 { blocks } if blocks == 0 || blocks > 4096 => {
                bail!("--blocks must be between 1 and 4096, got {blocks}")
            }
            Workload::Synthetic {
                log2_constraints: k,
            } if !(4..=27).contains(&k) => {
                bail!("--log2-constraints must be between 4 and 27, got {k}")
            }
            Workload::External { ref circuit } => external::get(circuit).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Short, file-name-safe label: `sha256-b2`, `synthetic-k14`.
    pub fn label(&self) -> String {
        match self {
            Workload::Sha256 { blocks } => format!("sha256-b{blocks}"),
            Workload::Synthetic { log2_constraints } => format!("synthetic-k{log2_constraints}"),
            Workload::External { circuit } => circuit.clone(),
        }
    }

    /// The circuit of one partition of a built-in workload; `seed` picks its witness, never
    /// its shape. An external workload has no circuit of this type: an error.
    pub fn circuit(&self, seed: u64) -> Result<AnyCircuit> {
        Ok(match *self {
            Workload::Sha256 { blocks } => AnyCircuit::Sha256(Sha256Circuit::new(blocks, seed)),
            Workload::Synthetic { log2_constraints } => {
                AnyCircuit::Synthetic(SyntheticCircuit::new(log2_constraints, seed))
            }
            Workload::External { ref circuit } => {
                bail!("`{circuit}` is proved through its registered source, not a built-in circuit")
            }
        })
    }

    /// Synthesises one partition on the current rayon pool: `seed` picks a built-in
    /// workload's witness, `partition` which of an external job's circuits.
    pub fn synthesize(&self, seed: u64, partition: u32) -> Result<Assignment> {
        match *self {
            Workload::Synthetic { log2_constraints } => {
                Ok(SyntheticCircuit::new(log2_constraints, seed).synthesize_parallel())
            }
            Workload::External { ref circuit } => external::get(circuit)?.synthesize(partition),
            _ => synthesize_generic(self.circuit(seed)?),
        }
    }

    /// Counts and a digest of the constraint structure, which keys the params cache.
    pub fn shape(&self) -> Result<Shape> {
        match *self {
            // The synthetic structure is a pure function of k and the generator's version.
            Workload::Synthetic { log2_constraints } => Ok(synthetic::shape(log2_constraints)),
            Workload::External { ref circuit } => external::get(circuit)?.shape(),
            _ => Shape::of(self.circuit(0)?),
        }
    }

    /// Fresh parameters for this workload's structure.
    pub fn generate_params(&self, shape: &Shape, progress: Progress) -> Result<Parameters> {
        match *self {
            Workload::External { ref circuit } => {
                external::get(circuit)?.generate_params(shape, progress)
            }
            _ => setup::generate(self.circuit(0)?, shape, &mut OsRng, progress),
        }
    }
}

/// Runs any bellpepper circuit through the evaluating constraint system.
pub fn synthesize_generic<C: Circuit<Scalar>>(circuit: C) -> Result<Assignment> {
    let mut cs = ProvingCs::new();
    circuit
        .synthesize(&mut cs)
        .map_err(|e| anyhow::anyhow!("synthesis failed: {e}"))?;
    Ok(cs.finish())
}

/// The seed of partition `partition` of job `job`, so every partition has its own witness.
pub fn partition_seed(seed: u64, job: u64, partition: u32) -> u64 {
    synthetic::mix(seed ^ synthetic::mix(job.wrapping_mul(0x1_0000) ^ partition as u64))
}

/// Every built-in circuit, as one type the bellpepper `Circuit` trait can take.
pub enum AnyCircuit {
    Sha256(Sha256Circuit),
    Synthetic(SyntheticCircuit),
}

impl Circuit<Scalar> for AnyCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            AnyCircuit::Sha256(c) => c.synthesize(cs),
            AnyCircuit::Synthetic(c) => c.synthesize(cs),
        }
    }
}
