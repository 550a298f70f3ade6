//! A sparse committed-capacity sector's commit-phase-1 output: the vanilla proofs of an
//! interactive V1_1 PoRep, built from the few nodes its challenges open. Every derivation is
//! Filecoin's: the replica id, the stacked graph and its parents, the challenges of each
//! partition, the labelling function, the hashers and the proof types.

use anyhow::{bail, Context, Result};
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher, SealCommitPhase1Output};
use generic_array::typenum::{U0, U2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::collections::{BTreeMap, BTreeSet};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{MerkleProof, MerkleTreeTrait};
use storage_proofs_porep::stacked::{
    self, Challenges, Column, ColumnProof, EncodingProof, LabelingProof, ReplicaColumnProof,
    StackedCompound, StackedDrg, TOTAL_PARENTS,
};

use super::labels::{self, Columns};
use super::tree::SparseTree;
use crate::c1::C1;
use crate::sector::{ProofVersion, SectorSize};

/// What a sparse sector is made from.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The sector's size.
    pub size: SectorSize,
    /// The miner's prover id.
    pub prover_id: [u8; 32],
    /// The sector number.
    pub sector_id: u64,
    /// Draws the ticket, the interactive seed and the labels of the parents.
    pub seed: u64,
    /// For tests: (partition, challenge, layer) whose label is changed after it is computed,
    /// so the request fails the label check.
    pub tamper_label: Option<(usize, usize, usize)>,
}

type TreeDomain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type VanillaProof<Tree> = stacked::Proof<Tree, DefaultPieceHasher>;
/// An opening of tree_c or tree_r_last, as stacked proofs hold it.
type OpenProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

/// The C1 output of the sparse sector `spec` describes, not yet checked.
pub fn build<Tree: 'static + MerkleTreeTrait>(spec: &Spec) -> Result<C1> {
    let version = ProofVersion::V1_1;
    let config = version.porep_config(spec.size);
    let nodes = (spec.size.bytes() / 32) as usize;
    let partitions = usize::from(config.partitions);
    let mut rng = ChaCha20Rng::seed_from_u64(spec.seed ^ 0x5ba2_5e00_0000_0000);
    let ticket: [u8; 32] = rng.gen();
    let seed: [u8; 32] = rng.gen();

    // comm_d of all-zero data: a binary SHA-256 tree whose leaves are all zero.
    let zero_d = DefaultPieceDomain::default();
    let tree_d =
        SparseTree::<DefaultPieceHasher>::new::<U2, U0, U0>(nodes, zero_d, BTreeMap::new())?;
    let comm_d = commitment(&tree_d.root());
    let replica_id = stacked::generate_replica_id::<Tree::Hasher, _>(
        &spec.prover_id,
        spec.sector_id,
        &ticket,
        comm_d,
        &config.porep_id,
    );
    let pub_params = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&compound_proof::SetupParams {
        vanilla_params: setup_params(&config)?,
        partitions: Some(partitions),
        priority: false,
    })?
    .vanilla_params;
    if !matches!(pub_params.challenges, Challenges::Interactive(_)) {
        bail!("{}", super::NOT_INTERACTIVE);
    }
    let layers = pub_params.num_layers;
    let graph = &pub_params.graph;

    // The challenges of each partition, from the replica id and the seed alone.
    let pub_in = stacked::PublicInputs::<TreeDomain<Tree>, DefaultPieceDomain> {
        replica_id,
        seed: Some(seed),
        tau: None,
        k: None,
    };
    let challenges: Vec<Vec<usize>> = (0..partitions)
        .map(|k| pub_in.challenges(&pub_params.challenges, nodes, Some(k)))
        .collect();
    let challenged: BTreeSet<usize> = challenges.iter().flatten().copied().collect();
    let parents = labels::parents(graph, &challenged)?;
    let tamper = match spec.tamper_label {
        None => None,
        Some((k, i, layer)) => {
            let node = challenges
                .get(k)
                .and_then(|c| c.get(i))
                .with_context(|| format!("no challenge {i} in partition {k}"))?;
            Some((*node, layer))
        }
    };
    let columns = labels::columns(graph, &replica_id, layers, &parents, &mut rng, tamper)?;

    // tree_c: each opened node's column hash; tree_r_last: each challenged node's replica,
    // its last label encoding zero data (key + 0).
    let zero = TreeDomain::<Tree>::default();
    let leaves_c = columns
        .iter()
        .map(|(n, rows)| {
            Ok((
                *n,
                Column::<Tree::Hasher>::new(*n as u32, rows.clone())?
                    .hash()
                    .into(),
            ))
        })
        .collect::<Result<BTreeMap<usize, TreeDomain<Tree>>>>()?;
    let leaves_r = challenged
        .iter()
        .map(|c| Ok((*c, last(&columns, *c)?)))
        .collect::<Result<BTreeMap<_, _>>>()?;
    let tree_c = tree::<Tree>(nodes, zero, leaves_c)?;
    let tree_r = tree::<Tree>(nodes, zero, leaves_r)?;
    let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&tree_c.root(), &tree_r.root());

    let base = graph.base_graph().degree();
    let column_proof = |n: usize| -> Result<ColumnProof<OpenProof<Tree>>> {
        let rows = columns.get(&n).context("a parent without a column")?;
        Ok(ColumnProof::new(
            n as u32,
            rows.clone(),
            tree_c.proof::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(n),
        ))
    };
    let mut vanilla_proofs = Vec::with_capacity(partitions);
    for partition in &challenges {
        let mut proofs: Vec<VanillaProof<Tree>> = Vec::with_capacity(partition.len());
        for &c in partition {
            let p = parents.get(&c).context("a challenge without parents")?;
            let (drg, exp) = p.split_at(base);
            let labeling: Vec<LabelingProof<Tree::Hasher>> = (1..=layers)
                .map(|layer| {
                    Ok(LabelingProof::new(
                        layer as u32,
                        c as u64,
                        parent_labels(&columns, drg, exp, layer)?,
                    ))
                })
                .collect::<Result<_>>()?;
            let encoding = EncodingProof::new(
                layers as u32,
                c as u64,
                parent_labels(&columns, drg, exp, layers)?,
            );
            proofs.push(stacked::Proof {
                comm_d_proofs: tree_d.proof::<U2, U0, U0>(c),
                comm_r_last_proof: tree_r.proof(c),
                replica_column_proofs: ReplicaColumnProof {
                    c_x: column_proof(c)?,
                    drg_parents: drg
                        .iter()
                        .map(|q| column_proof(*q as usize))
                        .collect::<Result<_>>()?,
                    exp_parents: exp
                        .iter()
                        .map(|q| column_proof(*q as usize))
                        .collect::<Result<_>>()?,
                },
                labeling_proofs: labeling,
                encoding_proof: encoding,
            });
        }
        vanilla_proofs.push(proofs);
    }
    let out = SealCommitPhase1Output::<Tree> {
        vanilla_proofs,
        comm_r: commitment(&comm_r),
        comm_d,
        replica_id,
        seed,
        ticket,
    };
    let mut c1 = C1::parse(&serde_json::to_vec(&out)?, Some(spec.size), Some(version))?;
    (c1.prover_id, c1.sector_id) = (Some(spec.prover_id), Some(spec.sector_id));
    Ok(c1)
}

