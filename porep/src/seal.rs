//! Test-size sectors sealed here (pre-commit and commit phase 1 by filecoin-proofs), so a
//! machine without Filecoin's parameters or a C1 file still proves the real circuits. The C1
//! output is cached, in lotus-bench's layout with our prover id added, and beside it the
//! sector's replica and cache folder (its trees' roots and tree_r_last), which PoSt and
//! SnapDeals read: checked against the C1's comm_r before reuse, sealed again when damaged.

use anyhow::{bail, Context, Result};
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::{
    add_piece, clear_cache, generate_piece_commitment, seal_commit_phase1, seal_pre_commit_phase1,
    seal_pre_commit_phase2, PaddedBytesAmount, PrivateReplicaInfo, SealCommitPhase1Output,
    UnpaddedBytesAmount,
};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::c1::C1;
use crate::sector::{with_tree, ProofVersion, SectorSize};

/// A sealed test sector's C1 output and the ids it was sealed with.
pub struct Sealed {
    /// The C1 output, as read back from the cache or just sealed.
    pub c1: C1,
    /// The prover id the sector was sealed under.
    pub prover_id: [u8; 32],
    /// The sector number it was sealed under.
    pub sector_id: u64,
    /// The cached C1 file, under the engine's cache root in `porep/sealed`.
    pub path: PathBuf,
    /// The sector's folder beside it: its replica, `sealed`, and its cache folder, `cache`.
    pub dir: PathBuf,
}

impl Sealed {
    /// The sealed replica.
    pub fn replica(&self) -> PathBuf {
        self.dir.join("sealed")
    }

    /// Its cache folder: p_aux, t_aux and tree_r_last (the layers and other trees are cleared
    /// once commit phase 1 is done, as a sealing rig clears them).
    pub fn cache(&self) -> PathBuf {
        self.dir.join("cache")
    }
}

/// The C1 output of a `size` test sector whose data, ids, ticket and seed come from `seed`:
/// from the cache, else sealed now (and cached).
pub fn sealed_c1(size: SectorSize, seed: u64, progress: &dyn Fn(&str)) -> Result<Sealed> {
    sealed_c1_as(size, seed, None, progress)
}

/// [`sealed_c1`] with the prover id and sector number given (a miner's, as a request names
/// them) instead of drawn from `seed`; cached under a name of its own.
pub fn sealed_c1_as(
    size: SectorSize,
    seed: u64,
    ids: Option<([u8; 32], u64)>,
    progress: &dyn Fn(&str),
) -> Result<Sealed> {
    cached(size, seed, ids, false, progress)
}

/// [`sealed_c1_as`] with the sector's replica and cache folder there and checked (PoSt and
/// SnapDeals prove from them): a sector whose C1 was cached without them, or whose replica does
/// not give the C1's comm_r, is sealed again.
pub fn sealed_sector(
    size: SectorSize,
    seed: u64,
    ids: Option<([u8; 32], u64)>,
    progress: &dyn Fn(&str),
) -> Result<Sealed> {
    cached(size, seed, ids, true, progress)
}

fn cached(
    size: SectorSize,
    seed: u64,
    ids: Option<([u8; 32], u64)>,
    with_replica: bool,
    progress: &dyn Fn(&str),
) -> Result<Sealed> {
    let dir = provetop_engine::params::cache::cache_root()
        .join("porep")
        .join("sealed");
    let stem = match ids {
        None => format!("{size}-seed{seed}"),
        Some((p, s)) => format!(
            "{size}-seed{seed}-{}-s{s}",
            provetop_engine::circuit::shape::hex(&p)
        ),
    };
    let path = dir.join(format!("{stem}.c1.json"));
    let sector_dir = dir.join(&stem);
    let ids_given = ids;
    if path.is_file() {
        match C1::read(&path, Some(size), None) {
            Ok(
                c1 @ C1 {
                    prover_id: Some(prover_id),
                    sector_id: Some(sector_id),
                    ..
                },
            ) => {
                let sealed = Sealed {
                    prover_id,
                    sector_id,
                    c1,
                    path: path.clone(),
                    dir: sector_dir.clone(),
                };
                if !with_replica {
                    return Ok(sealed);
                }
                match with_tree!(size, check_replica(&sealed)) {
                    Ok(()) => return Ok(sealed),
                    Err(e) => progress(&format!(
                        "{}: {e:#}; sealing the sector again",
                        sector_dir.display()
                    )),
                }
            }
            Ok(_) => tracing::warn!(
                "{} has no prover or sector id; sealing again",
                path.display()
            ),
            Err(e) => tracing::warn!("{} is unusable ({e:#}); sealing again", path.display()),
        }
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5ea1_5ec7_0000_0000);
    // A miner's ID address, as every Filecoin prover id is: a field element, as PoSt needs.
    let miner = format!("f0{}", 1000 + rng.gen::<u32>() % 1_000_000);
    let mut ids = Ids {
        prover_id: crate::c1::parse_prover_id(&miner)?,
        sector_id: rng.gen::<u64>() >> 1,
        ticket: rng.gen(),
        seed: rng.gen(),
    };
    if let Some((p, s)) = ids_given {
        (ids.prover_id, ids.sector_id) = (p, s);
    }
    let start = Instant::now();
    let c1 = with_tree!(
        size,
        seal(size, &ids, &mut rng, &dir, &sector_dir, progress)
    )
    .with_context(|| format!("sealing a {size} test sector"))?;
    progress(&format!(
        "sealed a {size} test sector in {:.1} s; C1 cached in {}, the replica in {}",
        start.elapsed().as_secs_f64(),
        path.display(),
        sector_dir.display()
    ));
    let json = serde_json::to_vec(&c1.to_wrapped_json(ids.sector_id, &ids.prover_id))?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, json)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .with_context(|| format!("caching {}", path.display()))?;
    Ok(Sealed {
        c1,
        prover_id: ids.prover_id,
        sector_id: ids.sector_id,
        path,
        dir: sector_dir,
    })
}

