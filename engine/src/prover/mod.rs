//! The Groth16 math, independent of where NTTs and MSMs run: which scalars meet which query,
//! the r/s randomisation and assembly of a proof, the proof format, and verification.

mod groth16;
mod proof;
mod verify;

pub use groth16::{assemble, prepare, Msms, RegionResult};
pub use proof::Proof;
pub use verify::{verify, PreparedVerifyingKey, VerifyError};