/// A tree of the sector's shape (that of `Tree`).
fn tree<Tree: MerkleTreeTrait>(
    nodes: usize,
    constant: TreeDomain<Tree>,
    known: BTreeMap<usize, TreeDomain<Tree>>,
) -> Result<SparseTree<Tree::Hasher>> {
    SparseTree::new::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(nodes, constant, known)
}

/// Node `n`'s label in the last layer.
fn last<D: Domain>(columns: &Columns<D>, n: usize) -> Result<D> {
    columns
        .get(&n)
        .and_then(|rows| rows.last())
        .copied()
        .with_context(|| format!("node {n} has no column"))
}

/// The parents' labels a node's label in `layer` hashes, repeated to Filecoin's 37: the base
/// parents' in the same layer, then (above layer 1) the expander parents' in the layer below.
fn parent_labels<D: Domain>(
    columns: &Columns<D>,
    drg: &[u32],
    exp: &[u32],
    layer: usize,
) -> Result<Vec<D>> {
    let at = |q: &u32, layer: usize| -> Result<D> {
        columns
            .get(&(*q as usize))
            .and_then(|rows| rows.get(layer - 1))
            .copied()
            .with_context(|| format!("parent {q} has no label in layer {layer}"))
    };
    let mut once: Vec<D> = drg.iter().map(|q| at(q, layer)).collect::<Result<_>>()?;
    if layer > 1 {
        for q in exp {
            once.push(at(q, layer - 1)?);
        }
    }
    Ok(once.iter().copied().cycle().take(TOTAL_PARENTS).collect())
}

fn commitment<D: Domain>(d: &D) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&d.into_bytes());
    out
}
