//! SnapDeals: storage-proofs-update's checks of each partition (comm_r_old and comm_r_new from
//! comm_c and the openings' roots) and each challenge (the three openings, the encoding with
//! rho, the apex path), in the order its verifier runs them.

use blstrs::Scalar as Fr;
use filecoin_hashers::{HashFunction, Hasher};
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_update::constants::{TreeDDomain, TreeDHasher, TreeRDomain, TreeRHasher};
use storage_proofs_update::{
    phi, rho, ChallengeProof, Challenges, PartitionProof, PublicInputs, PublicParams,
};

/// The first failing check of an update's partitions, in words; None when every check named
/// here passes.
pub(crate) fn snap<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    pp: &PublicParams,
    pub_in: &PublicInputs,
    partitions: &[PartitionProof<Tree>],
) -> Option<String> {
    let phi = phi(&pub_in.comm_d_new, &pub_in.comm_r_old);
    let shift = pp.challenge_bit_len - pub_in.h;
    let apex_height = pp.challenge_bit_len - pp.partition_bit_len - pp.apex_leaf_bit_len;
    for (k, p) in partitions.iter().enumerate() {
        let first = p.challenge_proofs.first()?;
        let (root_old, root_new) = (first.proof_r_old.root(), first.proof_r_new.root());
        let hash2 = <TreeRHasher as Hasher>::Function::hash2;
        if hash2(&p.comm_c, &root_old) != pub_in.comm_r_old {
            return Some(format!("partition {k}: the comm_r_old check fails (H(comm_c, root of tree_r_old) is not comm_r_old)"));
        }
        if hash2(&p.comm_c, &root_new) != pub_in.comm_r_new {
            return Some(format!("partition {k}: the comm_r_new check fails (H(comm_c, root of tree_r_new) is not comm_r_new)"));
        }
        let apex = apex_rows(&p.apex_leafs, pp.apex_leaf_bit_len);
        let challenges = Challenges::new(pp.sector_nodes, pub_in.comm_r_new, k);
        for (i, (c, proof)) in challenges.zip(&p.challenge_proofs).enumerate() {
            let what = if !proof.verify_merkle_proofs(c, &root_old, &pub_in.comm_d_new, &root_new) {
                "the opening check fails (its tree_r_old, tree_d_new or tree_r_new opening is not of this node under its root)"
            } else if encoded(proof, &phi, c >> shift) != proof.proof_r_new.leaf() {
                "the encoding check fails (the new replica leaf is not the old one plus the data times rho)"
            } else if !apex_path_ok(&proof.proof_d_new.path(), apex_height, &apex) {
                "the apex check fails (its tree_d_new path leaves the partition's apex tree)"
            } else {
                continue;
            };
            return Some(format!("partition {k}, challenge {i} (node {c}): {what}"));
        }
    }
    None
}

/// The new replica leaf the old one and the data give: old + data * rho(phi, high bits).
fn encoded<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: &ChallengeProof<Tree>,
    phi: &TreeRDomain,
    high: u32,
) -> TreeRDomain {
    let old: Fr = proof.proof_r_old.leaf().into();
    let data: Fr = proof.proof_d_new.leaf().into();
    (old + data * rho(phi, high)).into()
}

/// The apex tree over a partition's apex leaves, row by row.
fn apex_rows(leaves: &[TreeDDomain], height: usize) -> Vec<Vec<TreeDDomain>> {
    let mut rows = vec![leaves.to_vec()];
    for _ in 0..height {
        let Some(last) = rows.last() else { break };
        let next = last
            .chunks(2)
            .filter(|pair| pair.len() == 2)
            .map(|pair| <TreeDHasher as Hasher>::Function::hash2(&pair[0], &pair[1]))
            .collect();
        rows.push(next);
    }
    rows
}

fn apex_path_ok(
    path: &[(Vec<TreeDDomain>, usize)],
    from: usize,
    apex: &[Vec<TreeDDomain>],
) -> bool {
    let Some(levels) = path.get(from..from + apex.len().saturating_sub(1)) else {
        return false;
    };
    levels
        .iter()
        .zip(apex)
        .all(|((siblings, _), row)| siblings.first().is_some_and(|s| row.contains(s)))
}
