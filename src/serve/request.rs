//! A `SubmitProofRequest` checked and turned into a registered PoRep circuit, or a message that
//! says what is wrong with it. Everything cheap is checked before the vanilla proof is parsed.

use anyhow::{anyhow, bail, Result};
use provetop_porep::{Porep, ProofVersion, SectorSize, C1};
use provetop_proto::cuzk::v1::{ProofKind, SubmitProofRequest};

/// The longest `request_id` kept: Curio's are `porep-<miner>-<sector>`.
pub const MAX_REQUEST_ID: usize = 256;

/// The largest vanilla proof taken: a 64 GiB sector's C1 output is about 100 MB of JSON with
/// lotus-bench's base64 wrapper around it.
pub const MAX_VANILLA_BYTES: usize = 192 << 20;

/// cuzk's name of a proof kind, as `GetStatus`'s queues name them.
pub fn kind_name(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::PorepSealCommit => "porep_seal_commit",
        ProofKind::SnapDealsUpdate => "snap_deals_update",
        ProofKind::WindowPostPartition => "window_post_partition",
        ProofKind::WinningPost => "winning_post",
        ProofKind::Unspecified => "unspecified",
    }
}

/// cuzk's parameter-set name for a PoRep sector size: `porep-32g`, `porep-2k`.
pub fn circuit_id(size: SectorSize) -> String {
    let short = match size {
        SectorSize::S2KiB => "2k",
        SectorSize::S8MiB => "8m",
        SectorSize::S512MiB => "512m",
        SectorSize::S32GiB => "32g",
        SectorSize::S64GiB => "64g",
    };
    format!("porep-{short}")
}

/// The sector size of a `circuit_id` of [`circuit_id`]'s form.
pub fn size_of_circuit_id(id: &str) -> Result<SectorSize> {
    SectorSize::ALL
        .into_iter()
        .find(|s| circuit_id(*s) == id)
        .ok_or_else(|| {
            anyhow!("unknown circuit_id `{id}`: expected porep-2k, porep-8m, porep-512m, porep-32g or porep-64g")
        })
}

/// Filecoin's prover id of miner `f0<id>`: the LEB128 of the number, zero-padded.
pub fn prover_id_of_miner(miner_id: u64) -> [u8; 32] {
    provetop_porep::c1::parse_prover_id(&format!("f0{miner_id}"))
        .expect("f0 and a number is an ID address")
}

/// The checks that need no parsing: kind, ids, sizes and the registered proof agreeing.
pub fn check_fields(r: &SubmitProofRequest) -> Result<(SectorSize, ProofVersion)> {
    if r.request_id.len() > MAX_REQUEST_ID {
        bail!(
            "request_id has {} bytes; at most {MAX_REQUEST_ID}",
            r.request_id.len()
        );
    }
    let kind = ProofKind::try_from(r.proof_kind)
        .map_err(|_| anyhow!("proof_kind {} is not a known proof kind", r.proof_kind))?;
    if kind != ProofKind::PorepSealCommit {
        bail!(
            "proof_kind {}: only POREP_SEAL_COMMIT is proved here for now",
            kind.as_str_name()
        );
    }
    if provetop_proto::cuzk::v1::Priority::try_from(r.priority).is_err() {
        bail!("priority {} is not a known priority", r.priority);
    }
    let (size, version) = ProofVersion::from_registered_id(r.registered_proof)?;
    if r.sector_size != size.bytes() {
        bail!(
            "sector_size {} does not match registered_proof {} ({}, {} bytes)",
            r.sector_size,
            r.registered_proof,
            version.registered_name(size),
            size.bytes()
        );
    }
    if r.vanilla_proof.is_empty() {
        bail!("vanilla_proof is empty: a PoRep C2 request carries the C1 output");
    }
    if r.vanilla_proof.len() > MAX_VANILLA_BYTES {
        bail!(
            "vanilla_proof has {} bytes; at most {MAX_VANILLA_BYTES}",
            r.vanilla_proof.len()
        );
    }
    if !r.vanilla_proofs.is_empty() {
        bail!("vanilla_proofs is for PoSt and SnapDeals; a PoRep C2 request sends vanilla_proof");
    }
    Ok((size, version))
}

