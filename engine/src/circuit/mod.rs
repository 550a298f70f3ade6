//! Workloads and synthesis: every built-in circuit, deterministic from a seed, turned into the
//! A/B/C evaluations, assignments and densities the prover consumes.

// Shared with params' constraint systems, which must not reach up into circuits.
pub(crate) use crate::constraint_system::{counting_alloc, namespaces_ignored};

mod assignment;
pub mod external;
pub mod precompiled;
pub mod sha256;
pub mod synthetic;

pub use assignment::{is_satisfied, par_columns, par_columns_into, Assignment, Density, ProvingCs};
// The shape keys the parameters, so it lives with them; found here as ever.
pub use crate::params::shape::{self, Shape};

use anyhow::{bail, Result};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use serde::{Deserialize, Serialize};

use crate::params::setup::{self, Products, Progress};
use crate::params::Parameters;
use precompiled::{Precompiled, Witness};
use rand::rngs::OsRng;
use sha256::Sha256Circuit;
use synthetic::SyntheticCircuit;

/// A built-in workload: which circuit, at which size.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "lowercase")]
pub enum Workload {
    /// SHA-256 of `blocks` × 64 bytes, the digest packed into public inputs.
    Sha256 {
        /// 64-byte blocks of the preimage, 1..=4096.
        blocks: usize,
    },
    /// PoRep-shaped rows that, with the inputs, fill a 2^log2_constraints domain.
    Synthetic {
        /// log2 of the domain the rows and inputs fill, 4..=27.
        log2_constraints: u32,
    },
    /// A circuit from outside the engine (see [`external`]), such as a PoRep C2, carried by
    /// its jobs. Never read from a file: only its name is written.
    #[serde(skip_deserializing)]
    External {
        /// The circuit and its name.
        circuit: external::External,
    },
}

