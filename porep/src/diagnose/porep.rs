//! PoRep: storage-proofs-porep's checks of each challenge (its public `verify` of each
//! opening, labeling and encoding proof), in the order its verifier runs them.

use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_porep::stacked::{self, PublicParams};

type PubIn<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain,
    DefaultPieceDomain,
>;
type Proof<Tree> = stacked::Proof<Tree, DefaultPieceHasher>;

/// The first failing check of a PoRep's partitions, in words: `partition 3, challenge 7 (node
/// 123): the label check at layer 2 fails ...`; None when every check named here passes.
pub(crate) fn porep<Tree: 'static + MerkleTreeTrait>(
    pub_params: &PublicParams<Tree>,
    pub_in: &PubIn<Tree>,
    partitions: &[Vec<Proof<Tree>>],
) -> Option<String> {
    let graph = &pub_params.graph;
    let tau = pub_in.tau.as_ref()?;
    for (k, proofs) in partitions.iter().enumerate() {
        let first = proofs.first()?;
        let comm_r =
            <Tree::Hasher as Hasher>::Function::hash2(&first.comm_c(), &first.comm_r_last());
        if comm_r != tau.comm_r {
            return Some(format!(
                "partition {k}: the comm_r check fails (H(comm_c, comm_r_last) of its openings is not comm_r)"
            ));
        }
        let challenges = pub_in.challenges(&pub_params.challenges, graph.size(), Some(k));
        if challenges.len() != proofs.len() {
            return Some(format!(
                "partition {k}: {} challenge proofs for {} challenges",
                proofs.len(),
                challenges.len()
            ));
        }
        for (i, (proof, &c)) in proofs.iter().zip(&challenges).enumerate() {
            if let Some(what) = challenge(pub_params, pub_in, first, proof, c) {
                return Some(format!("partition {k}, challenge {i} (node {c}): {what}"));
            }
        }
    }
    None
}

/// The first of the verifier's checks of one challenge's proof that fails.
fn challenge<Tree: 'static + MerkleTreeTrait>(
    pub_params: &PublicParams<Tree>,
    pub_in: &PubIn<Tree>,
    first: &Proof<Tree>,
    proof: &Proof<Tree>,
    c: usize,
) -> Option<String> {
    let tau = pub_in.tau.as_ref()?;
    if proof.comm_c() != first.comm_c() || proof.comm_r_last() != first.comm_r_last() {
        return Some("the root check fails (its comm_c or comm_r_last differs from the partition's first challenge)".into());
    }
    let d = &proof.comm_d_proofs;
    if !d.proves_challenge(c) || d.root() != tau.comm_d {
        return Some(
            "the data check fails (its comm_d opening is not of this node under comm_d)".into(),
        );
    }
    let mut parents = vec![0u32; pub_params.graph.degree()];
    if pub_params.graph.parents(c, &mut parents).is_err() {
        return Some("its parents cannot be derived".into());
    }
    let cols = &proof.replica_column_proofs;
    let comm_c = cols.c_x.root();
    if !cols.c_x.verify(c as u32, &comm_c) {
        return Some("the column check fails (its own column does not open under comm_c)".into());
    }
    let base = cols.drg_parents.len();
    let parent_cols = cols.drg_parents.iter().chain(&cols.exp_parents);
    for (j, (col, p)) in parent_cols.zip(&parents).enumerate() {
        if !col.verify(*p, &comm_c) {
            let which = if j < base { "base" } else { "expander" };
            return Some(format!(
                "the column check fails ({which} parent {j}, node {p}, does not open under comm_c)"
            ));
        }
    }
    if !proof.comm_r_last_proof.proves_challenge(c) {
        return Some(
            "the replica check fails (its comm_r_last opening is not of this node)".into(),
        );
    }
    for layer in 1..=pub_params.num_layers {
        let Some(labeling) = proof.labeling_proofs.get(layer - 1) else {
            return Some(format!(
                "the label check fails (no labeling proof of layer {layer})"
            ));
        };
        let label = match cols.c_x.get_node_at_layer(layer) {
            Ok(l) => l,
            Err(_) => {
                return Some(format!(
                    "the label check fails (its column has no layer {layer})"
                ))
            }
        };
        if !labeling.verify(&pub_in.replica_id, label) {
            return Some(format!(
                "the label check fails at layer {layer} (its parents' labels do not hash to the column's label)"
            ));
        }
    }
    if !proof.encoding_proof.verify::<DefaultPieceHasher>(
        &pub_in.replica_id,
        &proof.comm_r_last_proof.leaf(),
        &d.leaf(),
    ) {
        return Some("the encoding check fails (the replica leaf is not the data encoded with the last label)".into());
    }
    None
}
