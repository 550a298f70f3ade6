//! The inputs of PoSt and SnapDeals proofs of test sectors sealed here, made with
//! filecoin-proofs' own API as a Curio rig makes them: a WinningPoSt's challenged sector
//! (`generate_winning_post_sector_challenge`), each sector's challenges
//! (`generate_fallback_sector_challenges`) and vanilla proof (`generate_single_vanilla_proof`);
//! a SnapDeals update of the sector (`encode_into`, cached beside it, the sealed replica
//! standing for the CC sector's key) and its partitions' vanilla proofs
//! (`generate_partition_proofs`).

use anyhow::{bail, Context, Result};
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::{
    add_piece, encode_into, generate_fallback_sector_challenges, generate_partition_proofs,
    generate_piece_commitment, generate_single_vanilla_proof,
    generate_winning_post_sector_challenge, PaddedBytesAmount, PrivateReplicaInfo,
    SectorUpdateConfig, UnpaddedBytesAmount,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::sector::SectorId;
use storage_proofs_update::constants::TreeRHasher;

use crate::inputs::{encode, Inputs};
use crate::kind::Kind;
use crate::post;
use crate::seal::Sealed;
use crate::sector::{with_tree, ProofVersion, SectorSize};
use crate::snap;

/// A PoSt's challenge seed drawn from `seed`, its top two bits cleared as Filecoin clears a
/// beacon's randomness (so it is a field element).
pub fn randomness(seed: u64) -> [u8; 32] {
    let mut r = [0u8; 32];
    ChaCha20Rng::seed_from_u64(seed ^ 0x9057_0000_0000_0000).fill_bytes(&mut r);
    r[31] &= 0x3f;
    r
}

/// A WinningPoSt over `sectors` or a WindowPoSt partition of them (all of the same size and
/// sealed under one prover id), for `randomness`: the inputs Curio would send.
pub fn post(kind: Kind, sectors: &[Sealed], randomness: [u8; 32]) -> Result<Inputs> {
    let Some(first) = sectors.first() else {
        bail!("a PoSt needs at least one sector");
    };
    let size = first.c1.size;
    let mut inputs = Inputs::new(kind);
    inputs.registered_proof = post::registered_id(kind, size);
    let (_, _, api_version) = post::registered(inputs.registered_proof)?;
    let config = post::config(kind, size, api_version)?;
    inputs.prover_id = first.prover_id;
    inputs.randomness = randomness.to_vec();
    inputs.vanilla_proofs = with_tree!(size, post_proofs(kind, &config, sectors, randomness))?;
    Ok(inputs)
}

fn post_proofs<Tree: 'static + MerkleTreeTrait>(
    kind: Kind,
    config: &filecoin_proofs::PoStConfig,
    sectors: &[Sealed],
    randomness: [u8; 32],
) -> Result<Vec<Vec<u8>>> {
    let prover_id = sectors[0].prover_id;
    let chosen: Vec<&Sealed> = match kind {
        Kind::WinningPost => {
            let picked = generate_winning_post_sector_challenge::<Tree>(
                config,
                &randomness,
                sectors.len() as u64,
                prover_id,
            )?;
            picked
                .iter()
                .map(|i| sectors.get(*i as usize).context("a challenge out of range"))
                .collect::<Result<_>>()?
        }
        _ => sectors.iter().take(config.sector_count).collect(),
    };
    let ids: Vec<SectorId> = chosen.iter().map(|s| SectorId::from(s.sector_id)).collect();
    let challenges =
        generate_fallback_sector_challenges::<Tree>(config, &randomness, &ids, prover_id)?;
    chosen
        .iter()
        .zip(&ids)
        .map(|(sector, id)| {
            let replica = PrivateReplicaInfo::<Tree>::new(
                sector.replica(),
                sector.c1.comm_r,
                sector.cache(),
            )?;
            let of = challenges.get(id).context("no challenges for a sector")?;
            encode(&generate_single_vanilla_proof::<Tree>(
                config, *id, &replica, of,
            )?)
        })
        .collect()
}

