//! Groth16 parameters: generation (`setup`), bellperson's file layout (`io`), and the on-disk
//! cache of generated parameters keyed by circuit shape (`cache`).

pub mod cache;
pub mod fixed_base;
pub mod io;
mod prepared;
pub mod residency;
pub mod setup;
pub mod shape;

use blstrs::{G1Affine, G2Affine};
use std::sync::Arc;

pub use prepared::PreparedVerifyingKey;
pub use shape::Shape;

/// The verifying key, as bellperson's `VerifyingKey`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// α in G1.
    pub alpha_g1: G1Affine,
    /// β in G1.
    pub beta_g1: G1Affine,
    /// β in G2.
    pub beta_g2: G2Affine,
    /// γ in G2.
    pub gamma_g2: G2Affine,
    /// δ in G1.
    pub delta_g1: G1Affine,
    /// δ in G2.
    pub delta_g2: G2Affine,
    /// One point per public input, the constant one first.
    pub ic: Vec<G1Affine>,
}

/// The proving key, as bellperson's `Parameters`: every query in affine form, points at
/// infinity already dropped from A and B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    /// The verifying key these parameters prove for.
    pub vk: VerifyingKey,
    /// tau^i · Z(tau) / delta for i in 0..domain−1.
    pub h: Vec<G1Affine>,
    /// (beta·A_i + alpha·B_i + C_i)(tau) / delta per aux variable.
    pub l: Vec<G1Affine>,
    /// A_i(tau) for every input, then for the aux variables A uses (`a_aux_density`).
    pub a: Vec<G1Affine>,
    /// B_i(tau) in G1 for the inputs and aux variables B uses (`b_input_density`, `b_aux_density`).
    pub b_g1: Vec<G1Affine>,
    /// B_i(tau) in G2, for the same variables as `b_g1`.
    pub b_g2: Vec<G2Affine>,
}

impl Parameters {
    /// Bytes these parameters take in memory (and, within a few bytes, on disk).
    pub fn bytes(&self) -> usize {
        let g1 = self.h.len() + self.l.len() + self.a.len() + self.b_g1.len() + self.vk.ic.len();
        g1 * 96 + self.b_g2.len() * 192 + 6 * 192
    }

    /// log2 of the evaluation domain these parameters serve.
    pub fn log2_domain(&self) -> u32 {
        (self.h.len() + 1).trailing_zeros()
    }
}

/// One circuit shape's parameters as every job of that shape shares them.
pub struct Loaded {
    /// The proving key.
    pub params: Arc<Parameters>,
    /// The verifying key prepared for pairing checks.
    pub pvk: Arc<PreparedVerifyingKey>,
    /// The shape the parameters are for.
    pub shape: Shape,
    /// Where they came from and how long that took.
    pub origin: cache::Origin,
    /// Their bytes, counted in the engine's host memory for as long as they are held.
    pub(crate) _counted: crate::memory::Reservation,
}
