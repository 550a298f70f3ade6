//! `provetop gen-vanilla`: the `SubmitProofRequest` Curio would send for a test sector sealed
//! here (or the cached one), or sparse sectors (`--sparse`, any size and kind), under a miner's
//! id, in
//! proto3's JSON mapping, to prove through
//! `serve` or `bench --request` and check with `verify`: a PoRep C2 (the sector's C1 output), a
//! SnapDeals update of it, a WindowPoSt partition over it or a WinningPoSt.

use anyhow::{bail, Context, Result};
use provetop_porep::{Kind, ProofVersion, SectorSize};
use provetop_proto::cuzk::v1::SubmitProofRequest;

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

/// Whether the sectors are sparse: asked for, or too large to seal.
fn sparse(kind: Kind, size: SectorSize, args: &GenVanillaArgs) -> Result<bool> {
    let sparse = args.sparse || !size.sealable();
    if let Some(id) = args.registered_proof {
        if kind != Kind::Porep {
            bail!("--registered-proof {id}: a seal proof's number, for --kind porep");
        }
        let named = provetop_porep::sparse::registered(id)
            .with_context(|| format!("--registered-proof {id}"))?;
        if named != size {
            bail!("--registered-proof {id} is a {named} seal proof, not {size}");
        }
    }
    if let Some(n) = args.sectors {
        if !sparse || !matches!(kind, Kind::WindowPost | Kind::WinningPost) {
            bail!("--sectors {n}: the sectors of a sparse WindowPoSt or WinningPoSt");
        }
        provetop_porep::sparse::sector_count(kind, size, Some(n))?;
    }
    Ok(sparse)
}

pub fn main(args: &GenVanillaArgs) -> Result<i32> {
    let start = std::time::Instant::now();
    let kind: Kind = usage(args.kind.parse().context("--kind"))?;
    let size: SectorSize = usage(args.sector_size.parse().context("--sector-size"))?;
    let sparse = usage(sparse(kind, size, args))?;
    let miner_id = usage(miner(args))?;
    let checked = provetop_telemetry::output::check("--out", &args.out, &[], args.force);
    usage(checked.map_err(Into::into))?;
    // Before any of filecoin-proofs' code: it reads its settings once.
    let vk_dir = provetop_porep::filecoin::configure(None)?;
    let made = request(kind, size, miner_id, sparse, args);
    let _ = std::fs::remove_dir_all(&vk_dir);
    let request = made?;
    let json = serde_json::to_vec_pretty(&crate::request_file::to_json(&request))?;
    let tmp = args.out.with_extension("tmp");
    std::fs::write(&tmp, json)
        .and_then(|_| std::fs::rename(&tmp, &args.out))
        .with_context(|| format!("writing {}", args.out.display()))?;
    let bytes = std::fs::metadata(&args.out).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "gen-vanilla: {kind} request for miner f0{miner_id}, sector {} ({}{}) in {}: {:.1} s, peak memory {}, {:.1} MB",
        args.sector_id,
        request.request_id,
        if sparse { ", sparse" } else { "" },
        args.out.display(),
        start.elapsed().as_secs_f64(),
        peak_memory(),
        bytes as f64 / 1e6
    );
    Ok(0)
}

/// The process's peak resident memory (VmHWM), as Linux reports it.
fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or("unknown".into(), |kb| {
            format!("{:.0} MiB", kb as f64 / 1024.0)
        })
}

/// The request for the sector sealed under the miner's id and `--sector-id`.
fn request(
    kind: Kind,
    size: SectorSize,
    miner_id: u64,
    sparse: bool,
    args: &GenVanillaArgs,
) -> Result<SubmitProofRequest> {
    let prover_id = crate::serve::prover_id_of_miner(miner_id);
    let ids = Some((prover_id, args.sector_id));
    let progress = |m: &str| eprintln!("{kind}: {m}");
    let mut r = SubmitProofRequest {
        request_id: format!("{kind}-{miner_id}-{}", args.sector_id),
        proof_kind: crate::serve::proof_kind(kind) as i32,
        sector_size: size.bytes(),
        priority: crate::serve::curio_priority(kind) as i32,
        sector_number: args.sector_id,
        miner_id,
        ..Default::default()
    };
    if kind == Kind::Porep {
        let c1 = if sparse {
            progress(&format!("building a sparse {size} sector"));
            provetop_porep::sparse::porep(&provetop_porep::sparse::Spec {
                size,
                prover_id,
                sector_id: args.sector_id,
                seed: args.seed,
                tamper_label: None,
            })
            .context("building the sparse sector")?
        } else {
            provetop_porep::seal::sealed_c1_as(size, args.seed, ids, &progress)?.c1
        };
        // lotus-bench's wrapper as Curio sends it: no prover id inside, the miner names it.
        let mut wrapper = c1.to_wrapped_json(args.sector_id, &prover_id);
        if let Some(m) = wrapper.as_object_mut() {
            m.remove("ProverId");
        }
        r.registered_proof = ProofVersion::V1_1.registered_id(size);
        r.vanilla_proof = serde_json::to_vec(&wrapper)?;
        return Ok(r);
    }
    let inputs = match (sparse, kind) {
        (true, Kind::Snap) => {
            progress(&format!("building a sparse {size} sector and its update"));
            provetop_porep::sparse::snap(size, args.seed).context("building the sparse update")?
        }
        (true, _) => {
            progress(&format!("building sparse {size} sectors"));
            provetop_porep::sparse::post(&provetop_porep::sparse::PostSpec {
                kind,
                size,
                prover_id,
                first_sector: args.sector_id,
                sectors: args.sectors,
                seed: args.seed,
            })
            .context("building the sparse sectors")?
        }
        _ => provetop_porep::prepared::sealed_inputs(kind, size, args.seed, ids, &progress)?,
    };
    r.registered_proof = inputs.registered_proof;
    r.vanilla_proofs = inputs.vanilla_proofs;
    r.randomness = inputs.randomness;
    r.partition_index = inputs.partition_index;
    r.comm_r_old = inputs.comm_r_old;
    r.comm_r_new = inputs.comm_r_new;
    r.comm_d_new = inputs.comm_d_new;
    Ok(r)
}
