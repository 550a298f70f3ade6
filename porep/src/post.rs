//! WindowPoSt and WinningPoSt: storage-proofs-post's FallbackPoSt circuit of one partition,
//! built from its sectors' vanilla proofs (bincode `FallbackPoStSectorProof`s, as Curio sends
//! them) through the compound proof's `circuit`, everything checked before any long work, and
//! the proof checked by filecoin-proofs' `verify_window_post` or `verify_winning_post`.
//!
//! A WindowPoSt request proves one partition of a deadline (at most `WINDOW_POST_SECTOR_COUNT`
//! sectors). Its proof is verified as the deadline's proof over that partition's sectors: with
//! the challenges of the proofs in force (`StackedDrgWindow*V1_2`) a sector's challenges do not
//! depend on its partition, so that is the same check as over the whole deadline.

use anyhow::{anyhow, bail, ensure, Context, Result};
use filecoin_hashers::Hasher;
use filecoin_proofs::{
    as_safe_commitment, parameters, single_partition_vanilla_proofs, FallbackPoStSectorProof,
    PoStConfig, PoStType, PublicReplicaInfo, WINDOW_POST_CHALLENGE_COUNT, WINDOW_POST_SECTOR_COUNT,
    WINNING_POST_CHALLENGE_COUNT, WINNING_POST_SECTOR_COUNT,
};
use provetop_engine::params::VerifyingKey;
use std::collections::BTreeMap;
use std::path::Path;
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector,
};

use crate::compound::{self, checked, Partitions, Registered};
use crate::filecoin;
use crate::inputs::{self, Inputs};
use crate::kind::Kind;
use crate::sector::{with_tree, SectorSize};

/// A registered PoSt partition and what its verifier needs.
pub struct Post {
    /// Its circuit in the engine (one partition).
    pub circuits: Registered,
    /// WindowPoSt or WinningPoSt.
    pub kind: Kind,
    /// The sectors' size.
    pub size: SectorSize,
    /// filecoin-proofs-api's registered PoSt proof number.
    pub registered_proof: u64,
    /// The challenge seed.
    pub randomness: [u8; 32],
    /// The miner's prover id.
    pub prover_id: [u8; 32],
    /// The WindowPoSt partition proved (0 for WinningPoSt).
    pub partition_index: u32,
    /// The partition's sectors, by number, with their comm_r.
    pub sectors: Vec<Sector>,
}

/// A sector a PoSt proves: its number and comm_r.
pub type Sector = (u64, [u8; 32]);

/// The kind, sector size and API version of filecoin-proofs-api's registered PoSt proof
/// number `id` (what Curio sends as `registered_proof`).
pub fn registered(id: u64) -> Result<(Kind, SectorSize, ApiVersion)> {
    let size = |i: u64| SectorSize::ALL[i as usize % 5];
    Ok(match id {
        0..=4 => (Kind::WinningPost, size(id), ApiVersion::V1_0_0),
        5..=9 => (Kind::WindowPost, size(id), ApiVersion::V1_0_0),
        10..=14 => (Kind::WindowPost, size(id), ApiVersion::V1_2_0),
        _ => bail!("{id} is not a registered PoSt proof number (0-4 WinningPoSt, 5-14 WindowPoSt)"),
    })
}

/// The registered proof number of the PoSt proofs in force for `kind` and `size`.
pub fn registered_id(kind: Kind, size: SectorSize) -> u64 {
    let i = SectorSize::ALL.iter().position(|s| *s == size).unwrap_or(0) as u64;
    match kind {
        Kind::WinningPost => i,
        _ => 10 + i,
    }
}

/// filecoin-proofs-api's name of registered PoSt proof `id`: `StackedDrgWindow32GiBV1_2`.
pub fn registered_name(id: u64) -> String {
    match registered(id) {
        Ok((Kind::WinningPost, size, _)) => format!("StackedDrgWinning{size}V1"),
        Ok((_, size, ApiVersion::V1_0_0)) => format!("StackedDrgWindow{size}V1"),
        Ok((_, size, _)) => format!("StackedDrgWindow{size}V1_2"),
        Err(_) => format!("registered PoSt proof {id}"),
    }
}

