//! Sparse WindowPoSt and WinningPoSt inputs: each sector of the request gets a comm_c drawn from
//! the seed and a sparse tree_r_last holding only its challenged leaves, so comm_r =
//! H(comm_c, comm_r_last) of a sector no one sealed. The challenges are Filecoin's
//! (`generate_winning_post_sector_challenge`, `generate_fallback_sector_challenges`), from
//! the randomness and the sector numbers alone: no sector data is needed to draw them.

use anyhow::{anyhow, bail, Context, Result};
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::{
    generate_fallback_sector_challenges, generate_winning_post_sector_challenge, parameters,
    single_partition_vanilla_proofs, FallbackPoStSectorProof, PoStConfig,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use std::collections::BTreeMap;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{self, PublicInputs, PublicSector, SectorProof};

use super::tree::SparseTree;
use crate::compound::checked;
use crate::inputs::{decode, encode, Inputs};
use crate::kind::Kind;
use crate::post;
use crate::sector::{with_tree, SectorSize};

/// What a sparse PoSt request is made from.
#[derive(Clone, Debug)]
pub struct PostSpec {
    /// WindowPoSt or WinningPoSt.
    pub kind: Kind,
    /// The sectors' size.
    pub size: SectorSize,
    /// The miner's prover id.
    pub prover_id: [u8; 32],
    /// The first sector's number; the others follow it.
    pub first_sector: u64,
    /// How many sectors: None for a full WindowPoSt partition (2,349 at 32 GiB) or the one
    /// sector a WinningPoSt challenges.
    pub sectors: Option<usize>,
    /// Draws the randomness, each sector's comm_c and its leaves.
    pub seed: u64,
}

/// The inputs of a sparse WindowPoSt partition (partition 0) or WinningPoSt, checked by the
/// FallbackPoSt verifier (through filecoin-proofs' `single_partition_vanilla_proofs`) before
/// they are returned.
pub fn post(spec: &PostSpec) -> Result<Inputs> {
    let registered = post::registered_id(spec.kind, spec.size);
    let (_, _, api_version) = post::registered(registered)?;
    let config = post::config(spec.kind, spec.size, api_version)?;
    let count = sector_count(spec.kind, spec.size, spec.sectors)?;
    let last = spec.first_sector.checked_add(count as u64 - 1);
    if last.is_none() {
        bail!("sector numbers from {} overflow", spec.first_sector);
    }
    let mut inputs = Inputs::new(spec.kind);
    inputs.registered_proof = registered;
    inputs.prover_id = spec.prover_id;
    let randomness = crate::vanilla::randomness(spec.seed);
    inputs.randomness = randomness.to_vec();
    inputs.vanilla_proofs = with_tree!(spec.size, build(spec, &config, count, randomness))?;
    Ok(inputs)
}

/// How many sectors a sparse `kind` request of `size` sectors holds when `sectors` are asked
/// for: a full WindowPoSt partition or one WinningPoSt sector by default; a number a partition
/// cannot hold is refused.
pub fn sector_count(kind: Kind, size: SectorSize, sectors: Option<usize>) -> Result<usize> {
    let (_, _, api_version) = post::registered(post::registered_id(kind, size))?;
    let most = post::config(kind, size, api_version)?.sector_count;
    Ok(match (kind, sectors) {
        (_, Some(0)) => bail!("--sectors 0: a PoSt proves at least one sector"),
        (Kind::WindowPost, Some(n)) if n > most => {
            bail!("--sectors {n}: a {size} WindowPoSt partition holds at most {most} sectors")
        }
        (Kind::WindowPost, n) => n.unwrap_or(most),
        (_, n) => n.unwrap_or(1),
    })
}

type TreeDomain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

fn build<Tree: 'static + MerkleTreeTrait>(
    spec: &PostSpec,
    config: &PoStConfig,
    count: usize,
    randomness: [u8; 32],
) -> Result<Vec<Vec<u8>>> {
    let all: Vec<SectorId> = (0..count as u64)
        .map(|i| SectorId::from(spec.first_sector + i))
        .collect();
    let ids: Vec<SectorId> = match spec.kind {
        Kind::WinningPost => generate_winning_post_sector_challenge::<Tree>(
            config,
            &randomness,
            count as u64,
            spec.prover_id,
        )?
        .iter()
        .map(|i| {
            all.get(*i as usize)
                .copied()
                .context("a challenge out of range")
        })
        .collect::<Result<_>>()?,
        _ => all,
    };
    let challenges =
        generate_fallback_sector_challenges::<Tree>(config, &randomness, &ids, spec.prover_id)?;
    let nodes = (spec.size.bytes() / 32) as usize;
    // Each sector drawn from its own generator (the seed and its number), so they are built
    // in parallel: a full partition is thousands.
    let bytes: Vec<Vec<u8>> = ids
        .par_iter()
        .map(|id| {
            let leaves = challenges.get(id).context("no challenges for a sector")?;
            let salt = u64::from(*id).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut rng = ChaCha20Rng::seed_from_u64(spec.seed ^ 0x5ba2_5e00_9057_0000 ^ salt);
            encode(&sector::<Tree>(*id, leaves, nodes, &mut rng)?)
        })
        .collect::<Result<_>>()?;
    check::<Tree>(spec, config, randomness, &bytes)?;
    Ok(bytes)
}

