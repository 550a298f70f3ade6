//! A verifying key prepared for pairing checks: kept beside the parameters it comes from (the
//! store holds one per set), so the prover's `verify` only reads it.

use blstrs::{G1Affine, G2Prepared, Gt};

use super::VerifyingKey;

/// A verifying key ready for pairing checks: e(α, β) computed and −γ, −δ prepared once.
pub struct PreparedVerifyingKey {
    pub(crate) alpha_beta: Gt,
    pub(crate) neg_gamma: G2Prepared,
    pub(crate) neg_delta: G2Prepared,
    pub(crate) ic: Vec<G1Affine>,
}

impl PreparedVerifyingKey {
    /// Prepares `vk` (one pairing and two G2 preparations).
    pub fn new(vk: &VerifyingKey) -> Self {
        PreparedVerifyingKey {
            alpha_beta: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
            neg_gamma: G2Prepared::from(-vk.gamma_g2),
            neg_delta: G2Prepared::from(-vk.delta_g2),
            ic: vk.ic.clone(),
        }
    }
}