/// filecoin-proofs' configuration of a PoSt (filecoin-proofs-api's `as_v1_config`).
pub fn config(kind: Kind, size: SectorSize, api_version: ApiVersion) -> Result<PoStConfig> {
    let (typ, challenge_count, sector_count) = match kind {
        Kind::WinningPost => (
            PoStType::Winning,
            WINNING_POST_CHALLENGE_COUNT,
            WINNING_POST_SECTOR_COUNT,
        ),
        Kind::WindowPost => (
            PoStType::Window,
            WINDOW_POST_CHALLENGE_COUNT,
            *WINDOW_POST_SECTOR_COUNT
                .read()
                .map_err(|_| anyhow!("filecoin-proofs' sector counts are poisoned"))?
                .get(&size.bytes())
                .with_context(|| format!("no WindowPoSt sector count for {size}"))?,
        ),
        _ => bail!("{kind} is not a PoSt"),
    };
    Ok(PoStConfig {
        sector_size: filecoin_proofs::SectorSize(size.bytes()),
        challenge_count,
        sector_count,
        typ,
        priority: true,
        api_version,
    })
}

/// Checks a PoSt request's inputs, builds its partition's circuit and registers it as `name`.
pub fn register(inputs: &Inputs, params_dir: Option<&Path>, name: &str) -> Result<Post> {
    let (kind, size, api_version) = registered(inputs.registered_proof)?;
    let what = registered_name(inputs.registered_proof);
    if kind != inputs.kind {
        bail!(
            "registered_proof {} ({what}) is a {kind} proof, not {}",
            inputs.registered_proof,
            inputs.kind
        );
    }
    let config = config(kind, size, api_version)?;
    let randomness: [u8; 32] = inputs
        .randomness
        .as_slice()
        .try_into()
        .map_err(|_| anyhow!("randomness has {} bytes, not 32", inputs.randomness.len()))?;
    let most = config.sector_count;
    let n = inputs.vanilla_proofs.len();
    match kind {
        _ if n == 0 => bail!("no vanilla proofs: a {kind} proves at least one sector"),
        Kind::WinningPost if n != most => bail!(
            "{n} vanilla proofs: a WinningPoSt proves {most} challenged sector (its vanilla proof)"
        ),
        _ if n > most => bail!(
            "{n} vanilla proofs: a WindowPoSt partition of {size} sectors proves at most {most}"
        ),
        _ => {}
    }
    match (kind, api_version, inputs.partition_index) {
        (_, _, 0) => {}
        (Kind::WinningPost, _, k) => bail!("partition_index {k}: a WinningPoSt has one partition"),
        (_, ApiVersion::V1_0_0, k) => bail!(
            "partition_index {k} of {what}: its challenges depend on the partition, so only partition 0 is verified here (the proofs in force are {})",
            registered_name(registered_id(kind, size))
        ),
        _ => {}
    }
    filecoin::configure(params_dir)?;
    let statement = Statement {
        kind,
        config,
        randomness,
        prover_id: inputs.prover_id,
        partition_index: inputs.partition_index as usize,
    };
    let (circuits, sectors) = with_tree!(
        size,
        build(&statement, &inputs.vanilla_proofs, params_dir, name, &what)
    )?;
    Ok(Post {
        circuits,
        kind,
        size,
        registered_proof: inputs.registered_proof,
        randomness,
        prover_id: inputs.prover_id,
        partition_index: inputs.partition_index,
        sectors,
    })
}

/// What a PoSt proves, before the sectors.
struct Statement {
    kind: Kind,
    config: PoStConfig,
    randomness: [u8; 32],
    prover_id: [u8; 32],
    partition_index: usize,
}

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type PartitionProof<Tree> = fallback::Proof<<Tree as MerkleTreeTrait>::Proof>;

/// One partition's circuit, as `FallbackPoStCompound` builds it.
struct PostParts<Tree: 'static + MerkleTreeTrait> {
    kind: Kind,
    pub_in: fallback::PublicInputs<Domain<Tree>>,
    pub_params: fallback::PublicParams,
    proof: PartitionProof<Tree>,
    cache_id: String,
}

impl<Tree: 'static + MerkleTreeTrait> Partitions for PostParts<Tree> {
    type Circuit = FallbackPoStCircuit<Tree>;

    fn count(&self) -> u32 {
        1
    }

    fn circuit(&self, _: usize) -> Result<Self::Circuit> {
        // The public inputs hold this partition's sectors only: its circuit is their first
        // chunk (as filecoin-proofs' `generate_single_window_post_with_vanilla` builds it).
        <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::circuit(
            &self.pub_in,
            Default::default(),
            &self.proof,
            &self.pub_params,
            Some(0),
        )
    }

    fn blank(&self) -> Self::Circuit {
        <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::blank_circuit(
            &self.pub_params,
        )
    }

    fn cache_id(&self) -> &str {
        &self.cache_id
    }

    fn kind(&self) -> Kind {
        self.kind
    }
}

