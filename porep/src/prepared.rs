//! A Filecoin proof of any kind, its circuits named for the engine: its circuits and what
//! filecoin-proofs needs to check the finished proof, from a request's inputs or from a test
//! sector sealed here.

use anyhow::{bail, Result};
use provetop_engine::params::VerifyingKey;
use std::path::Path;

use crate::compound::Registered;
use crate::inputs::Inputs;
use crate::kind::Kind;
use crate::post::{self, Post};
use crate::sector::SectorSize;
use crate::snap::{self, Snap};
use crate::source::{Porep, PorepArgs};
use crate::{filecoin, seal, vanilla};

/// One proof's circuits and statement.
pub enum Prepared {
    /// PoRep C2.
    Porep(Porep),
    /// A SnapDeals update.
    Snap(Snap),
    /// A WindowPoSt partition or a WinningPoSt.
    Post(Post),
}

impl Prepared {
    /// Its kind.
    pub fn kind(&self) -> Kind {
        match self {
            Prepared::Porep(_) => Kind::Porep,
            Prepared::Snap(_) => Kind::Snap,
            Prepared::Post(p) => p.kind,
        }
    }

    /// Its circuits in the engine.
    pub fn circuits(&self) -> &Registered {
        match self {
            Prepared::Porep(p) => &p.circuits,
            Prepared::Snap(s) => &s.circuits,
            Prepared::Post(p) => &p.circuits,
        }
    }

    /// The sector size.
    pub fn size(&self) -> SectorSize {
        match self {
            Prepared::Porep(p) => p.c1.size,
            Prepared::Snap(s) => s.size,
            Prepared::Post(p) => p.size,
        }
    }

    /// filecoin-proofs' own verifier ([`Kind::verifier`]) over the proof (its partitions'
    /// 192-byte proofs in order), with `vk`; None where it cannot run (a PoRep whose prover or
    /// sector id is unknown).
    pub fn verify(&self, vk: &VerifyingKey, proof: &[u8]) -> Result<Option<bool>> {
        match self {
            Prepared::Porep(p) => p.verify(vk, proof),
            Prepared::Snap(s) => s.verify(vk, proof).map(Some),
            Prepared::Post(p) => p.verify(vk, proof).map(Some),
        }
    }

    /// What it proves, in a line: `winning-post: 2KiB sector(s) 7, StackedDrgWinning2KiBV1, 1
    /// partition(s)`.
    pub fn describe(&self) -> String {
        let partitions = self.circuits().partitions;
        let (what, registered) = match self {
            Prepared::Porep(p) => (
                format!("{} sector", p.c1.size),
                p.c1.version.registered_name(p.c1.size),
            ),
            Prepared::Snap(s) => (
                format!("{} sector update", s.size),
                snap::registered_name(snap::registered_id(s.size)),
            ),
            Prepared::Post(p) => {
                let ids: Vec<String> = p.sectors.iter().map(|(id, _)| id.to_string()).collect();
                (
                    format!("{} sector(s) {}", p.size, ids.join(", ")),
                    post::registered_name(p.registered_proof),
                )
            }
        };
        format!(
            "{}: {what}, {registered}, {partitions} partition(s)",
            self.kind()
        )
    }

    /// Removes the key folder filecoin-proofs' verifier read, if this process made it.
    pub fn cleanup(&self) {
        filecoin::cleanup(self.circuits());
    }
}

/// Checks a SnapDeals or PoSt request's inputs and registers its circuits as `name`.
pub fn register(inputs: &Inputs, params_dir: Option<&Path>, name: &str) -> Result<Prepared> {
    Ok(match inputs.kind {
        Kind::Snap => Prepared::Snap(snap::register(inputs, params_dir, name)?),
        Kind::WindowPost | Kind::WinningPost => {
            Prepared::Post(post::register(inputs, params_dir, name)?)
        }
        Kind::Porep => bail!("a PoRep C2 request carries its C1 output, not vanilla_proofs"),
    })
}

/// The inputs of a `kind` proof of the `size` test sector sealed here from `seed` (under
/// `ids`, a miner's prover id and sector number, where given): a sector sealed once and cached,
/// a PoSt's randomness drawn from `seed`, a SnapDeals update's data too; at 32GiB and 64GiB,
/// sparse sectors ([`crate::sparse::inputs`]).
pub fn sealed_inputs(
    kind: Kind,
    size: SectorSize,
    seed: u64,
    ids: Option<([u8; 32], u64)>,
    progress: &dyn Fn(&str),
) -> Result<Inputs> {
    if !size.sealable() {
        // Too large to seal here: sparse sectors, built in seconds.
        progress(&format!(
            "building a sparse {size} {kind} (no sealing; see docs/sparse-sectors.md)"
        ));
        return crate::sparse::inputs(kind, size, seed, ids);
    }
    let sealed = seal::sealed_sector(size, seed, ids, progress)?;
    match kind {
        Kind::Snap => vanilla::snap(&sealed, seed, progress),
        Kind::WindowPost | Kind::WinningPost => {
            vanilla::post(kind, &[sealed], vanilla::randomness(seed))
        }
        Kind::Porep => bail!("a PoRep C2 request carries its C1 output, not vanilla proofs"),
    }
}

/// What `--workload KIND --sector-size SIZE` proves: a test sector sealed here (its C1 output
/// for PoRep, its replica for the others), registered as `KIND-SIZE`.
pub fn prepare_sealed(
    kind: Kind,
    size: SectorSize,
    seed: u64,
    params_dir: Option<&Path>,
    progress: &dyn Fn(&str),
) -> Result<Prepared> {
    // Before any of filecoin-proofs' code runs (sealing included): it reads its settings once.
    filecoin::configure(params_dir)?;
    if kind == Kind::Porep {
        let args = PorepArgs {
            sector_size: Some(size),
            params_dir: params_dir.map(Path::to_path_buf),
            seed,
            ..PorepArgs::default()
        };
        return Ok(Prepared::Porep(crate::source::prepare(&args, progress)?));
    }
    let inputs = sealed_inputs(kind, size, seed, None, progress)?;
    register(&inputs, params_dir, &format!("{kind}-{size}"))
}