impl Workload {
    /// Checks the workload's size is in range (blocks 1..=4096, log2_constraints 4..=27).
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
            _ => Ok(()),
        }
    }

    /// Short, file-name-safe label: `sha256-b2`, `synthetic-k14`.
    pub fn label(&self) -> String {
        match self {
            Workload::Sha256 { blocks } => format!("sha256-b{blocks}"),
            Workload::Synthetic { log2_constraints } => format!("synthetic-k{log2_constraints}"),
            Workload::External { circuit } => circuit.name().to_string(),
        }
    }

    /// What the workload proves, as reports group jobs: `synthetic`, `sha256`, or an external
    /// circuit's own kind (a Filecoin proof's: `porep`, `window-post`, …).
    pub fn kind(&self) -> String {
        match self {
            Workload::Sha256 { .. } => "sha256".into(),
            Workload::Synthetic { .. } => "synthetic".into(),
            Workload::External { circuit } => circuit.source().kind().to_string(),
        }
    }

    /// Whether one partition's witness keeps several cores busy: the built-in workloads as
    /// they are tuned, an external circuit as its source says.
    pub fn parallel_witness(&self) -> bool {
        match self {
            Workload::External { circuit } => circuit.source().parallel_witness(),
            _ => true,
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
                let name = circuit.name();
                bail!("`{name}` is proved through its own source, not a built-in circuit")
            }
        })
    }

    /// Synthesises one partition on the current rayon pool: `seed` picks a built-in
    /// workload's witness, `partition` which of an external job's circuits.
    pub fn synthesize(&self, seed: u64, partition: u32) -> Result<Assignment> {
        self.synthesize_into(seed, partition, None)
    }

    /// `synthesize`, with A, B and C written into `abc` when given (each at least as long as
    /// the rows; the assignment's own a, b and c are then empty): the synthetic workload writes
    /// them there directly, the others are copied in after synthesis.
    pub fn synthesize_into(
        &self,
        seed: u64,
        partition: u32,
        abc: Option<[&mut [Scalar]; 3]>,
    ) -> Result<Assignment> {
        let room = |abc: &Option<[&mut [Scalar]; 3]>, rows: usize| match abc {
            Some(d) if d.iter().any(|d| d.len() < rows) => {
                bail!("{rows} rows do not fit the {} lent for them", d[0].len())
            }
            _ => Ok(()),
        };
        let mut asg = match *self {
            Workload::Synthetic { log2_constraints } => {
                let circuit = SyntheticCircuit::new(log2_constraints, seed);
                room(&abc, circuit.num_rows())?;
                return Ok(circuit.synthesize_parallel_into(abc));
            }
            Workload::External { ref circuit } => circuit.source().synthesize(partition)?,
            _ => synthesize_generic(self.circuit(seed)?)?,
        };
        room(&abc, asg.num_rows())?;
        if let Some(dst) = abc {
            asg.move_abc_into(dst);
        }
        Ok(asg)
    }

    /// The witness alone of one partition (`seed` and `partition` as for `synthesize`), for
    /// the pre-compiled path: on several cores where the circuit allows.
    pub fn witness(&self, seed: u64, partition: u32) -> Result<Witness> {
        match *self {
            Workload::Synthetic { log2_constraints } => {
                Ok(SyntheticCircuit::new(log2_constraints, seed).witness())
            }
            Workload::External { ref circuit } => circuit.source().witness(partition),
            Workload::Sha256 { blocks } => Ok(Sha256Circuit::new(blocks, seed).witness()),
        }
    }

    /// The constraint structure recorded as matrices (see [`precompiled`]), for `shape`.
    pub fn record(&self, shape: &Shape, progress: Progress) -> Result<Precompiled> {
        match *self {
            Workload::External { ref circuit } => circuit.source().record(shape, progress),
            _ => precompiled::record(self.circuit(0)?, shape, progress),
        }
    }

    /// Counts and a digest of the constraint structure, which keys the params cache.
    pub fn shape(&self) -> Result<Shape> {
        match *self {
            // The synthetic structure is a pure function of k and the generator's version.
            Workload::Synthetic { log2_constraints } => Ok(synthetic::shape(log2_constraints)),
            Workload::External { ref circuit } => circuit.source().shape(),
            _ => Shape::of(self.circuit(0)?),
        }
    }

    /// Fresh parameters for this workload's structure, their fixed-base products on
    /// `products` (an external workload generates its own, on the CPU).
    pub fn generate_params(
        &self,
        shape: &Shape,
        progress: Progress,
        products: &dyn Products,
    ) -> Result<Parameters> {
        let rng = &mut OsRng;
        match *self {
            Workload::External { ref circuit } => {
                circuit.source().generate_params(shape, progress, products)
            }
            Workload::Synthetic { log2_constraints } => {
                let circuit = SyntheticCircuit::new(log2_constraints, 0);
                setup::generate_with(shape, rng, progress, products, |lagrange| {
                    Ok(circuit.evaluate_at(lagrange))
                })
            }
            Workload::Sha256 { .. } => {
                let circuit = self.circuit(0)?;
                setup::generate_with(shape, rng, progress, products, |lagrange| {
                    setup::evaluate_reporting(circuit, shape, lagrange, progress)
                })
            }
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
    /// `Workload::Sha256`'s circuit.
    Sha256(Sha256Circuit),
    /// `Workload::Synthetic`'s circuit.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesis_into_lent_memory_equals_synthesis_into_vectors() {
        for w in [
            Workload::Sha256 { blocks: 1 },
            Workload::Synthetic {
                log2_constraints: 8,
            },
        ] {
            let want = w.synthesize(3, 0).unwrap();
            let n = want.num_rows();
            let mut lent = [0, 1, 2].map(|_| vec![Scalar::from(5u64); n + 2]);
            let [a, b, c] = &mut lent;
            let got = w.synthesize_into(3, 0, Some([a, b, c])).unwrap();
            assert_eq!((got.num_rows(), got.a.len()), (n, 0), "{}", w.label());
            for (l, v) in lent.iter().zip([&want.a, &want.b, &want.c]) {
                assert_eq!((&l[..n], l[n]), (&v[..], Scalar::from(5u64)));
            }
            assert_eq!((got.aux, got.input), (want.aux, want.input));
            let [a, b, c] = &mut lent.map(|v| v[..n - 1].to_vec());
            let short = w.synthesize_into(3, 0, Some([a, b, c])).unwrap_err();
            assert!(short.to_string().contains("do not fit"), "{short}");
        }
    }
}
