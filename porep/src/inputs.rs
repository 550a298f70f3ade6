//! A PoSt or SnapDeals proof's inputs as Curio sends them in a `SubmitProofRequest`: vanilla
//! proofs in bincode (filecoin-proofs' encoding), commitments and randomness as raw bytes.

use anyhow::{anyhow, Result};
use bincode::Options;
use serde::{de::DeserializeOwned, Serialize};

use crate::kind::Kind;

/// What a SnapDeals, WindowPoSt or WinningPoSt request carries.
#[derive(Clone, Debug)]
pub struct Inputs {
    /// Snap, WindowPost or WinningPost.
    pub kind: Kind,
    /// filecoin-proofs-api's registered proof: a `RegisteredUpdateProof` for SnapDeals, a
    /// `RegisteredPoStProof` for PoSt.
    pub registered_proof: u64,
    /// The miner's prover id (PoSt).
    pub prover_id: [u8; 32],
    /// The PoSt's challenge seed: 32 bytes.
    pub randomness: Vec<u8>,
    /// The WindowPoSt partition.
    pub partition_index: u32,
    /// SnapDeals: the sector's sealed commitment before the update.
    pub comm_r_old: Vec<u8>,
    /// SnapDeals: its sealed commitment after.
    pub comm_r_new: Vec<u8>,
    /// SnapDeals: the new data's commitment.
    pub comm_d_new: Vec<u8>,
    /// One `PartitionProof` per SnapDeals partition, one `FallbackPoStSectorProof` per PoSt
    /// sector.
    pub vanilla_proofs: Vec<Vec<u8>>,
}

impl Inputs {
    /// Inputs of `kind` with every field empty, to fill in.
    pub fn new(kind: Kind) -> Inputs {
        Inputs {
            kind,
            registered_proof: 0,
            prover_id: [0; 32],
            randomness: vec![],
            partition_index: 0,
            comm_r_old: vec![],
            comm_r_new: vec![],
            comm_d_new: vec![],
            vanilla_proofs: vec![],
        }
    }
}

/// The largest vanilla proof decoded: a 32GiB SnapDeals partition's is about half a megabyte,
/// a PoSt sector's tens of kilobytes.
pub const MAX_VANILLA_PROOF: u64 = 16 << 20;

/// filecoin-proofs' bincode options (fixed-width integers), bounded, and nothing left over.
fn options() -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_limit(MAX_VANILLA_PROOF)
}

/// A vanilla proof from its bytes; a length the bytes cannot hold is refused before anything
/// is allocated for it.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    if bytes.len() as u64 > MAX_VANILLA_PROOF {
        return Err(anyhow!(
            "{} bytes; a vanilla proof has at most {MAX_VANILLA_PROOF}",
            bytes.len()
        ));
    }
    options()
        .deserialize(bytes)
        .map_err(|e| anyhow!("bincode: {e}"))
}

/// A vanilla proof's bytes, as filecoin-proofs-api hands them to Curio.
pub(crate) fn encode<T: Serialize>(proof: &T) -> Result<Vec<u8>> {
    options()
        .serialize(proof)
        .map_err(|e| anyhow!("encoding a vanilla proof: {e}"))
}
