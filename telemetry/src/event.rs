//! The event types: the contract between the engine, the dashboard, the recorder and the
//! exporters. Names here are part of file formats and JSON; add, never rename.

use serde::{Deserialize, Serialize};

/// Nanoseconds since session start.
pub type Nanos = u64;

/// What a span did. The first group are the per-proof stage keys of `bench --json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Stage {
    #[serde(rename = "synthesis")]
    Synthesis,
    #[serde(rename = "queue_wait")]
    QueueWait,
    #[serde(rename = "lock_wait")]
    LockWait,
    #[serde(rename = "h2d")]
    H2d,
    #[serde(rename = "ntt_h")]
    NttH,
    #[serde(rename = "msm_h")]
    MsmH,
    #[serde(rename = "msm_l")]
    MsmL,
    #[serde(rename = "msm_a")]
    MsmA,
    #[serde(rename = "msm_b_g1")]
    MsmBG1,
    #[serde(rename = "msm_b_g2")]
    MsmBG2,
    #[serde(rename = "batch_add")]
    BatchAdd,
    #[serde(rename = "finalize")]
    Finalize,
    #[serde(rename = "verify")]
    Verify,
    #[serde(rename = "d2h")]
    D2h,
    #[serde(rename = "prep")]
    Prep,
    #[serde(rename = "alloc")]
    Alloc,
    #[serde(rename = "intt")]
    Intt,
    #[serde(rename = "coset_ntt")]
    CosetNtt,
    #[serde(rename = "pointwise")]
    Pointwise,
    /// The copy engine moving one staged piece to the device, inside an `h2d` span: what a
    /// device's utilisation counts as busy, where `h2d` also holds the host's staging copies.
    #[serde(rename = "dma")]
    Dma,
}

impl Stage {
    /// Every kind of span, the proof stages first.
    pub const ALL: [Stage; 20] = [
        Stage::Synthesis,
        Stage::QueueWait,
        Stage::LockWait,
        Stage::H2d,
        Stage::NttH,
        Stage::MsmH,
        Stage::MsmL,
        Stage::MsmA,
        Stage::MsmBG1,
        Stage::MsmBG2,
        Stage::BatchAdd,
        Stage::Finalize,
        Stage::Verify,
        Stage::D2h,
        Stage::Prep,
        Stage::Alloc,
        Stage::Intt,
        Stage::CosetNtt,
        Stage::Pointwise,
        Stage::Dma,
    ];

    /// The stages a proof reports, in pipeline order.
    pub const PROOF_STAGES: [Stage; 13] = [
        Stage::Synthesis,
        Stage::QueueWait,
        Stage::LockWait,
        Stage::H2d,
        Stage::NttH,
        Stage::MsmH,
        Stage::MsmL,
        Stage::MsmA,
        Stage::MsmBG1,
        Stage::MsmBG2,
        Stage::BatchAdd,
        Stage::Finalize,
        Stage::Verify,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Stage::Synthesis => "synthesis",
            Stage::QueueWait => "queue_wait",
            Stage::LockWait => "lock_wait",
            Stage::H2d => "h2d",
            Stage::NttH => "ntt_h",
            Stage::MsmH => "msm_h",
            Stage::MsmL => "msm_l",
            Stage::MsmA => "msm_a",
            Stage::MsmBG1 => "msm_b_g1",
            Stage::MsmBG2 => "msm_b_g2",
            Stage::BatchAdd => "batch_add",
            Stage::Finalize => "finalize",
            Stage::Verify => "verify",
            Stage::D2h => "d2h",
            Stage::Prep => "prep",
            Stage::Alloc => "alloc",
            Stage::Intt => "intt",
            Stage::CosetNtt => "coset_ntt",
            Stage::Pointwise => "pointwise",
            Stage::Dma => "dma",
        }
    }

    /// Work that occupies a device's compute engine (what "busy" means).
    pub fn is_compute(self) -> bool {
        matches!(
            self,
            Stage::NttH
                | Stage::MsmH
                | Stage::MsmL
                | Stage::MsmA
                | Stage::MsmBG1
                | Stage::MsmBG2
                | Stage::BatchAdd
                | Stage::Intt
                | Stage::CosetNtt
                | Stage::Pointwise
        )
    }
}

/// Where a span ran.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Lane {
    /// A device's compute stream (or a CPU executor's pool).
    Compute { device: String },
    /// A device's host-to-device copy engine.
    H2d { device: String },
    /// A device's device-to-host copy engine.
    D2h { device: String },
    /// One GPU worker of a device.
    Worker { device: String, worker: u32 },
    /// A CPU pool: `synthesis`, `prover`.
    Pool { name: String },
}

impl Lane {
    pub fn device(&self) -> Option<&str> {
        match self {
            Lane::Compute { device } | Lane::H2d { device } | Lane::D2h { device } => Some(device),
            Lane::Worker { device, .. } => Some(device),
            Lane::Pool { .. } => None,
        }
    }
}

/// Something that occupied a lane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub lane: Lane,
    pub stage: Stage,
    pub start: Nanos,
    pub end: Nanos,
    pub job: Option<u64>,
    pub partition: Option<u32>,
    pub bytes: u64,
}

/// A measured value at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub t: Nanos,
    pub metric: String,
    pub device: Option<String>,
    pub value: f64,
}

/// A change of configuration: applied, or refused with the reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigChange {
    pub t: Nanos,
    pub key: String,
    pub from: String,
    pub to: String,
    /// `schedule`, `ui`, `api`, `config`.
    pub by: String,
    pub applied: bool,
    pub error: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Submitted,
    Synthesized,
    Proving,
    Verified,
    Failed,
    Cancelled,
}

/// A job's or partition's lifecycle step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobEvent {
    pub t: Nanos,
    pub job: u64,
    pub partition: Option<u32>,
    pub state: JobState,
    pub detail: Option<String>,
}

/// A finished partition and the time each of its stages took, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofRecord {
    pub t: Nanos,
    pub job: u64,
    pub partition: u32,
    pub device: String,
    pub verified: bool,
    pub error: Option<String>,
    pub stages: std::collections::BTreeMap<Stage, f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    pub t: Nanos,
    pub level: String,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    pub t: Nanos,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Span(Span),
    Sample(Sample),
    Config(ConfigChange),
    Job(JobEvent),
    Proof(ProofRecord),
    Log(LogLine),
    Mark(Mark),
}

impl Event {
    pub fn time(&self) -> Nanos {
        match self {
            Event::Span(s) => s.end,
            Event::Sample(s) => s.t,
            Event::Config(c) => c.t,
            Event::Job(j) => j.t,
            Event::Proof(p) => p.t,
            Event::Log(l) => l.t,
            Event::Mark(m) => m.t,
        }
    }
}