/// A PoSt's vanilla proofs as its request carries them (bincode `FallbackPoStSectorProof`s)
/// decoded and checked for shape, before anything verifies them: what the fuzz harness feeds
/// any bytes (`decode_vanilla`).
fn sector_proofs<Tree: 'static + MerkleTreeTrait>(
    config: &PoStConfig,
    vanilla_bytes: &[Vec<u8>],
    what: &str,
) -> Result<Vec<FallbackPoStSectorProof<Tree>>> {
    // Per sector: one sector proof of `challenges` inclusion proofs (filecoin-proofs indexes
    // and pads them without checking first).
    let challenges = config.challenge_count;
    let mut vanilla = Vec::with_capacity(vanilla_bytes.len());
    for (i, bytes) in vanilla_bytes.iter().enumerate() {
        let p: FallbackPoStSectorProof<Tree> = inputs::decode(bytes).with_context(|| {
            format!("vanilla_proofs[{i}] is not a FallbackPoStSectorProof of {what}")
        })?;
        let shape: Vec<usize> = p
            .vanilla_proof
            .sectors
            .iter()
            .map(|s| s.inclusion_proofs.len())
            .collect();
        if shape != [challenges] {
            bail!(
                "vanilla_proofs[{i}] (sector {}) holds {shape:?} inclusion proofs; {what} takes one sector of {challenges}",
                u64::from(p.sector_id)
            );
        }
        let leaves = (config.sector_size.0 / 32) as usize;
        let paths = p.vanilla_proof.sectors[0].inclusion_proofs.iter();
        if paths
            .clone()
            .any(|ip| ip.path().len() != ip.expected_len(leaves))
        {
            bail!(
                "vanilla_proofs[{i}] (sector {}) is a proof of another sector size, not {what}'s",
                u64::from(p.sector_id)
            );
        }
        // storage-proofs-post's verifier takes comm_r_last from the openings' root, the circuit
        // from the field: a field that disagrees passes the vanilla check and fails the proof.
        let sector = &p.vanilla_proof.sectors[0];
        if sector
            .inclusion_proofs
            .iter()
            .any(|ip| ip.root() != sector.comm_r_last)
        {
            bail!(
                "vanilla_proofs[{i}] (sector {}): its comm_r_last is not the root its inclusion \
                 proofs open",
                u64::from(p.sector_id)
            );
        }
        if vanilla
            .iter()
            .any(|v: &FallbackPoStSectorProof<Tree>| v.sector_id == p.sector_id)
        {
            bail!(
                "vanilla_proofs name sector {} twice",
                u64::from(p.sector_id)
            );
        }
        vanilla.push(p);
    }
    Ok(vanilla)
}

/// Any bytes as the vanilla proofs of a `kind` PoSt of `size` (the request's decoder and its
/// shape checks): how many decode, or why not.
pub fn decode_vanilla(kind: Kind, size: SectorSize, proofs: &[Vec<u8>]) -> Result<usize> {
    fn count<Tree: 'static + MerkleTreeTrait>(
        config: &PoStConfig,
        proofs: &[Vec<u8>],
    ) -> Result<usize> {
        Ok(sector_proofs::<Tree>(config, proofs, "the fuzzed PoSt")?.len())
    }
    let config = config(kind, size, ApiVersion::V1_2_0)?;
    with_tree!(size, count(&config, proofs))
}

