//! The event types: the contract between the engine, the dashboard, the recorder and the
//! exporters. Names here are part of file formats and JSON; add, never rename.

use serde::{Deserialize, Serialize};

/// Nanoseconds since session start.
pub type Nanos = u64;

/// Declares `Stage` from one table: each variant with its key, which serde, `key`, `ALL` and
/// `PROOF_STAGES` all read, so a stage's name is written once.
macro_rules! stages {
    (
        proof: [$($(#[$pdoc:meta])* $p:ident = $pk:tt,)*]
        other: [$($(#[$odoc:meta])* $o:ident = $ok:tt,)*]
    ) => {
        /// What a span did. The first group are the per-proof stage keys of `bench --json`.
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        pub enum Stage {
            $($(#[$pdoc])* #[serde(rename = $pk)] $p,)*
            $($(#[$odoc])* #[serde(rename = $ok)] $o,)*
        }

        impl Stage {
            /// Every kind of span, the proof stages first.
            pub const ALL: [Stage; [$($pk,)* $($ok,)*].len()] = [$(Stage::$p,)* $(Stage::$o,)*];

            /// The stages a proof reports, in pipeline order.
            pub const PROOF_STAGES: [Stage; [$($pk,)*].len()] = [$(Stage::$p,)*];

            pub fn key(self) -> &'static str {
                match self {
                    $(Stage::$p => $pk,)*
                    $(Stage::$o => $ok,)*
                }
            }
        }
    };
}

stages! {
    proof: [
        Synthesis = "synthesis",
        /// a, b, c from a pre-compiled circuit's matrices and the witness (`precompiled`).
        AbcEval = "abc_eval",
        QueueWait = "queue_wait",
        LockWait = "lock_wait",
        H2d = "h2d",
        NttH = "ntt_h",
        MsmH = "msm_h",
        MsmL = "msm_l",
        MsmA = "msm_a",
        MsmBG1 = "msm_b_g1",
        MsmBG2 = "msm_b_g2",
        BatchAdd = "batch_add",
        Finalize = "finalize",
        Verify = "verify",
    ]
    other: [
        D2h = "d2h",
        Prep = "prep",
        Alloc = "alloc",
        Intt = "intt",
        CosetNtt = "coset_ntt",
        Pointwise = "pointwise",
        /// The copy engine moving one staged piece to the device, inside an `h2d` span: what a
        /// device's utilisation counts as busy, where `h2d` also holds the host's staging copies.
        Dma = "dma",
    ]
}

impl Stage {
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
    /// What the span moved (copies) or, for `alloc`, the device memory it allocated (0 when
    /// the worker kept its buffers, and in recordings from before allocations said).
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

#[cfg(test)]
mod tests {
    use super::Stage;

    #[test]
    fn a_stage_serialises_as_its_key_and_parses_back() {
        for s in Stage::ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.key()));
            assert_eq!(serde_json::from_str::<Stage>(&json).unwrap(), s);
        }
        assert_eq!(Stage::ALL[..Stage::PROOF_STAGES.len()], Stage::PROOF_STAGES);
    }
}
