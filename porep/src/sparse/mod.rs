//! Sparse sectors: valid requests of production sizes in seconds, with no sealing.
//!
//! A circuit checks only what its vanilla proofs open, so a committed-capacity (all-zero data)
//! sector can be built from the nodes its challenges open: their labels, computed with
//! Filecoin's labelling function from parents' labels drawn from a seed, and sparse trees whose
//! untouched leaves are one constant. Every request is checked by storage-proofs' own verifier
//! before it is returned. WindowPoSt and WinningPoSt sectors ([`post`]) are a comm_c and a
//! sparse tree_r_last holding their challenged leaves; a SnapDeals update ([`snap`]) is built
//! of trees constant within each of its 2^h blocks.
//!
//! A test and benchmark tool, not a way round sealing: the seed that picks the challenges is
//! chosen here before the trees are built, where the chain draws it after comm_r is committed
//! (so only the opened nodes need to be right); and the parameters such requests are proved
//! with here are generated, not Filecoin's, so their proofs verify only against those
//! parameters' verifying key.

mod labels;
mod porep;
mod post;
mod snap;
mod tree;

use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::time::Instant;

use crate::c1::C1;
use crate::inputs::Inputs;
use crate::kind::Kind;
use crate::sector::{with_tree, ProofVersion, SectorSize};

pub use porep::Spec;
pub use post::{post, sector_count, PostSpec};
pub use snap::snap;
pub use tree::SparseTree;

/// Why synthetic and non-interactive PoRep cannot be sparse.
pub(crate) const NOT_INTERACTIVE: &str = "synthetic and non-interactive PoRep derive their challenges from comm_r, so every node must be sealed before any challenge is known: they cannot be built sparsely (only the interactive V1_1 seal proofs, 5-9)";

/// The sector size of registered seal proof `id` if a sparse sector can be built for it: the
/// interactive V1_1 proofs (5-9). The others are refused with the reason.
pub fn registered(id: u64) -> Result<SectorSize> {
    match id {
        5..=9 => Ok(ProofVersion::from_registered_id(id)?.0),
        0..=4 => bail!("registered seal proof {id} (V1): sparse sectors follow the seal proofs in force, V1_1 (5-9)"),
        10..=22 => bail!("registered seal proof {id}: {NOT_INTERACTIVE}"),
        _ => bail!("{id} is not a registered seal proof number"),
    }
}

/// The C1 output of a sparse committed-capacity sector, checked by storage-proofs'
/// `verify_all_partitions` before it is returned.
pub fn porep(spec: &Spec) -> Result<C1> {
    let c1 = porep_unchecked(spec)?;
    crate::source::check(&c1)?;
    Ok(c1)
}

/// [`porep`] without the check: what a test of the check (a tampered `spec`) is given. As for
/// any of filecoin-proofs' code, [`crate::filecoin::configure`] runs first.
pub fn porep_unchecked(spec: &Spec) -> Result<C1> {
    with_tree!(spec.size, build(spec))
}

fn build<Tree: 'static + storage_proofs_core::merkle::MerkleTreeTrait>(spec: &Spec) -> Result<C1> {
    porep::build::<Tree>(spec)
}

/// The sparse `size` sector of `seed` (its prover id and sector number drawn from the seed too),
/// as `--workload porep --sector-size 32GiB` proves it: from the engine's cache when there,
/// else built, checked and cached (in lotus-bench's layout, like a sealed test sector's C1).
/// A cached file is checked again when its circuits are built.
pub fn cached_porep(size: SectorSize, seed: u64, progress: &dyn Fn(&str)) -> Result<C1> {
    let dir = provetop_engine::params::cache::cache_root()
        .join("porep")
        .join("sparse");
    let path = dir.join(format!("{size}-seed{seed}.c1.json"));
    if path.is_file() {
        match C1::read(&path, Some(size), None) {
            Ok(c1) if c1.prover_id.is_some() && c1.sector_id.is_some() => return Ok(c1),
            Ok(_) => progress(&format!(
                "{} has no prover or sector id; building it again",
                path.display()
            )),
            Err(e) => progress(&format!(
                "{} is unusable ({e:#}); building it again",
                path.display()
            )),
        }
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5ba2_5e00_1d00_0000);
    let miner = format!("f0{}", 1000 + rng.gen::<u32>() % 1_000_000);
    let spec = Spec {
        size,
        prover_id: crate::c1::parse_prover_id(&miner)?,
        sector_id: rng.gen::<u64>() >> 1,
        seed,
        tamper_label: None,
    };
    let start = Instant::now();
    progress(&format!(
        "building a sparse {size} sector (no sealing; see docs/sparse-sectors.md)"
    ));
    let c1 = porep(&spec)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let json = serde_json::to_vec(&c1.to_wrapped_json(spec.sector_id, &spec.prover_id))?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, json)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .with_context(|| format!("caching {}", path.display()))?;
    progress(&format!(
        "built a sparse {size} sector in {:.1} s; C1 cached in {}",
        start.elapsed().as_secs_f64(),
        path.display()
    ));
    Ok(c1)
}

/// A prover id and the first sector's number.
pub type Ids = Option<([u8; 32], u64)>;

/// What `--workload KIND --sector-size 32GiB` proves for the kinds other than PoRep: a sparse
/// SnapDeals update or PoSt (a full WindowPoSt partition) of `seed`, under `ids` where given
/// (else miner f01000's sectors from 0), built in seconds as a test size's sealed sector is
/// read from the cache.
pub fn inputs(kind: Kind, size: SectorSize, seed: u64, ids: Ids) -> Result<Inputs> {
    let (prover_id, first_sector) = match ids {
        Some(ids) => ids,
        None => (crate::c1::parse_prover_id("f01000")?, 0),
    };
    let spec = PostSpec {
        kind,
        size,
        prover_id,
        first_sector,
        sectors: None,
        seed,
    };
    match kind {
        Kind::Snap => snap(size, seed),
        Kind::WindowPost | Kind::WinningPost => post(&spec),
        Kind::Porep => bail!("a sparse PoRep is its C1 output: see `porep`"),
    }
}
