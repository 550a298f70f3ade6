//! A sparse SnapDeals update of a sparse committed-capacity sector. Its challenges come from
//! comm_r_new, and each new replica leaf is old + data * rho, where rho depends only on phi =
//! H(comm_d_new, comm_r_old) and the h high bits of the node's index: so an old replica and new
//! data that are each constant within every one of the 2^h blocks make a new replica constant
//! within each block too, and all three trees (and so comm_r_new) are known before any
//! challenge is drawn. Every derivation is storage-proofs-update's: phi, rho, the challenges,
//! the partitions' shapes and their verifier.

use anyhow::{bail, Result};
use blstrs::Scalar as Fr;
use filecoin_hashers::{Domain, HashFunction, Hasher};
use generic_array::typenum::{U0, U2};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_update::constants::{
    h_default, TreeDDomain, TreeDHasher, TreeRDomain, TreeRHasher,
};
use storage_proofs_update::{
    phi, rho, ChallengeProof, Challenges, EmptySectorUpdate, PartitionProof, PublicInputs,
    PublicParams,
};

use super::tree::SparseTree;
use crate::compound::checked;
use crate::inputs::{decode, encode, Inputs};
use crate::kind::Kind;
use crate::sector::{with_tree, SectorSize};

/// The inputs of a sparse SnapDeals update of a `size` sector drawn from `seed` (its comm_c,
/// each block's old replica leaf and new data), checked by storage-proofs-update's
/// `verify_all_partitions` before they are returned.
pub fn snap(size: SectorSize, seed: u64) -> Result<Inputs> {
    with_tree!(size, build(size, seed))
}

type TreeR<Tree> = SparseTree<<Tree as MerkleTreeTrait>::Hasher>;

fn tree_r<Tree: MerkleTreeTrait<Hasher = TreeRHasher>>(
    nodes: usize,
    blocks: &[TreeRDomain],
) -> Result<TreeR<Tree>> {
    SparseTree::blocks::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(
        nodes,
        blocks,
        BTreeMap::new(),
    )
}

fn build<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    size: SectorSize,
    seed: u64,
) -> Result<Inputs> {
    let pp = PublicParams::from_sector_size(size.bytes());
    let nodes = pp.sector_nodes;
    let h = h_default(nodes);
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5ba2_5e00_5a4b_0000);
    let comm_c = TreeRDomain::random(&mut rng);
    let old: Vec<TreeRDomain> = (0..1 << h).map(|_| TreeRDomain::random(&mut rng)).collect();
    let data: Vec<TreeDDomain> = (0..1 << h).map(|_| TreeDDomain::random(&mut rng)).collect();
    let hash2 = <TreeRHasher as Hasher>::Function::hash2;

    let tree_r_old = tree_r::<Tree>(nodes, &old)?;
    let tree_d = SparseTree::<TreeDHasher>::blocks::<U2, U0, U0>(nodes, &data, BTreeMap::new())?;
    let comm_r_old = hash2(&comm_c, &tree_r_old.root());
    let comm_d_new = tree_d.root();
    let phi = phi(&comm_d_new, &comm_r_old);
    // Block b's leaves are the nodes whose h high bits are b.
    let new: Vec<TreeRDomain> = old
        .iter()
        .zip(&data)
        .enumerate()
        .map(|(b, (o, d))| {
            let (o, d): (Fr, Fr) = ((*o).into(), (*d).into());
            (o + d * rho(&phi, b as u32)).into()
        })
        .collect();
    let tree_r_new = tree_r::<Tree>(nodes, &new)?;
    let comm_r_new = hash2(&comm_c, &tree_r_new.root());

    // Each partition's apex leaves: its tree_d nodes at the apex tree's bottom row.
    let apex_row = pp.challenge_bit_len - pp.partition_bit_len - pp.apex_leaf_bit_len;
    let partitions: Vec<PartitionProof<Tree>> = (0..pp.partition_count)
        .map(|k| PartitionProof {
            comm_c,
            apex_leafs: (0..pp.apex_leaf_count)
                .map(|j| tree_d.node(apex_row, k * pp.apex_leaf_count + j))
                .collect(),
            challenge_proofs: Challenges::new(nodes, comm_r_new, k)
                .map(|c| ChallengeProof {
                    proof_r_old: tree_r_old.proof(c as usize),
                    proof_d_new: tree_d.proof::<U2, U0, U0>(c as usize),
                    proof_r_new: tree_r_new.proof(c as usize),
                })
                .collect(),
        })
        .collect();
    let bytes: Vec<Vec<u8>> = partitions.iter().map(encode).collect::<Result<_>>()?;

    let pub_in = PublicInputs {
        k: 0,
        comm_r_old,
        comm_d_new,
        comm_r_new,
        h,
    };
    check::<Tree>(&pp, &pub_in, &bytes)?;
    let mut inputs = Inputs::new(Kind::Snap);
    inputs.registered_proof = crate::snap::registered_id(size);
    inputs.comm_r_old = comm_r_old.into_bytes();
    inputs.comm_r_new = comm_r_new.into_bytes();
    inputs.comm_d_new = comm_d_new.into_bytes();
    inputs.vanilla_proofs = bytes;
    Ok(inputs)
}

/// storage-proofs-update's verifier over the partitions' bytes as written.
fn check<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    pp: &PublicParams,
    pub_in: &PublicInputs,
    bytes: &[Vec<u8>],
) -> Result<()> {
    let proofs: Vec<PartitionProof<Tree>> =
        bytes.iter().map(|b| decode(b)).collect::<Result<_>>()?;
    let verified =
        checked(|| EmptySectorUpdate::<Tree>::verify_all_partitions(pp, pub_in, &proofs))?;
    if !verified {
        let why = crate::diagnose::snap(pp, pub_in, &proofs)
            .unwrap_or_else(|| "storage-proofs-update's verifier refuses them".into());
        bail!("the sparse update's vanilla proofs do not verify: {why}");
    }
    Ok(())
}
