//! Proofs in bellperson's layout: A (48 bytes), B (96), C (48), each compressed.

use anyhow::{bail, Result};
use blstrs::{G1Affine, G2Affine};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl Proof {
    pub const BYTES: usize = 192;

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
        let a = Option::from(G1Affine::from_compressed(bytes[..48].try_into().unwrap()));
        let b = Option::from(G2Affine::from_compressed(
            bytes[48..144].try_into().unwrap(),
        ));
        let c = Option::from(G1Affine::from_compressed(bytes[144..].try_into().unwrap()));
        match (a, b, c) {
            (Some(a), Some(b), Some(c)) => Ok(Proof { a, b, c }),
            (None, ..) => bail!("proof element A is not a valid compressed G1 point"),
            (_, None, _) => bail!("proof element B is not a valid compressed G2 point"),
            _ => bail!("proof element C is not a valid compressed G1 point"),
        }
    }
}
