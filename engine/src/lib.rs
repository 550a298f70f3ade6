//! provetop-engine: a Groth16 prover for BLS12-381 that measures itself.
//!
//! One module per concern: `circuit` turns workloads into R1CS assignments, `params` makes and
//! stores Groth16 parameters in bellperson's layout, `prover` holds the backend-independent
//! Groth16 math, `backend` the NTT and MSM executors, `pipeline` the jobs, workers and locks,
//! `telemetry` the events every stage emits.

pub mod backend;
pub mod circuit;
pub mod config;
pub mod control;
pub mod curve;
pub mod hostmem;
pub mod memory;
pub mod params;
pub mod pipeline;
pub mod prover;
pub mod report;
pub mod telemetry;

pub use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
