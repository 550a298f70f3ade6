//! A run's Filecoin proofs: each kind's circuits prepared from a test sector sealed here or a
//! request file (every input checked before parameters or proofs). filecoin-proofs' verdict on
//! the finished jobs is `filecoin_check`'s.

use anyhow::{bail, Context, Result};
use provetop_porep::{Kind, PorepArgs, Prepared, SectorSize};

use crate::cli::EngineArgs;

/// Reads or seals what a `kind` workload proves and registers its circuits.
pub fn prepare(kind: Kind, args: &EngineArgs) -> Result<Prepared> {
    let sector_size = args
        .sector_size
        .as_deref()
        .map(|s| s.parse::<SectorSize>().context("--sector-size"))
        .transpose()?;
    let progress = |m: &str| eprintln!("{kind}: {m}");
    let prepared = match kind {
        Kind::Porep => Prepared::Porep(provetop_porep::prepare(
            &PorepArgs {
                sector_size,
                c1: args.c1.clone(),
                prover_id: args.prover_id.clone(),
                sector_id: args.sector_id,
                params_dir: args.params_dir.clone(),
                seed: args.seed,
            },
            &progress,
        )?),
        _ => {
            let given = [
                ("--c1", args.c1.is_some()),
                ("--prover-id", args.prover_id.is_some()),
                ("--sector-id", args.sector_id.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
                bail!("{flag} is for --workload porep; --workload {kind} proves a test sector sealed here (--sector-size) or a request file (--request)");
            }
            let Some(size) = sector_size else {
                bail!("--workload {kind} needs --sector-size 2KiB|8MiB|512MiB (a test sector sealed here), or --request FILE");
            };
            provetop_porep::prepared::prepare_sealed(
                kind,
                size,
                args.seed,
                args.params_dir.as_deref(),
                &progress,
            )?
        }
    };
    eprintln!("{}", prepared.describe());
    Ok(prepared)
}

/// What a request file proves, checked as `serve` checks a request.
pub fn prepare_request(path: &std::path::Path, args: &EngineArgs) -> Result<Prepared> {
    let what = || format!("--request {}", path.display());
    let r = crate::request_file::read(path).with_context(what)?;
    let (request, checked) = crate::cuzk::checked(&r).with_context(what)?;
    let (kind, size) = (checked.kind, checked.size);
    // cuzk's rule, as serve's: the registered proof's size.
    if let Some(note) = crate::cuzk::size_note(&request, size) {
        tracing::warn!("{}: {note}", what());
        eprintln!("{}: warning: {note}", what());
    }
    if let Some(k) = args.workload.filecoin().filter(|k| *k != kind) {
        bail!(
            "--request {}: a {kind} request, not --workload {k}",
            path.display()
        );
    }
    provetop_porep::filecoin::configure(args.params_dir.as_deref())?;
    // The name `bench --workload KIND` gives the circuit: the parameter cache is shared.
    let name = format!("{kind}-{size}");
    let prepared = request
        .prepare(checked, args.params_dir.as_deref(), &name)
        .with_context(what)?;
    eprintln!(
        "request {:?}: miner f0{}, {}",
        r.request_id,
        r.miner_id,
        prepared.describe()
    );
    Ok(prepared)
}

/// A proof's partitions, which `--partitions` (1 unless given) must not contradict.
pub fn partitions(f: &Prepared, asked: u32) -> Result<u32> {
    let have = f.circuits().partitions;
    if asked != 1 && asked != have {
        bail!(
            "--partitions {asked}: a {} proof of a {} sector has {have} partition(s)",
            f.kind(),
            f.size(),
        );
    }
    Ok(have)
}
