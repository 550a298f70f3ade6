//! The SHA-256 workload: bellpepper's gadget over a preimage of N 64-byte blocks drawn from the
//! seed, with the 256-bit digest packed into public inputs.

use bellpepper::gadgets::{multipack, sha256::sha256};
use bellpepper_core::{
    boolean::{AllocatedBit, Boolean},
    Circuit, ConstraintSystem, SynthesisError,
};
use blstrs::Scalar;
use ff::Field;

use super::precompiled::{self, sha256::Bit, Witness};
use super::synthetic::mix;

/// SHA-256 over a preimage of whole 64-byte blocks, its digest packed into public inputs.
#[derive(Clone, Debug)]
pub struct Sha256Circuit {
    preimage: Vec<u8>,
}

impl Sha256Circuit {
    /// A preimage of `blocks` × 64 bytes, a pure function of `seed`.
    pub fn new(blocks: usize, seed: u64) -> Self {
        let preimage = (0..blocks * 64)
            .map(|i| mix(seed ^ mix(i as u64)) as u8)
            .collect();
        Sha256Circuit { preimage }
    }

    /// The preimage hashed: `blocks` × 64 bytes.
    pub fn preimage(&self) -> &[u8] {
        &self.preimage
    }

    /// The witness alone, the digest computed natively ([`precompiled::sha256`]): what
    /// `synthesize` allocates, without running the gadget.
    pub fn witness(&self) -> Witness {
        let bits = multipack::bytes_to_bits(&self.preimage);
        let mut aux = Vec::with_capacity(bits.len() + 30_000 * (bits.len() / 512 + 1));
        let input: Vec<Bit> = bits
            .iter()
            .map(|&value| {
                aux.push(if value { Scalar::ONE } else { Scalar::ZERO });
                Bit::Var {
                    value,
                    negated: false,
                }
            })
            .collect();
        let digest = precompiled::sha256::sha256(&mut aux, &input);
        let capacity = <Scalar as ff::PrimeField>::CAPACITY as usize;
        let packed = digest.chunks(capacity).map(precompiled::sha256::pack);
        Witness {
            input: std::iter::once(Scalar::ONE).chain(packed).collect(),
            aux,
        }
    }

    /// The public inputs a verifier expects: the packed digest of the preimage.
    pub fn expected_inputs(&self) -> Vec<Scalar> {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(&self.preimage);
        multipack::compute_multipacking(&multipack::bytes_to_bits(&digest))
    }
}

impl Circuit<Scalar> for Sha256Circuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits = multipack::bytes_to_bits(&self.preimage)
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                AllocatedBit::alloc(cs.namespace(|| format!("preimage bit {i}")), Some(b))
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::{is_satisfied, synthesize_generic};

    #[test]
    fn digest_is_the_public_input() {
        let c = Sha256Circuit::new(2, 9);
        let want = c.expected_inputs();
        let asg = synthesize_generic(c).unwrap();
        assert_eq!(asg.public_inputs(), &want[..]);
        assert_eq!(is_satisfied(&asg), None);
    }
}