fn build<Tree: 'static + MerkleTreeTrait>(
    st: &Statement,
    vanilla_bytes: &[Vec<u8>],
    params_dir: Option<&Path>,
    name: &str,
    what: &str,
) -> Result<(Registered, Vec<Sector>)> {
    let config = &st.config;
    let randomness: Domain<Tree> = as_safe_commitment(&st.randomness, "randomness")
        .context("randomness is not a field element (Filecoin clears its top two bits)")?;
    let prover_id: Domain<Tree> = as_safe_commitment(&st.prover_id, "prover_id")
        .context("the prover id is not a field element")?;
    let vanilla = sector_proofs::<Tree>(config, vanilla_bytes, what)?;
    let setup = match st.kind {
        Kind::WinningPost => parameters::winning_post_setup_params(config)?,
        _ => parameters::window_post_setup_params(config),
    };
    let pub_params =
        <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::setup(
            &compound_proof::SetupParams {
                vanilla_params: setup,
                partitions: None,
                priority: false,
            },
        )?
        .vanilla_params;
    let cache_id = <FallbackPoStCompound<Tree> as CacheableParameters<
        FallbackPoStCircuit<Tree>,
        _,
    >>::cache_identifier(&pub_params);
    compound::params_file(params_dir, &cache_id, what)?;
    let sectors: Vec<PublicSector<Domain<Tree>>> = vanilla
        .iter()
        .map(|p| PublicSector {
            id: p.sector_id,
            comm_r: p.comm_r,
        })
        .collect();
    // A WinningPoSt's circuit takes its one sector as many times as it has challenges (one
    // challenge each), as `verify_winning_post` lists it; so the vanilla check covers them all.
    let sectors = match st.kind {
        Kind::WinningPost => (0..pub_params.sector_count)
            .flat_map(|_| sectors.iter().cloned())
            .collect(),
        _ => sectors,
    };
    let pub_in = fallback::PublicInputs {
        randomness,
        prover_id,
        sectors,
        k: Some(st.partition_index),
    };
    // filecoin-proofs lays the sectors' proofs out as the circuit takes them and verifies them
    // against the challenges of this randomness: a vanilla proof that does not verify is
    // refused here, in milliseconds, instead of failing after a proof's time.
    let proof = checked(|| single_partition_vanilla_proofs(config, &pub_params, &pub_in, &vanilla))
        .map_err(|e| {
            let winning = st.kind == Kind::WinningPost;
            let first = st.partition_index * config.sector_count;
            let failed = checked(|| {
                Ok(crate::diagnose::post(
                    &pub_params,
                    randomness,
                    winning,
                    first,
                    &vanilla,
                ))
            });
            let why = match failed {
                Ok(Some(what)) => what,
                _ => format!("{e:#}"),
            };
            anyhow!("its vanilla proofs do not verify against its randomness and sectors: {why}")
        })?;
    let listed = vanilla
        .iter()
        .map(|p| (u64::from(p.sector_id), commitment(&p.comm_r)))
        .collect();
    let parts = PostParts::<Tree> {
        kind: st.kind,
        pub_in,
        pub_params,
        proof,
        cache_id,
    };
    Ok((compound::register(name, parts, params_dir, what)?, listed))
}

fn commitment<D: filecoin_hashers::Domain>(d: &D) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&d.into_bytes());
    out
}

impl Post {
    /// filecoin-proofs' `verify_window_post` or `verify_winning_post` over the proof, with `vk`.
    pub fn verify(&self, vk: &VerifyingKey, proof: &[u8]) -> Result<bool> {
        filecoin::provide_vk(&self.circuits, vk)?;
        let (_, _, api_version) = registered(self.registered_proof)?;
        let config = config(self.kind, self.size, api_version)?;
        with_tree!(self.size, verify_post(self, &config, proof))
    }
}

fn verify_post<Tree: 'static + MerkleTreeTrait>(
    post: &Post,
    config: &PoStConfig,
    proof: &[u8],
) -> Result<bool> {
    let replica = |comm_r: &[u8; 32]| PublicReplicaInfo::new(*comm_r);
    match post.kind {
        Kind::WinningPost => {
            let replicas = post
                .sectors
                .iter()
                .map(|(id, comm_r)| Ok((SectorId::from(*id), replica(comm_r)?)))
                .collect::<Result<Vec<_>>>()?;
            filecoin_proofs::verify_winning_post::<Tree>(
                config,
                &post.randomness,
                &replicas,
                post.prover_id,
                proof,
            )
        }
        _ => {
            let replicas = post
                .sectors
                .iter()
                .map(|(id, comm_r)| Ok((SectorId::from(*id), replica(comm_r)?)))
                .collect::<Result<BTreeMap<_, _>>>()?;
            ensure!(
                replicas.len() == post.sectors.len(),
                "a sector listed twice"
            );
            filecoin_proofs::verify_window_post::<Tree>(
                config,
                &post.randomness,
                &replicas,
                post.prover_id,
                proof,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_numbers_are_filecoin_proofs_apis() {
        assert_eq!(
            registered(3).unwrap(),
            (Kind::WinningPost, SectorSize::S32GiB, ApiVersion::V1_0_0)
        );
        assert_eq!(
            registered(13).unwrap(),
            (Kind::WindowPost, SectorSize::S32GiB, ApiVersion::V1_2_0)
        );
        assert_eq!(registered(5).unwrap().1, SectorSize::S2KiB);
        assert!(registered(15).is_err());
        assert_eq!(registered_id(Kind::WindowPost, SectorSize::S2KiB), 10);
        assert_eq!(registered_id(Kind::WinningPost, SectorSize::S8MiB), 1);
        assert_eq!(registered_name(13), "StackedDrgWindow32GiBV1_2");
        assert_eq!(registered_name(0), "StackedDrgWinning2KiBV1");
        let c = config(Kind::WindowPost, SectorSize::S32GiB, ApiVersion::V1_2_0).unwrap();
        assert_eq!((c.sector_count, c.challenge_count), (2349, 10));
    }
}