/// The request's C1 output, checked against its sector size, registered proof, sector number
/// and miner: what [`register`] builds circuits from.
pub fn c1_of(r: &SubmitProofRequest) -> Result<(C1, [u8; 32])> {
    let (size, version) = check_fields(r)?;
    let c1 = C1::parse(&r.vanilla_proof, Some(size), Some(version))
        .map_err(|e| anyhow!("vanilla_proof: {e:#}"))?;
    if let Some(n) = c1.sector_id.filter(|n| *n != r.sector_number) {
        bail!(
            "vanilla_proof is for sector {n}, not sector_number {}",
            r.sector_number
        );
    }
    let prover_id = prover_id_of_miner(r.miner_id);
    if let Some(p) = c1.prover_id.filter(|p| *p != prover_id) {
        bail!(
            "vanilla_proof names prover id {}, not miner f0{}'s",
            provetop_engine::circuit::shape::hex(&p),
            r.miner_id
        );
    }
    Ok((c1, prover_id))
}

/// Checks `r`, builds its partitions' circuits and registers them as `name`. A C1 output for
/// another sector or miner fails here: its replica id does not follow from theirs.
pub fn register(r: &SubmitProofRequest, name: &str) -> Result<Porep> {
    // Filecoin's crates assume well-formed proofs in places: a panic on a malformed one is that
    // request's error, not a request left unanswered.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (c1, prover_id) = c1_of(r)?;
        provetop_porep::source::register(c1, Some(prover_id), Some(r.sector_number), None, name)
            .map_err(|e| anyhow!("vanilla_proof: {e:#}"))
    }))
    .unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(anyhow!("vanilla_proof: malformed ({why})"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> SubmitProofRequest {
        SubmitProofRequest {
            request_id: "porep-1000-7".into(),
            proof_kind: ProofKind::PorepSealCommit as i32,
            sector_size: 2048,
            registered_proof: 5,
            priority: 2,
            vanilla_proof: b"{}".to_vec(),
            sector_number: 7,
            miner_id: 1000,
            ..Default::default()
        }
    }

    fn err(r: &SubmitProofRequest) -> String {
        format!("{:#}", c1_of(r).unwrap_err())
    }

    #[test]
    fn bad_fields_are_named() {
        assert!(check_fields(&request()).is_ok());
        let mut r = request();
        r.proof_kind = 99;
        assert!(err(&r).contains("proof_kind 99"));
        r.proof_kind = ProofKind::WinningPost as i32;
        assert!(err(&r).contains("WINNING_POST"));
        let mut r = request();
        r.sector_size = 8 << 20;
        assert!(err(&r).contains("does not match registered_proof 5"));
        let mut r = request();
        r.registered_proof = 12;
        assert!(err(&r).contains("not supported"));
        let mut r = request();
        r.priority = -1;
        assert!(err(&r).contains("priority"));
        let mut r = request();
        r.request_id = "x".repeat(MAX_REQUEST_ID + 1);
        assert!(err(&r).contains("request_id"));
        let mut r = request();
        r.vanilla_proof.clear();
        assert!(err(&r).contains("empty"));
        let mut r = request();
        r.vanilla_proof = b"{\"Phase1Out\": 3".to_vec();
        assert!(err(&r).contains("not JSON"));
    }

    #[test]
    fn names_are_cuzks() {
        assert_eq!(circuit_id(SectorSize::S32GiB), "porep-32g");
        assert_eq!(size_of_circuit_id("porep-2k").unwrap(), SectorSize::S2KiB);
        assert!(size_of_circuit_id("wpost-32g").is_err());
        assert_eq!(&prover_id_of_miner(1000)[..3], &[0xe8, 0x07, 0]);
        assert_eq!(kind_name(ProofKind::PorepSealCommit), "porep_seal_commit");
    }
}
