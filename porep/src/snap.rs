//! SnapDeals: storage-proofs-update's EmptySectorUpdate circuit of each partition, built from
//! its vanilla proof (a bincode `PartitionProof`, as Curio sends it) and the update's
//! commitments through the compound proof's `circuit`, everything checked before any long
//! work, and the proof checked by filecoin-proofs' `verify_empty_sector_update_proof`.

use anyhow::{anyhow, bail, Context, Result};
use filecoin_hashers::Domain;
use provetop_engine::params::VerifyingKey;
use std::path::Path;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_update::constants::{
    apex_leaf_count, challenge_count, h_default, partition_count, TreeDDomain, TreeRDomain,
    TreeRHasher,
};
use storage_proofs_update::{
    ChallengeProof, EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound,
    PartitionProof, PublicInputs, PublicParams,
};

use crate::compound::{self, checked, Partitions, Registered};
use crate::filecoin;
use crate::inputs::{self, Inputs};
use crate::kind::Kind;
use crate::sector::{with_tree, ProofVersion, SectorSize};

/// A registered SnapDeals update and what its verifier needs.
pub struct Snap {
    /// Its partitions' circuits in the engine (1 for 2KiB, 4 for 8MiB, 16 for 32GiB).
    pub circuits: Registered,
    /// The sector's size.
    pub size: SectorSize,
    /// The sector's sealed commitment before the update.
    pub comm_r_old: [u8; 32],
    /// Its sealed commitment after.
    pub comm_r_new: [u8; 32],
    /// The new data's commitment.
    pub comm_d_new: [u8; 32],
}

/// The sector size of filecoin-proofs-api's registered update proof number `id` (what Curio
/// sends as `registered_proof`: `StackedDrg32GiBV1` is 3).
pub fn registered(id: u64) -> Result<SectorSize> {
    match SectorSize::ALL.get(id as usize) {
        Some(size) if id < 5 => Ok(*size),
        _ => bail!("{id} is not a registered update proof number (0-4)"),
    }
}

/// The registered update proof number of `size`.
pub fn registered_id(size: SectorSize) -> u64 {
    SectorSize::ALL.iter().position(|s| *s == size).unwrap_or(0) as u64
}

/// filecoin-proofs-api's name of registered update proof `id`.
pub fn registered_name(id: u64) -> String {
    match registered(id) {
        Ok(size) => format!("StackedDrg{size}V1 (update)"),
        Err(_) => format!("registered update proof {id}"),
    }
}

/// The update's configuration: that of the sector's V1_1 seal proof, as filecoin-proofs-api's
/// `RegisteredUpdateProof` gives it.
fn porep_config(size: SectorSize) -> filecoin_proofs::PoRepConfig {
    ProofVersion::V1_1.porep_config(size)
}

/// A commitment field: 32 bytes that are a field element, not all zero.
fn commitment<D: Domain>(bytes: &[u8], field: &str) -> Result<([u8; 32], D)> {
    let raw: [u8; 32] = bytes
        .try_into()
        .map_err(|_| anyhow!("{field} has {} bytes, not 32", bytes.len()))?;
    if raw == [0; 32] {
        bail!("{field} is all zero");
    }
    let d = filecoin_proofs::as_safe_commitment(&raw, field)
        .map_err(|_| anyhow!("{field} is not a field element"))?;
    Ok((raw, d))
}

/// Checks a SnapDeals request's inputs, builds its partitions' circuits and registers them as
/// `name`.
pub fn register(inputs: &Inputs, params_dir: Option<&Path>, name: &str) -> Result<Snap> {
    let size = registered(inputs.registered_proof)?;
    let what = registered_name(inputs.registered_proof);
    let (comm_r_old, old) = commitment::<TreeRDomain>(&inputs.comm_r_old, "comm_r_old")?;
    let (comm_r_new, new) = commitment::<TreeRDomain>(&inputs.comm_r_new, "comm_r_new")?;
    let (comm_d_new, data) = commitment::<TreeDDomain>(&inputs.comm_d_new, "comm_d_new")?;
    let nodes = (size.bytes() / 32) as usize;
    let want = partition_count(nodes);
    if inputs.vanilla_proofs.len() != want {
        bail!(
            "{} vanilla proofs: the update of a {size} sector has {want} partitions, one proof each",
            inputs.vanilla_proofs.len()
        );
    }
    filecoin::configure(params_dir)?;
    let pub_in = PublicInputs {
        k: want,
        comm_r_old: old,
        comm_d_new: data,
        comm_r_new: new,
        h: h_default(nodes),
    };
    let circuits = with_tree!(
        size,
        build(
            pub_in,
            nodes,
            &inputs.vanilla_proofs,
            params_dir,
            name,
            &what
        )
    )?;
    Ok(Snap {
        circuits,
        size,
        comm_r_old,
        comm_r_new,
        comm_d_new,
    })
}

/// The partitions' circuits, as `EmptySectorUpdateCompound` builds them.
struct SnapParts<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> {
    pub_in: PublicInputs,
    pub_params: PublicParams,
    vanilla: Vec<PartitionProof<Tree>>,
    cache_id: String,
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> Partitions for SnapParts<Tree> {
    type Circuit = EmptySectorUpdateCircuit<Tree>;

    fn count(&self) -> u32 {
        self.vanilla.len() as u32
    }

    fn circuit(&self, k: usize) -> Result<Self::Circuit> {
        <EmptySectorUpdateCompound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::circuit(
            &self.pub_in,
            (),
            &self.vanilla[k],
            &self.pub_params,
            Some(k),
        )
    }

    fn blank(&self) -> Self::Circuit {
        <EmptySectorUpdateCompound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::blank_circuit(
            &self.pub_params,
        )
    }

    fn cache_id(&self) -> &str {
        &self.cache_id
    }

    fn kind(&self) -> Kind {
        Kind::Snap
    }
}

/// SnapDeals vanilla proofs of a `size` sector decoded and their shape checked, as `register`
/// does before anything else: how many there are (the fuzz target's way in).
pub fn decode_vanilla(size: SectorSize, proofs: &[Vec<u8>]) -> Result<usize> {
    fn count<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
        proofs: &[Vec<u8>],
        nodes: usize,
    ) -> Result<usize> {
        Ok(decode_partitions::<Tree>(proofs, nodes, "the fuzzed update")?.len())
    }
    let nodes = (size.bytes() / 32) as usize;
    with_tree!(size, count(proofs, nodes))
}

