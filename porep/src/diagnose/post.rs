//! WindowPoSt and WinningPoSt: storage-proofs-post's checks of each sector (comm_r from comm_c
//! and comm_r_last) and each challenged leaf (its opening's root, length and leaf index, the
//! leaf drawn from the randomness and the sector number), as its verifier runs them.

use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::FallbackPoStSectorProof;
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_post::fallback::{generate_leaf_challenge, get_challenge_index, PublicParams};

/// The first failing check of a PoSt's sector proofs (in the request's order, the partition's
/// sectors from `first_index` of the deadline), in words; None when every check passes.
pub(crate) fn post<Tree: 'static + MerkleTreeTrait>(
    pp: &PublicParams,
    randomness: <Tree::Hasher as Hasher>::Domain,
    winning: bool,
    first_index: usize,
    sectors: &[FallbackPoStSectorProof<Tree>],
) -> Option<String> {
    let leaves = (pp.sector_size / 32) as usize;
    for (i, s) in sectors.iter().enumerate() {
        let id = u64::from(s.sector_id);
        let proof = s.vanilla_proof.sectors.first()?;
        let comm_r_last = proof.inclusion_proofs.first()?.root();
        if <Tree::Hasher as Hasher>::Function::hash2(&proof.comm_c, &comm_r_last) != s.comm_r {
            return Some(format!(
                "sector {id}: the comm_r check fails (H(comm_c, comm_r_last) is not its comm_r)"
            ));
        }
        for (n, opening) in proof.inclusion_proofs.iter().enumerate() {
            // A WinningPoSt lays its one sector's challenges out as sectors of one challenge.
            let index = match (winning, pp.api_version) {
                (true, _) | (false, ApiVersion::V1_2_0) => n as u64,
                _ => get_challenge_index(pp.api_version, first_index + i, pp.challenge_count, n),
            };
            let leaf = generate_leaf_challenge(pp, randomness, id, index) as usize;
            let what = if opening.root() != comm_r_last {
                "the root check fails (its opening is not under the sector's comm_r_last)"
            } else if opening.path().len() != opening.expected_len(leaves) {
                "the path check fails (its opening is of another sector size)"
            } else if !opening.validate(leaf) {
                "the leaf check fails (its opening is not of the leaf the randomness challenges)"
            } else {
                continue;
            };
            return Some(format!("sector {id}, challenge {n} (leaf {leaf}): {what}"));
        }
    }
    None
}