/// One sector's vanilla proof: a comm_c, a constant leaf, a drawn value at each challenged
/// leaf, and their openings in a sparse tree_r_last.
fn sector<Tree: 'static + MerkleTreeTrait>(
    id: SectorId,
    challenged: &[u64],
    nodes: usize,
    rng: &mut ChaCha20Rng,
) -> Result<FallbackPoStSectorProof<Tree>> {
    let comm_c = TreeDomain::<Tree>::random(rng);
    let constant = TreeDomain::<Tree>::random(rng);
    let known: BTreeMap<usize, TreeDomain<Tree>> = challenged
        .iter()
        .map(|c| (*c as usize, TreeDomain::<Tree>::random(rng)))
        .collect();
    let tree =
        SparseTree::<Tree::Hasher>::new::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(
            nodes, constant, known,
        )?;
    let comm_r_last = tree.root();
    let inclusion_proofs = challenged.iter().map(|c| tree.proof(*c as usize)).collect();
    Ok(FallbackPoStSectorProof {
        sector_id: id,
        comm_r: <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last),
        vanilla_proof: fallback::Proof {
            sectors: vec![SectorProof {
                inclusion_proofs,
                comm_c,
                comm_r_last,
            }],
        },
    })
}

/// The FallbackPoSt verifier over the bytes as written, laid out as filecoin-proofs lays a
/// partition's proofs out (a WinningPoSt's one sector once a challenge).
fn check<Tree: 'static + MerkleTreeTrait>(
    spec: &PostSpec,
    config: &PoStConfig,
    randomness: [u8; 32],
    bytes: &[Vec<u8>],
) -> Result<()> {
    let proofs: Vec<FallbackPoStSectorProof<Tree>> =
        bytes.iter().map(|b| decode(b)).collect::<Result<_>>()?;
    let winning = spec.kind == Kind::WinningPost;
    let setup = match winning {
        true => parameters::winning_post_setup_params(config)?,
        false => parameters::window_post_setup_params(config),
    };
    let pub_params = fallback::PublicParams {
        sector_size: setup.sector_size,
        challenge_count: setup.challenge_count,
        sector_count: setup.sector_count,
        api_version: setup.api_version,
    };
    let repeat = if winning { pub_params.sector_count } else { 1 };
    let listed = (0..repeat).flat_map(|_| {
        proofs.iter().map(|p| PublicSector {
            id: p.sector_id,
            comm_r: p.comm_r,
        })
    });
    let randomness_d = TreeDomain::<Tree>::try_from_bytes(&randomness)?;
    let pub_in = PublicInputs {
        randomness: randomness_d,
        prover_id: TreeDomain::<Tree>::try_from_bytes(&spec.prover_id)?,
        sectors: listed.collect(),
        k: Some(0),
    };
    checked(|| single_partition_vanilla_proofs(config, &pub_params, &pub_in, &proofs)).map_err(
        |e| {
            let failed = crate::diagnose::post(&pub_params, randomness_d, winning, 0, &proofs);
            anyhow!(
                "the FallbackPoSt verifier refuses the sparse sectors: {}",
                failed.unwrap_or_else(|| format!("{e:#}"))
            )
        },
    )?;
    Ok(())
}
