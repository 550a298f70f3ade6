//! cuzk's wire onto Filecoin's request: a `SubmitProofRequest` mapped onto
//! [`provetop_porep::request::Request`], which checks it and turns it into work. This file
//! knows the wire (kinds and priorities by cuzk's numbers and names, the message limit) and
//! nothing of proofs; `serve`, `verify` and `bench --request` all map through it.

use anyhow::{anyhow, bail, Result};
use provetop_engine::pipeline::Priority as EnginePriority;
use provetop_porep::request::{Checked, Request};
use provetop_porep::Kind;
use provetop_proto::cuzk::v1::{Priority, ProofKind, SubmitProofRequest};

pub use provetop_porep::request::{prover_id_of_miner, size_note, MAX_VANILLA_BYTES};

/// The largest message either way: Curio's client sends and takes up to 256 MiB.
pub const MAX_MESSAGE: usize = 256 << 20;

// A vanilla proof as large as the request allows still fits a message with the rest.
const _: () = assert!(MAX_VANILLA_BYTES + (1 << 20) <= MAX_MESSAGE);

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

/// The message as Filecoin's request: its proof kind and priority must be ones cuzk knows.
pub fn request_of(r: &SubmitProofRequest) -> Result<Request<'_>> {
    let wire = ProofKind::try_from(r.proof_kind)
        .map_err(|_| anyhow!("proof_kind {} is not a known proof kind", r.proof_kind))?;
    let kind = kind_of(wire).ok_or_else(|| {
        anyhow!("proof_kind is unspecified: POREP_SEAL_COMMIT, SNAP_DEALS_UPDATE, WINDOW_POST_PARTITION or WINNING_POST")
    })?;
    if Priority::try_from(r.priority).is_err() {
        bail!("priority {} is not a known priority", r.priority);
    }
    Ok(Request {
        request_id: &r.request_id,
        kind,
        registered_proof: r.registered_proof,
        sector_size: r.sector_size,
        vanilla_proof: &r.vanilla_proof,
        vanilla_proofs: &r.vanilla_proofs,
        sector_number: r.sector_number,
        miner_id: r.miner_id,
        randomness: &r.randomness,
        partition_index: r.partition_index,
        comm_r_old: &r.comm_r_old,
        comm_r_new: &r.comm_r_new,
        comm_d_new: &r.comm_d_new,
    })
}

/// The message mapped and checked (every check that needs no parsing), once: what builds its
/// proof later takes both.
pub fn checked(r: &SubmitProofRequest) -> Result<(Request<'_>, Checked)> {
    let request = request_of(r)?;
    let checked = request.check()?;
    Ok((request, checked))
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
        format!("{:#}", checked(r).unwrap_err())
    }

    #[test]
    fn bad_wire_fields_are_named() {
        assert!(checked(&request()).is_ok());
        let mut r = request();
        r.proof_kind = 99;
        assert!(err(&r).contains("proof_kind 99"));
        r.proof_kind = ProofKind::Unspecified as i32;
        assert!(err(&r).contains("unspecified"));
        let mut r = request();
        r.priority = -1;
        assert!(err(&r).contains("priority"));
        // What the message carries reaches the request's own checks.
        let mut r = request();
        r.vanilla_proof.clear();
        assert!(err(&r).contains("empty"));
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
        assert_eq!(kind_name(ProofKind::PorepSealCommit), "porep_seal_commit");
        for k in Kind::ALL {
            assert_eq!(kind_of(proof_kind(k)), Some(k));
            // The request's messages name kinds as the wire does.
            assert_eq!(
                provetop_porep::request::wire_name(k),
                proof_kind(k).as_str_name()
            );
        }
    }
}
