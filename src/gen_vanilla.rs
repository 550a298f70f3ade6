//! `provetop gen-vanilla`: the `SubmitProofRequest` Curio would send for a test sector sealed
//! here (or the cached one) under a miner's id, in proto3's JSON mapping, to prove through
//! `serve` or `bench --request` and check with `verify`.

use anyhow::{bail, Context, Result};
use provetop_porep::{ProofVersion, SectorSize};
use provetop_proto::cuzk::v1::{Priority, ProofKind, SubmitProofRequest};

use crate::cli::GenVanillaArgs;
use crate::run::usage;

/// `--miner-id N` or `--prover-id f0N` (or t0N): the miner's number.
fn miner(args: &GenVanillaArgs) -> Result<u64> {
    match (&args.miner_id, &args.prover_id) {
        (Some(_), Some(_)) => bail!("--miner-id and --prover-id name the same thing: give one"),
        (Some(n), None) => Ok(*n),
        (None, Some(p)) => p
            .strip_prefix("f0")
            .or_else(|| p.strip_prefix("t0"))
            .and_then(|n| n.parse().ok())
            .with_context(|| format!("--prover-id `{p}`: expected an ID address like f01000")),
        (None, None) => bail!("give --miner-id N (or --prover-id f0N)"),
    }
}

pub fn main(args: &GenVanillaArgs) -> Result<i32> {
    if args.kind != "porep" {
        return usage(Err(anyhow::anyhow!(
            "--kind {}: only porep requests are made here for now",
            args.kind
        )));
    }
    let size: SectorSize = usage(args.sector_size.parse().context("--sector-size"))?;
    if !size.sealable() {
        return usage(Err(anyhow::anyhow!(
            "--sector-size {size}: too large to seal here (2KiB, 8MiB or 512MiB)"
        )));
    }
    let miner_id = usage(miner(args))?;
    let checked = provetop_telemetry::output::check("--out", &args.out, &[], args.force);
    usage(checked.map_err(Into::into))?;
    // Before any of filecoin-proofs' code: it reads its settings once.
    let vk_dir = provetop_porep::filecoin::configure(None)?;
    let prover_id = crate::serve::prover_id_of_miner(miner_id);
    let sealed = provetop_porep::seal::sealed_c1_as(
        size,
        args.seed,
        Some((prover_id, args.sector_id)),
        &|m| eprintln!("porep: {m}"),
    );
    let _ = std::fs::remove_dir_all(&vk_dir);
    let sealed = sealed?;
    // lotus-bench's wrapper as Curio sends it: no prover id inside, the miner names it.
    let mut wrapper = sealed.c1.to_wrapped_json(args.sector_id, &prover_id);
    if let Some(m) = wrapper.as_object_mut() {
        m.remove("ProverId");
    }
    let version = ProofVersion::V1_1;
    let request = SubmitProofRequest {
        request_id: format!("porep-{miner_id}-{}", args.sector_id),
        proof_kind: ProofKind::PorepSealCommit as i32,
        sector_size: size.bytes(),
        registered_proof: version.registered_id(size),
        priority: Priority::Normal as i32,
        vanilla_proof: serde_json::to_vec(&wrapper)?,
        sector_number: args.sector_id,
        miner_id,
        ..Default::default()
    };
    let json = serde_json::to_vec_pretty(&crate::request_file::to_json(&request))?;
    let tmp = args.out.with_extension("tmp");
    std::fs::write(&tmp, json)
        .and_then(|_| std::fs::rename(&tmp, &args.out))
        .with_context(|| format!("writing {}", args.out.display()))?;
    eprintln!(
        "gen-vanilla: {} request for miner f0{miner_id}, sector {} ({}) in {}",
        version.registered_name(size),
        args.sector_id,
        request.request_id,
        args.out.display()
    );
    Ok(0)
}