/// The kept replica and its tree give the C1's comm_r: H(comm_c, comm_r_last) from p_aux is
/// comm_r, tree_r_last's root is comm_r_last, and the replica has the sector's size.
fn check_replica<Tree: 'static + MerkleTreeTrait>(sealed: &Sealed) -> Result<()> {
    let size = sealed.c1.size.bytes();
    let replica = sealed.replica();
    let len = std::fs::metadata(&replica)
        .map(|m| m.len())
        .map_err(|e| anyhow::anyhow!("no replica ({e})"))?;
    if len != size {
        bail!("its replica has {len} bytes, not {size}");
    }
    let info = PrivateReplicaInfo::<Tree>::new(replica, sealed.c1.comm_r, sealed.cache())
        .context("its cache folder")?;
    let (comm_c, comm_r_last) = (info.safe_comm_c(), info.safe_comm_r_last());
    let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);
    if comm_r != info.safe_comm_r()? {
        bail!("its cache folder's comm_c and comm_r_last do not give the C1's comm_r");
    }
    let tree = info
        .merkle_tree(filecoin_proofs::SectorSize(size))
        .context("its tree_r_last")?;
    if tree.root() != comm_r_last {
        bail!("its tree_r_last's root is not the comm_r_last it was sealed with");
    }
    Ok(())
}

struct Ids {
    prover_id: [u8; 32],
    sector_id: u64,
    ticket: [u8; 32],
    seed: [u8; 32],
}

/// Seals a sector in a fresh folder under `dir` and, once commit phase 1 is done, puts its
/// replica and cache folder at `keep`.
fn seal<Tree: 'static + MerkleTreeTrait>(
    size: SectorSize,
    ids: &Ids,
    rng: &mut ChaCha20Rng,
    dir: &Path,
    keep: &Path,
    progress: &dyn Fn(&str),
) -> Result<C1> {
    let version = ProofVersion::V1_1;
    let config = version.porep_config(size);
    let work = tempfile::Builder::new()
        .prefix("sealing-")
        .tempdir_in(dir)?;
    let cache = work.path().join("cache");
    std::fs::create_dir_all(&cache)?;
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(size.bytes()));
    let mut data = vec![0u8; unpadded.0 as usize];
    rng.fill_bytes(&mut data);
    let piece_path = work.path().join("piece");
    let mut piece = std::fs::File::create_new(&piece_path)?;
    piece.write_all(&data)?;
    piece.rewind()?;
    drop(data);
    progress(&format!("sealing a {size} test sector: piece commitment"));
    let info = generate_piece_commitment(&mut piece, unpadded)?;
    piece.rewind()?;
    let staged_path = work.path().join("staged");
    let sealed_path = work.path().join("sealed");
    let mut staged = std::fs::File::create_new(&staged_path)?;
    add_piece(&mut piece, &mut staged, unpadded, &[])?;
    drop((piece, staged));
    std::fs::File::create_new(&sealed_path)?;
    let pieces = vec![info];
    progress(&format!(
        "sealing a {size} test sector: pre-commit 1 (SDR labels)"
    ));
    let p1 = seal_pre_commit_phase1::<_, _, _, Tree>(
        &config,
        &cache,
        &staged_path,
        &sealed_path,
        ids.prover_id,
        ids.sector_id.into(),
        ids.ticket,
        &pieces,
    )?;
    progress(&format!(
        "sealing a {size} test sector: pre-commit 2 (trees)"
    ));
    let pre_commit = seal_pre_commit_phase2(&config, p1, &cache, &sealed_path)?;
    progress(&format!(
        "sealing a {size} test sector: commit 1 (vanilla proofs)"
    ));
    let out: SealCommitPhase1Output<Tree> = seal_commit_phase1(
        &config,
        &cache,
        &sealed_path,
        ids.prover_id,
        ids.sector_id.into(),
        ids.ticket,
        ids.seed,
        pre_commit,
        &pieces,
    )?;
    let c1 = C1::parse(&serde_json::to_vec(&out)?, Some(size), Some(version))?;
    // What PoSt and SnapDeals need stays: the replica, p_aux, t_aux and tree_r_last.
    clear_cache(&cache)?;
    for f in [piece_path, staged_path] {
        std::fs::remove_file(&f).with_context(|| format!("removing {}", f.display()))?;
    }
    if keep.exists() {
        std::fs::remove_dir_all(keep).with_context(|| format!("removing {}", keep.display()))?;
    }
    let work = work.keep();
    std::fs::rename(&work, keep)
        .with_context(|| format!("moving the sector to {}", keep.display()))?;
    Ok(c1)
}
