//! A `SubmitProofRequest` checked and turned into a registered Filecoin proof of its kind, or a
//! message that says what is wrong with it. Everything cheap is checked before the vanilla
//! proofs are parsed.

use anyhow::{anyhow, bail, Context, Result};
use provetop_engine::pipeline::Priority as EnginePriority;
use provetop_porep::post::registered as post_registered;
use provetop_porep::{Inputs, Kind, Prepared, ProofVersion, SectorSize, C1};
use provetop_proto::cuzk::v1::{Priority, ProofKind, SubmitProofRequest};
use std::path::Path;

/// The longest `request_id` kept: Curio's are `porep-<miner>-<sector>`.
pub const MAX_REQUEST_ID: usize = 256;

/// The largest vanilla proof taken: a 64 GiB sector's C1 output is about 100 MB of JSON with
/// lotus-bench's base64 wrapper around it; the rest of a message is under 1 MiB.
pub const MAX_VANILLA_BYTES: usize = MAX_MESSAGE - (1 << 20);

/// The largest message either way: Curio's client sends and takes up to 256 MiB.
pub const MAX_MESSAGE: usize = 256 << 20;

/// The most vanilla proofs in one request: a 64GiB SnapDeals update has 16 partitions, a 32GiB
/// WindowPoSt partition 2,349 sectors.
pub const MAX_VANILLA_PROOFS: usize = 4096;

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

