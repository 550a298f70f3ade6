//! Test-size sectors sealed here (pre-commit and commit phase 1 by filecoin-proofs), so a
//! machine without Filecoin's parameters or a C1 file still proves the real circuit. The C1
//! output is cached, in lotus-bench's layout with our prover id added.

use anyhow::{Context, Result};
use filecoin_proofs::constants::{SectorShape32GiB, SectorShape64GiB, SectorShapeBase};
use filecoin_proofs::{
    add_piece, generate_piece_commitment, seal_commit_phase1, seal_pre_commit_phase1,
    seal_pre_commit_phase2, PaddedBytesAmount, SealCommitPhase1Output, UnpaddedBytesAmount,
};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::io::{Seek, Write};
use std::path::PathBuf;
use std::time::Instant;
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::c1::C1;
use crate::sector::{ProofVersion, SectorSize};
use crate::source::with_tree;

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
    let dir = provetop_engine::params::cache::cache_root()
        .join("porep")
        .join("sealed");
    let name = match ids {
        None => format!("{size}-seed{seed}.c1.json"),
        Some((p, s)) => format!(
            "{size}-seed{seed}-{}-s{s}.c1.json",
            provetop_engine::circuit::shape::hex(&p)
        ),
    };
    let path = dir.join(name);
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
                return Ok(Sealed {
                    prover_id,
                    sector_id,
                    c1,
                    path,
                })
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
    let mut ids = Ids {
        prover_id: rng.gen(),
        sector_id: rng.gen::<u64>() >> 1,
        ticket: rng.gen(),
        seed: rng.gen(),
    };
    if let Some((p, s)) = ids_given {
        (ids.prover_id, ids.sector_id) = (p, s);
    }
    let start = Instant::now();
    let c1 = with_tree!(size, seal(size, &ids, &mut rng, &dir, progress))
        .with_context(|| format!("sealing a {size} test sector"))?;
    progress(&format!(
        "sealed a {size} test sector in {:.1} s; C1 cached in {}",
        start.elapsed().as_secs_f64(),
        path.display()
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
    })
}

struct Ids {
    prover_id: [u8; 32],
    sector_id: u64,
    ticket: [u8; 32],
    seed: [u8; 32],
}

fn seal<Tree: 'static + MerkleTreeTrait>(
    size: SectorSize,
    ids: &Ids,
    rng: &mut ChaCha20Rng,
    dir: &std::path::Path,
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
    let mut piece = std::fs::File::create_new(work.path().join("piece"))?;
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
    drop(staged);
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
    C1::parse(&serde_json::to_vec(&out)?, Some(size), Some(version))
}
