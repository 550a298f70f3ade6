//! One served request's record (its phase, what it asked, its partitions' proofs and its
//! answer), and what the table reports of the requests it holds.

use provetop_engine::pipeline::{JobId, Priority};
use provetop_porep::Prepared;
use provetop_proto::cuzk::v1::{AwaitProofResponse, ProofKind};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// Where a request is.
pub enum Phase {
    /// Accepted, its circuit not yet built.
    Checking,
    /// Built and waiting for room in the engine.
    Queued,
    /// In the engine's pipeline as `engine_job`.
    Running,
    /// Answered.
    Finished,
}

/// One request.
pub struct Entry {
    /// What the request asked for ([`crate::serve::identity::digest`]): a retry must match it.
    pub digest: [u8; 32],
    pub kind: ProofKind,
    pub priority: Priority,
    pub phase: Phase,
    pub proof: Option<Arc<Prepared>>,
    pub circuit_id: String,
    pub engine_job: Option<JobId>,
    pub accepted: Instant,
    pub submitted: Option<Instant>,
    pub srs_load_ms: u64,
    /// Each partition's 192-byte proof, by partition.
    pub proofs: Vec<Option<Vec<u8>>>,
    pub synthesis_s: f64,
    pub device_s: f64,
    pub answer: watch::Sender<Option<AwaitProofResponse>>,
    /// The request's size as received: what it counts against `[serve] queue_memory`.
    pub bytes: u64,
}

/// A request in the engine, as the status page shows it.
pub struct Running {
    pub engine_job: JobId,
    pub job_id: String,
    pub kind: &'static str,
    pub since: Instant,
    pub partitions: u32,
    pub done: u32,
}

/// What `submit` did.
pub struct Accepted {
    pub job_id: String,
    pub queue_position: u32,
    /// A retry that joined the open request of its id, not a job of its own.
    pub joined: bool,
}

/// Per proof kind: (pending, in progress).
pub type Queues = Vec<(&'static str, u32, u32)>;