/// A SnapDeals update of `sealed` with data drawn from `seed` (encoded once, cached in the
/// sector's folder) and its partitions' vanilla proofs: the inputs Curio would send.
pub fn snap(sealed: &Sealed, seed: u64, progress: &dyn Fn(&str)) -> Result<Inputs> {
    let size = sealed.c1.size;
    let dir = sealed.dir.join(format!("update-seed{seed}"));
    let comms = match with_tree!(size, cached_update(sealed, &dir)) {
        Ok(c) => c,
        Err(e) => {
            if dir.exists() {
                progress(&format!(
                    "{}: {e:#}; encoding the update again",
                    dir.display()
                ));
            }
            progress(&format!(
                "encoding a SnapDeals update into the {size} test sector"
            ));
            with_tree!(size, update(sealed, seed, &dir))
                .with_context(|| format!("encoding an update into {}", sealed.dir.display()))?
        }
    };
    let mut inputs = Inputs::new(Kind::Snap);
    inputs.registered_proof = snap::registered_id(size);
    inputs.prover_id = sealed.prover_id;
    inputs.comm_r_old = sealed.c1.comm_r.to_vec();
    inputs.comm_r_new = comms.comm_r_new.to_vec();
    inputs.comm_d_new = comms.comm_d_new.to_vec();
    inputs.vanilla_proofs = with_tree!(size, update_proofs(sealed, &dir, &comms))?;
    Ok(inputs)
}

/// What an update's encoding gives.
struct Comms {
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
}

fn update_config(size: SectorSize) -> SectorUpdateConfig {
    SectorUpdateConfig::from_porep_config(&ProofVersion::V1_1.porep_config(size))
}

fn replica(dir: &Path) -> PathBuf {
    dir.join("replica")
}

fn cache(dir: &Path) -> PathBuf {
    dir.join("cache")
}

/// The update cached in `dir`, if it is whole: its commitments (written last), the new
/// replica's size, and comm_r_new from the new cache's comm_c and comm_r_last.
fn cached_update<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    sealed: &Sealed,
    dir: &Path,
) -> Result<Comms> {
    let raw = std::fs::read(dir.join("comms")).context("no commitments")?;
    if raw.len() != 64 {
        bail!("its commitments file is damaged");
    }
    let (mut comm_r_new, mut comm_d_new) = ([0u8; 32], [0u8; 32]);
    comm_r_new.copy_from_slice(&raw[..32]);
    comm_d_new.copy_from_slice(&raw[32..]);
    let len = std::fs::metadata(replica(dir))?.len();
    if len != sealed.c1.size.bytes() {
        bail!("its replica has {len} bytes");
    }
    let info = PrivateReplicaInfo::<Tree>::new(replica(dir), comm_r_new, cache(dir))?;
    let comm_r =
        <Tree::Hasher as Hasher>::Function::hash2(&info.safe_comm_c(), &info.safe_comm_r_last());
    if comm_r != info.safe_comm_r()? {
        bail!("its cache does not give its comm_r_new");
    }
    Ok(Comms {
        comm_r_new,
        comm_d_new,
    })
}

/// Encodes fresh data into a copy of the sealed replica in `dir` (replaced if there).
fn update<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    sealed: &Sealed,
    seed: u64,
    dir: &Path,
) -> Result<Comms> {
    let size = sealed.c1.size;
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(cache(dir))?;
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(size.bytes()));
    let mut data = vec![0u8; unpadded.0 as usize];
    ChaCha20Rng::seed_from_u64(seed ^ 0x5a4b_0000_0000_0000).fill_bytes(&mut data);
    let piece_path = dir.join("piece");
    let mut piece = std::fs::File::create_new(&piece_path)?;
    piece.write_all(&data)?;
    piece.rewind()?;
    let info = generate_piece_commitment(&mut piece, unpadded)?;
    piece.rewind()?;
    let staged_path = dir.join("staged");
    let mut staged = std::fs::File::create_new(&staged_path)?;
    add_piece(&mut piece, &mut staged, unpadded, &[])?;
    drop((piece, staged));
    std::fs::File::create_new(replica(dir))?.set_len(size.bytes())?;
    let out = encode_into::<Tree>(
        &update_config(size),
        &replica(dir),
        &cache(dir),
        &sealed.replica(),
        &sealed.cache(),
        &staged_path,
        &[info],
    )?;
    for f in [piece_path, staged_path] {
        std::fs::remove_file(f)?;
    }
    let mut comms = out.comm_r_new.to_vec();
    comms.extend_from_slice(&out.comm_d_new);
    std::fs::write(dir.join("comms"), comms)?;
    Ok(Comms {
        comm_r_new: out.comm_r_new,
        comm_d_new: out.comm_d_new,
    })
}

fn update_proofs<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    sealed: &Sealed,
    dir: &Path,
    comms: &Comms,
) -> Result<Vec<Vec<u8>>> {
    let proofs = generate_partition_proofs::<Tree>(
        update_config(sealed.c1.size),
        sealed.c1.comm_r,
        comms.comm_r_new,
        comms.comm_d_new,
        &sealed.replica(),
        &sealed.cache(),
        &replica(dir),
        &cache(dir),
    )?;
    proofs.iter().map(encode).collect()
}
