//! Filecoin PoRep C2 for the provetop engine.
//!
//! Filecoin's own crates (filecoin-proofs, storage-proofs-porep) build the stacked-DRG PoRep
//! circuit of each partition from a commit-phase-1 (C1) output; the engine synthesises and
//! proves them on its backends, and the proofs verify with our verifier and with
//! filecoin-proofs' `verify_seal`. The C1 output comes from a file Lotus or Curio wrote
//! ([`c1`]) or from a test-size sector sealed here ([`seal`]).

#![warn(missing_docs)]

pub mod c1;
pub mod filecoin;
pub mod seal;
pub mod sector;
pub mod source;
mod witness;

pub use c1::C1;
pub use sector::{ProofVersion, SectorSize};
pub use source::{prepare, Porep, PorepArgs};
