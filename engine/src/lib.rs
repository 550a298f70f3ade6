//! provetop-engine: a Groth16 prover for BLS12-381 that measures itself.
//!
//! One module per concern: `circuit` turns workloads into R1CS assignments, `params` makes and
//! stores Groth16 parameters in bellperson's layout, `prover` holds the backend-independent
//! Groth16 math, `backend` the NTT and MSM executors, `pipeline` the jobs, workers and locks,
//! `telemetry` the events every stage emits and the samplers that measure the machine. The
//! config, control and event types are the contract crate's (`provetop-telemetry`),
//! re-exported here under the engine's own paths.
//!
//! Where this crate sits among the others, and the data flow: docs/architecture.md.

// Every `unsafe` block says why it is sound (denied under `clippy -D warnings`).
#![warn(clippy::undocumented_unsafe_blocks)]
// Every public item says what its name cannot (units, sides, invariants).
#![warn(missing_docs)]

pub mod backend;
pub mod circuit;
mod constraint_system;
pub mod curve;
pub mod domain;
pub mod hostmem;
pub mod memory;
pub mod params;
pub mod pipeline;
pub mod prover;
pub mod store;
pub mod telemetry;

pub use provetop_telemetry::{config, control};

pub use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
