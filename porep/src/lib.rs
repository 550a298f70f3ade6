//! Filecoin's proofs for the provetop engine: PoRep C2, SnapDeals, WindowPoSt and WinningPoSt.
//!
//! Filecoin's own crates (filecoin-proofs, storage-proofs-porep, -update and -post) build each
//! proof's partition circuits from its inputs as Curio sends them (a C1 output, vanilla
//! proofs); the engine synthesises and proves them on its backends, and every proof verifies
//! with our verifier and with filecoin-proofs' own (`verify_seal`,
//! `verify_empty_sector_update_proof`, `verify_window_post`, `verify_winning_post`). The inputs
//! come from a file or request ([`c1`], [`inputs`]) or from a test-size sector sealed here
//! ([`seal`], [`vanilla`]).
//!
//! Where this crate sits among the others, and the data flow: docs/architecture.md.

#![warn(missing_docs)]

pub mod c1;
mod compound;
mod diagnose;
pub mod filecoin;
pub mod inputs;
pub mod kind;
pub mod post;
pub mod prepared;
pub mod request;
pub mod seal;
pub mod sector;
pub mod snap;
pub mod source;
pub mod sparse;
pub mod vanilla;
mod witness;

pub use c1::C1;
pub use compound::{guarded, MissingParams, Registered};
pub use inputs::Inputs;
pub use kind::Kind;
pub use prepared::Prepared;
pub use sector::{ProofVersion, SectorSize};
pub use source::{prepare, Porep, PorepArgs};