/// Each partition's proof decoded (a bincode `PartitionProof`) and of the shape a sector of
/// `nodes` nodes takes: the circuit indexes its challenges, apex leaves and paths unchecked.
fn decode_partitions<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    vanilla_bytes: &[Vec<u8>],
    nodes: usize,
    what: &str,
) -> Result<Vec<PartitionProof<Tree>>> {
    let mut vanilla = Vec::with_capacity(vanilla_bytes.len());
    for (k, bytes) in vanilla_bytes.iter().enumerate() {
        let p: PartitionProof<Tree> = inputs::decode(bytes)
            .with_context(|| format!("vanilla_proofs[{k}] is not a PartitionProof of {what}"))?;
        // The circuit indexes them without checking first.
        let (challenges, apex) = (challenge_count(nodes), apex_leaf_count(nodes));
        let paths = |c: &ChallengeProof<Tree>| {
            c.proof_r_old.path().len() == c.proof_r_old.expected_len(nodes)
                && c.proof_r_new.path().len() == c.proof_r_new.expected_len(nodes)
                && c.proof_d_new.path().len() == c.proof_d_new.expected_len(nodes)
        };
        if p.challenge_proofs.len() != challenges
            || p.apex_leafs.len() != apex
            || !p.challenge_proofs.iter().all(paths)
        {
            bail!(
                "vanilla_proofs[{k}] is not a partition proof of {what}: {} challenge proofs and {} apex leaves where it takes {challenges} and {apex}, or paths of another sector size",
                p.challenge_proofs.len(),
                p.apex_leafs.len()
            );
        }
        vanilla.push(p);
    }
    Ok(vanilla)
}

fn build<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    pub_in: PublicInputs,
    nodes: usize,
    vanilla_bytes: &[Vec<u8>],
    params_dir: Option<&Path>,
    name: &str,
    what: &str,
) -> Result<Registered> {
    let vanilla = decode_partitions::<Tree>(vanilla_bytes, nodes, what)?;
    let pub_params = PublicParams::from_sector_size((nodes * 32) as u64);
    let cache_id = <EmptySectorUpdateCompound<Tree> as CacheableParameters<
        EmptySectorUpdateCircuit<Tree>,
        PublicParams,
    >>::cache_identifier(&pub_params);
    compound::params_file(params_dir, &cache_id, what)?;
    // The partitions' vanilla proofs against the update's commitments: one that does not
    // verify is refused here instead of failing after a proof's time.
    let verified = checked(|| {
        <EmptySectorUpdate<Tree> as ProofScheme<'_>>::verify_all_partitions(
            &pub_params,
            &pub_in,
            &vanilla,
        )
    })
    .context("checking its vanilla proofs")?;
    if !verified {
        let failed = checked(|| Ok(crate::diagnose::snap(&pub_params, &pub_in, &vanilla)));
        let why = match failed {
            Ok(Some(what)) => what,
            Ok(None) => "storage-proofs-update's verifier refuses them".into(),
            Err(e) => format!("{e:#}"),
        };
        bail!(
            "its vanilla proofs do not verify against comm_r_old, comm_r_new and comm_d_new: {why}"
        );
    }
    let parts = SnapParts {
        pub_in,
        pub_params,
        vanilla,
        cache_id,
    };
    compound::register(name, parts, params_dir, what)
}

impl Snap {
    /// filecoin-proofs' `verify_empty_sector_update_proof` over the partitions' proofs (192
    /// bytes each, in order), with `vk`.
    pub fn verify(&self, vk: &VerifyingKey, proofs: &[u8]) -> Result<bool> {
        filecoin::provide_vk(&self.circuits, vk)?;
        with_tree!(self.size, verify_update(self, proofs))
    }
}

fn verify_update<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    snap: &Snap,
    proofs: &[u8],
) -> Result<bool> {
    filecoin_proofs::verify_empty_sector_update_proof::<Tree>(
        &porep_config(snap.size),
        proofs,
        snap.comm_r_old,
        snap.comm_r_new,
        snap.comm_d_new,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_numbers_and_early_errors() {
        assert_eq!(registered(3).unwrap(), SectorSize::S32GiB);
        assert_eq!(registered_id(SectorSize::S8MiB), 1);
        assert!(registered(5).is_err());
        let mut i = Inputs::new(Kind::Snap);
        i.registered_proof = 0;
        let err = |i: &Inputs| format!("{:#}", register(i, None, "t").err().unwrap());
        assert!(err(&i).contains("comm_r_old has 0 bytes"));
        i.comm_r_old = vec![1; 32];
        i.comm_r_new = vec![0; 32];
        assert!(err(&i).contains("comm_r_new is all zero"));
        i.comm_r_new = vec![0xff; 32];
        assert!(err(&i).contains("comm_r_new is not a field element"));
        i.comm_r_new = vec![2; 32];
        i.comm_d_new = vec![3; 32];
        assert!(err(&i).contains("0 vanilla proofs"));
    }
}
