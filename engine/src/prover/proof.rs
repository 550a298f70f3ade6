//! Proofs in bellperson's layout: A (48 bytes), B (96), C (48), each compressed.

use anyhow::{bail, Result};
use blstrs::{G1Affine, G2Affine};

/// A Groth16 proof: A and C in G1, B in G2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// A in G1.
    pub a: G1Affine,
    /// B in G2.
    pub b: G2Affine,
    /// C in G1.
    pub c: G1Affine,
}

impl Proof {
    /// Bytes of an encoded proof: A, B and C compressed (48 + 96 + 48).
    pub const BYTES: usize = 192;

    /// Encodes the proof as bellperson's `Proof::write` does: A, B, C compressed.
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut out = [0u8; Self::BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Decodes and checks each point is on the curve and in the prime-order subgroup.
    pub fn from_bytes(bytes: &[u8]) -> Result<Proof> {
        if bytes.len() != Self::BYTES {
            bail!("a proof is {} bytes, got {}", Self::BYTES, bytes.len());
        }
        // The length is checked above, so each slice has its point's exact size.
        let a = Option::from(G1Affine::from_compressed(
            bytes[..48].try_into().expect("48 bytes"),
        ));
        let b = Option::from(G2Affine::from_compressed(
            bytes[48..144].try_into().expect("96 bytes"),
        ));
        let c = Option::from(G1Affine::from_compressed(
            bytes[144..].try_into().expect("48 bytes"),
        ));
        match (a, b, c) {
            (Some(a), Some(b), Some(c)) => Ok(Proof { a, b, c }),
            (None, ..) => bail!("proof element A is not a valid compressed G1 point"),
            (_, None, _) => bail!("proof element B is not a valid compressed G2 point"),
            _ => bail!("proof element C is not a valid compressed G1 point"),
        }
    }
}
