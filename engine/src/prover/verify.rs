//! Verification with a prepared key: one multi-Miller loop and one final exponentiation.

use blstrs::{Bls12, G1Projective, G2Prepared, Scalar};
use group::{prime::PrimeCurveAffine, Curve};
use pairing::{MillerLoopResult, MultiMillerLoop};

use super::Proof;
pub use crate::params::PreparedVerifyingKey;

/// Why a proof did not verify.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    /// The inputs given are not as many as the key's IC points, less the constant one's.
    #[error("wrong number of public inputs: the key takes {expected}, got {got}")]
    InputCount {
        /// Public inputs the key takes, without the leading one.
        expected: usize,
        /// Public inputs given.
        got: usize,
    },
    /// The pairing equation does not hold.
    #[error("the pairing check failed: the proof does not verify for these public inputs")]
    Rejected,
}

/// Checks e(A, B) = e(α, β) · e(Σ inputs·IC, γ) · e(C, δ).
pub fn verify(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    inputs: &[Scalar],
) -> Result<(), VerifyError> {
    if inputs.len() + 1 != pvk.ic.len() {
        return Err(VerifyError::InputCount {
            expected: pvk.ic.len() - 1,
            got: inputs.len(),
        });
    }
    let acc: G1Projective = pvk.ic[1..]
        .iter()
        .zip(inputs)
        .fold(pvk.ic[0].to_curve(), |acc, (p, x)| acc + *p * x);
    let acc = acc.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma),
        (&proof.c, &pvk.neg_delta),
    ]);
    if ml.final_exponentiation() == pvk.alpha_beta {
        Ok(())
    } else {
        Err(VerifyError::Rejected)
    }
}