/// The engine's name for a request's circuit, as the dashboard's job rows and the log show
/// it: its proof kind, the `n`-th request accepted, and the id with what is not a letter, digit,
/// `.`, `_` or `-` replaced (an id is the client's, and the name may reach a file name).
pub fn circuit_name(kind: ProofKind, n: u64, job_id: &str) -> String {
    let safe: String = job_id
        .chars()
        .take(48)
        .map(|c| match c.is_ascii_alphanumeric() || "._-".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    format!("{}/{n}-{safe}", kind_name(kind))
}

/// Our kind of cuzk's.
pub fn kind_of(kind: ProofKind) -> Option<Kind> {
    match kind {
        ProofKind::PorepSealCommit => Some(Kind::Porep),
        ProofKind::SnapDealsUpdate => Some(Kind::Snap),
        ProofKind::WindowPostPartition => Some(Kind::WindowPost),
        ProofKind::WinningPost => Some(Kind::WinningPost),
        ProofKind::Unspecified => None,
    }
}

/// cuzk's kind of ours.
pub fn proof_kind(kind: Kind) -> ProofKind {
    match kind {
        Kind::Porep => ProofKind::PorepSealCommit,
        Kind::Snap => ProofKind::SnapDealsUpdate,
        Kind::WindowPost => ProofKind::WindowPostPartition,
        Kind::WinningPost => ProofKind::WinningPost,
    }
}

/// The priority Curio gives a kind: WinningPoSt critical (a block waits on it), WindowPoSt
/// high (a deadline does), the others normal.
pub fn curio_priority(kind: Kind) -> Priority {
    match kind {
        Kind::WinningPost => Priority::Critical,
        Kind::WindowPost => Priority::High,
        Kind::Porep | Kind::Snap => Priority::Normal,
    }
}

/// The engine's priority for a request's; unspecified is the one Curio gives its kind.
pub fn priority(wire: i32, kind: ProofKind) -> EnginePriority {
    match Priority::try_from(wire) {
        Ok(Priority::Critical) => EnginePriority::Critical,
        Ok(Priority::High) => EnginePriority::High,
        Ok(Priority::Low) => EnginePriority::Low,
        Ok(Priority::Normal) => EnginePriority::Normal,
        _ => match kind_of(kind) {
            Some(k) => priority(curio_priority(k) as i32, kind),
            None => EnginePriority::Normal,
        },
    }
}

/// Filecoin's prover id of miner `f0<id>`: the LEB128 of the number, zero-padded.
pub fn prover_id_of_miner(miner_id: u64) -> [u8; 32] {
    provetop_porep::c1::parse_prover_id(&format!("f0{miner_id}"))
        .expect("f0 and a number is an ID address")
}

/// The checks that need no parsing: kind, ids, lengths, the registered proof agreeing with the
/// kind, and the fields the kind carries (and not the others'). The sector size is the
/// registered proof's, as cuzk takes it: `sector_size` only labels (see [`size_note`]).
pub fn check_fields(r: &SubmitProofRequest) -> Result<(Kind, SectorSize)> {
    if r.request_id.len() > MAX_REQUEST_ID {
        bail!(
            "request_id has {} bytes; at most {MAX_REQUEST_ID}",
            r.request_id.len()
        );
    }
    let wire = ProofKind::try_from(r.proof_kind)
        .map_err(|_| anyhow!("proof_kind {} is not a known proof kind", r.proof_kind))?;
    let kind = kind_of(wire).ok_or_else(|| {
        anyhow!("proof_kind is unspecified: POREP_SEAL_COMMIT, SNAP_DEALS_UPDATE, WINDOW_POST_PARTITION or WINNING_POST")
    })?;
    if Priority::try_from(r.priority).is_err() {
        bail!("priority {} is not a known priority", r.priority);
    }
    let size = match kind {
        Kind::Porep => ProofVersion::from_registered_id(r.registered_proof)?.0,
        Kind::Snap => provetop_porep::snap::registered(r.registered_proof)?,
        _ => {
            let (post_kind, size, _) = post_registered(r.registered_proof)?;
            if post_kind != kind {
                bail!(
                    "registered_proof {} ({}) is a {post_kind} proof, not a {}",
                    r.registered_proof,
                    provetop_porep::post::registered_name(r.registered_proof),
                    wire.as_str_name()
                );
            }
            size
        }
    };
    let total: usize = r.vanilla_proofs.iter().map(Vec::len).sum();
    if r.vanilla_proof.len().max(total) > MAX_VANILLA_BYTES {
        bail!(
            "the vanilla proofs have {} bytes; at most {MAX_VANILLA_BYTES}",
            r.vanilla_proof.len().max(total)
        );
    }
    if r.vanilla_proofs.len() > MAX_VANILLA_PROOFS {
        bail!(
            "{} vanilla proofs; at most {MAX_VANILLA_PROOFS}",
            r.vanilla_proofs.len()
        );
    }
    match kind {
        Kind::Porep if r.vanilla_proof.is_empty() => {
            bail!("vanilla_proof is empty: a PoRep C2 request carries the C1 output")
        }
        Kind::Porep if !r.vanilla_proofs.is_empty() => bail!(
            "vanilla_proofs is for PoSt and SnapDeals; a PoRep C2 request sends vanilla_proof"
        ),
        Kind::Porep => {}
        _ if !r.vanilla_proof.is_empty() => bail!(
            "vanilla_proof is a PoRep C2 request's C1 output; a {} request sends vanilla_proofs",
            wire.as_str_name()
        ),
        _ if r.vanilla_proofs.is_empty() => bail!(
            "vanilla_proofs is empty: a {} request carries its vanilla proofs",
            wire.as_str_name()
        ),
        _ => {}
    }
    Ok((kind, size))
}

/// A warning for a `sector_size` other than the registered proof's `size`: cuzk proves the
/// registered proof's size (Curio's own benchmark client sends 32 GiB in every request), and so
/// does provetop. None when they agree.
pub fn size_note(r: &SubmitProofRequest, size: SectorSize) -> Option<String> {
    (r.sector_size != size.bytes()).then(|| {
        format!(
            "sector_size {} disagrees with registered_proof {} (a {size} sector, {} bytes): \
             proving a {size} sector, as cuzk does (sector_size only labels)",
            r.sector_size,
            r.registered_proof,
            size.bytes()
        )
    })
}

/// The request's C1 output, checked against its sector size, registered proof, sector number
/// and miner (a PoRep C2 request).
pub fn c1_of(r: &SubmitProofRequest) -> Result<(C1, [u8; 32])> {
    let (kind, size) = check_fields(r)?;
    if kind != Kind::Porep {
        bail!("a {kind} request carries no C1 output");
    }
    let (_, version) = ProofVersion::from_registered_id(r.registered_proof)?;
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

/// A PoSt or SnapDeals request's inputs (the fields its kind reads).
pub fn inputs_of(r: &SubmitProofRequest, kind: Kind) -> Inputs {
    let mut i = Inputs::new(kind);
    i.registered_proof = r.registered_proof;
    i.prover_id = prover_id_of_miner(r.miner_id);
    i.randomness = r.randomness.clone();
    i.partition_index = r.partition_index;
    i.comm_r_old = r.comm_r_old.clone();
    i.comm_r_new = r.comm_r_new.clone();
    i.comm_d_new = r.comm_d_new.clone();
    i.vanilla_proofs = r.vanilla_proofs.clone();
    i
}

/// Checks `r`, builds its partitions' circuits and registers them as `name` (with Filecoin's
/// parameters from `params_dir`, where given). A C1 output for another sector or miner fails
/// here (its replica id does not follow from theirs), and so does a vanilla proof that does
/// not verify.
pub fn prepare(r: &SubmitProofRequest, params_dir: Option<&Path>, name: &str) -> Result<Prepared> {
    // A panic on a malformed proof is that request's error, not a request left unanswered.
    provetop_porep::guarded(|| {
        let (kind, _) = check_fields(r)?;
        match kind {
            Kind::Porep => {
                let (c1, prover_id) = c1_of(r)?;
                provetop_porep::source::register(
                    c1,
                    Some(prover_id),
                    Some(r.sector_number),
                    params_dir,
                    name,
                )
                .map(Prepared::Porep)
                .context("vanilla_proof")
            }
            _ => provetop_porep::prepared::register(&inputs_of(r, kind), params_dir, name),
        }
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
        r.proof_kind = ProofKind::Unspecified as i32;
        assert!(err(&r).contains("unspecified"));
        // cuzk's rule: the registered proof's size, whatever sector_size says (with a note).
        let mut r = request();
        r.sector_size = 32 << 30;
        assert_eq!(check_fields(&r).unwrap().1, SectorSize::S2KiB);
        assert!(size_note(&r, SectorSize::S2KiB)
            .is_some_and(|n| n.contains("34359738368") && n.contains("2KiB")));
        assert!(size_note(&request(), SectorSize::S2KiB).is_none());
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
    fn other_kinds_fields_are_checked_before_parsing() {
        let post = |kind: ProofKind, registered: u64| SubmitProofRequest {
            proof_kind: kind as i32,
            sector_size: 2048,
            registered_proof: registered,
            vanilla_proofs: vec![vec![1, 2, 3]],
            randomness: vec![0; 32],
            miner_id: 1000,
            ..Default::default()
        };
        let fields = |r: &SubmitProofRequest| format!("{:#}", check_fields(r).unwrap_err());
        assert_eq!(
            check_fields(&post(ProofKind::WinningPost, 0)).unwrap(),
            (Kind::WinningPost, SectorSize::S2KiB)
        );
        assert_eq!(
            check_fields(&post(ProofKind::WindowPostPartition, 10)).unwrap(),
            (Kind::WindowPost, SectorSize::S2KiB)
        );
        assert_eq!(
            check_fields(&post(ProofKind::SnapDealsUpdate, 0)).unwrap(),
            (Kind::Snap, SectorSize::S2KiB)
        );
        // A WindowPoSt proof number sent as a WinningPoSt, another size, the PoRep field.
        assert!(fields(&post(ProofKind::WinningPost, 10)).contains("is a window-post proof"));
        assert_eq!(
            check_fields(&post(ProofKind::WindowPostPartition, 11))
                .unwrap()
                .1,
            SectorSize::S8MiB
        );
        let mut r = post(ProofKind::SnapDealsUpdate, 0);
        r.vanilla_proof = b"{}".to_vec();
        assert!(fields(&r).contains("vanilla_proof is a PoRep C2"));
        let mut r = post(ProofKind::WinningPost, 0);
        r.vanilla_proofs.clear();
        assert!(fields(&r).contains("vanilla_proofs is empty"));
        r.vanilla_proofs = vec![vec![]; MAX_VANILLA_PROOFS + 1];
        assert!(fields(&r).contains("at most"));
    }

    #[test]
    fn a_circuit_name_is_safe_for_any_id() {
        let n = circuit_name(ProofKind::WinningPost, 3, "../x y/é");
        assert_eq!(n, "winning_post/3-.._x_y__");
        assert_eq!(
            circuit_name(ProofKind::PorepSealCommit, 1, &"a".repeat(300)).len(),
            68
        );
    }

    #[test]
    fn names_are_cuzks() {
        assert_eq!(&prover_id_of_miner(1000)[..3], &[0xe8, 0x07, 0]);
        assert_eq!(kind_name(ProofKind::PorepSealCommit), "porep_seal_commit");
        for k in Kind::ALL {
            assert_eq!(kind_of(proof_kind(k)), Some(k));
        }
    }
}
