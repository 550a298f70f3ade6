//! Which job a request is: cuzk's `job_id == request_id`, an id of our own (random, so never
//! one an earlier run of the server gave out) when the caller sent none, and whether a request
//! that reuses an id is the same request (a retry, which joins it) or another one (refused).

use provetop_proto::cuzk::v1::await_proof_response::Status as Done;
use provetop_proto::cuzk::v1::SubmitProofRequest;
use sha2::{Digest, Sha256};
use tonic::Status;

/// Why a request was refused at submit, as gRPC says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The request can never prove, or its id names another request.
    Invalid(String),
    /// Its id names a request already answered.
    Exists(String),
    /// This server cannot prove it now (a missing parameter file).
    Precondition(String),
    /// The server is shutting down: another one may take it.
    Unavailable(String),
    /// The queue is full (`admission`): later, or another server.
    Exhausted(String),
}

impl Refusal {
    /// The message, whatever the code.
    pub fn message(&self) -> &str {
        match self {
            Refusal::Invalid(m)
            | Refusal::Exists(m)
            | Refusal::Precondition(m)
            | Refusal::Unavailable(m)
            | Refusal::Exhausted(m) => m,
        }
    }
}

impl From<Refusal> for Status {
    fn from(r: Refusal) -> Status {
        match r {
            Refusal::Invalid(m) => Status::invalid_argument(m),
            Refusal::Exists(m) => Status::already_exists(m),
            Refusal::Precondition(m) => Status::failed_precondition(m),
            Refusal::Unavailable(m) => Status::unavailable(m),
            Refusal::Exhausted(m) => Status::resource_exhausted(m),
        }
    }
}

/// A digest of everything a request asks for: two requests with one digest are the same
/// request. Each field goes in with its length, so no two field layouts give one stream.
pub fn digest(r: &SubmitProofRequest) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut bytes = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    bytes(r.request_id.as_bytes());
    for n in [
        r.proof_kind as u64,
        r.sector_size,
        r.registered_proof,
        r.priority as u64,
        r.sector_number,
        r.miner_id,
        u64::from(r.partition_index),
        r.vanilla_proofs.len() as u64,
    ] {
        bytes(&n.to_le_bytes());
    }
    bytes(&r.vanilla_proof);
    for v in &r.vanilla_proofs {
        bytes(v);
    }
    for b in [&r.randomness, &r.comm_r_old, &r.comm_r_new, &r.comm_d_new] {
        bytes(b);
    }
    h.finalize().into()
}

/// Whether a request may join the job its id names: only the same request (`same`: one
/// digest) while that job is open (`answered`: its answer's status, if it has one). Else the
/// reason: ALREADY_EXISTS for an answered one, INVALID_ARGUMENT for another request.
pub fn may_join(id: &str, answered: Option<i32>, same: bool) -> Result<(), Refusal> {
    let shown = shown(id);
    match (answered, same) {
        (Some(status), _) => {
            let how = Done::try_from(status).map_or("answered", |d| d.as_str_name());
            Err(Refusal::Exists(format!(
                "request_id `{shown}` was already answered {how}: AwaitProof `{shown}` gives \
                 that answer; a new attempt needs a new request_id"
            )))
        }
        (None, false) => Err(Refusal::Invalid(format!(
            "request_id `{shown}` names another request, still open, with other fields: a retry \
             resends the same request, a new request needs a new request_id"
        ))),
        (None, true) => Ok(()),
    }
}

/// A job id for a request without a `request_id`: a random (version 4) UUID, so no id given out
/// by this run or an earlier one (before a crash and restart) names another request's job.
pub fn generated_id() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// An id as a message quotes it: a long one cut short, since the message travels in a header
/// and clients refuse headers over 16 KiB (their error would hide ours).
pub fn shown(id: &str) -> String {
    const MAX: usize = 80;
    if id.len() <= MAX {
        return id.to_string();
    }
    let mut end = MAX;
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &id[..end], id.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_tells_requests_apart() {
        let a = SubmitProofRequest {
            request_id: "porep-1000-7".into(),
            vanilla_proof: b"{}".to_vec(),
            ..Default::default()
        };
        assert_eq!(digest(&a), digest(&a.clone()));
        let mut b = a.clone();
        b.priority = 1;
        assert_ne!(digest(&a), digest(&b));
        // One byte moved from one field to the next is another request.
        let mut c = a.clone();
        c.vanilla_proof = b"{".to_vec();
        c.vanilla_proofs = vec![b"}".to_vec()];
        assert_ne!(digest(&a), digest(&c));
    }

    #[test]
    fn only_the_same_open_request_joins() {
        assert_eq!(may_join("a", None, true), Ok(()));
        let other = may_join("a", None, false).unwrap_err();
        assert!(matches!(other, Refusal::Invalid(_)), "{other:?}");
        assert!(other.message().contains("another request"));
        for done in [Done::Completed, Done::Failed, Done::Cancelled] {
            for same in [true, false] {
                let r = may_join("porep-1-2", Some(done as i32), same).unwrap_err();
                assert!(matches!(r, Refusal::Exists(_)), "{r:?}");
                assert!(r.message().contains(done.as_str_name()), "{r:?}");
            }
        }
        assert_eq!(
            Status::from(Refusal::Exists("x".into())).code(),
            tonic::Code::AlreadyExists
        );
    }

    #[test]
    fn generated_ids_are_uuids_and_differ() {
        let (a, b) = (generated_id(), generated_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        assert!(a.split('-').map(str::len).eq([8, 4, 4, 4, 12]));
    }

    #[test]
    fn long_ids_are_cut_short() {
        assert_eq!(shown("job"), "job");
        assert!(shown(&"é".repeat(100)).ends_with("(200 bytes)"));
    }
}
