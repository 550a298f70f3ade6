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

            /// The stage's name on the wire: its serde name and its key in `bench --json`.
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
        /// Circuit synthesis into the witness, on the `synthesis` pool.
        Synthesis = "synthesis",
        /// a, b, c from a pre-compiled circuit's matrices and the witness (`precompiled`).
        AbcEval = "abc_eval",
        /// A synthesised partition waiting for a device worker (a time in `ProofRecord`, no span).
        QueueWait = "queue_wait",
        /// A worker waiting for its device's lock (zero when the lock was free).
        LockWait = "lock_wait",
        /// Moving a partition's inputs (or the SRS) to the device, the host's staging copies included.
        H2d = "h2d",
        /// The quotient polynomial h from a, b, c (its NTTs and pointwise products).
        NttH = "ntt_h",
        /// The MSM of h over the SRS's H query.
        MsmH = "msm_h",
        /// The MSM of the auxiliary assignment over the SRS's L query.
        MsmL = "msm_l",
        /// The MSM of A's scalars over the SRS's A query.
        MsmA = "msm_a",
        /// The MSM of B's scalars over the SRS's B query in G1.
        MsmBG1 = "msm_b_g1",
        /// The MSM of B's scalars over the SRS's B query in G2 (on the device or the host).
        MsmBG2 = "msm_b_g2",
        /// Summing the bases whose scalar is one, which the MSMs leave out.
        BatchAdd = "batch_add",
        /// Assembling the proof from the MSMs' results on the host (`prover` pool).
        Finalize = "finalize",
        /// Checking the finished proof against the verifying key (`prover` pool).
        Verify = "verify",
    ]
    other: [
        /// Copying the MSMs' results back from the device.
        D2h = "d2h",
        /// Host work before the copies: splitting the MSMs' scalars, or prestaging the witness.
        Prep = "prep",
        /// Allocating the device buffers a partition needs.
        Alloc = "alloc",
        /// The inverse NTT, a step inside `ntt_h` where a backend reports it apart.
        Intt = "intt",
        /// The NTT onto the coset, a step inside `ntt_h` where a backend reports it apart.
        CosetNtt = "coset_ntt",
        /// The pointwise products and division, a step inside `ntt_h` where reported apart.
        Pointwise = "pointwise",
        /// The copy engine moving one staged piece to the device, inside an `h2d` span: what a
        /// device's utilisation counts as busy, where `h2d` also holds the host's staging copies.
        Dma = "dma",
        /// Building what stays on the device beside a parameter set, once: H's shifted bases
        /// and the NTT tables (kernels, counted as busy like a proof's).
        Resident = "resident",
    ]
}

impl Stage {
    /// Work that occupies a device's compute engine (what "busy" means) when it lies on a
    /// compute lane: `abc_eval` is such work on a GPU, and part of synthesis on the synthesis
    /// pool's lane.
    pub fn is_compute(self) -> bool {
        matches!(
            self,
            Stage::AbcEval
                | Stage::NttH
                | Stage::MsmH
                | Stage::MsmL
                | Stage::MsmA
                | Stage::MsmBG1
                | Stage::MsmBG2
                | Stage::BatchAdd
                | Stage::Intt
                | Stage::CosetNtt
                | Stage::Pointwise
                | Stage::Resident
        )
    }
}

/// Where a span ran.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Lane {
    /// A device's compute stream (or a CPU executor's pool).
    Compute {
        /// The device id (`gpu0`, `cpu0`).
        device: String,
    },
    /// A device's host-to-device copy engine.
    H2d {
        /// The device id (`gpu0`).
        device: String,
    },
    /// A device's device-to-host copy engine.
    D2h {
        /// The device id (`gpu0`).
        device: String,
    },
    /// One GPU worker of a device.
    Worker {
        /// The device id (`gpu0`, `cpu0`).
        device: String,
        /// The worker's slot on that device, from 0.
        worker: u32,
    },
    /// A CPU pool: `synthesis`, `prover`.
    Pool {
        /// The pool's name: `synthesis` or `prover`.
        name: String,
    },
}

impl Lane {
    /// The device the lane belongs to; `None` for a CPU pool.
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
    /// The lane it occupied: a device's engine, one of its workers, or a CPU pool.
    pub lane: Lane,
    /// What it did; `Stage::is_compute` says whether it makes the device busy.
    pub stage: Stage,
    /// When it began (nanoseconds since session start).
    pub start: Nanos,
    /// When it ended (nanoseconds since session start); spans are published at their end.
    pub end: Nanos,
    /// The job it served; `None` when it served no single job.
    pub job: Option<u64>,
    /// The partition of `job` it served, from 0; `None` when it served no single partition.
    pub partition: Option<u32>,
    /// What the span moved (copies) or, for `alloc`, the device memory it allocated (0 when
    /// the worker kept its buffers, and in recordings from before allocations said).
    pub bytes: u64,
}

/// A measured value at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// When it was measured (nanoseconds since session start).
    pub t: Nanos,
    /// One of the names in `metrics`, or a name under one of its prefixes.
    pub metric: String,
    /// The device id it measures (`gpu0`, `cpu0`); `None` for the host.
    pub device: Option<String>,
    /// The value in the metric's base unit (bytes, bytes per second, ratio 0..1, ...).
    pub value: f64,
}

/// A change of configuration: applied, or refused with the reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigChange {
    /// When it was applied or refused (nanoseconds since session start).
    pub t: Nanos,
    /// The `[engine]` field, as in the config file (`lock`).
    pub key: String,
    /// The value before, as the config file writes it.
    pub from: String,
    /// The value asked for, as the config file writes it.
    pub to: String,
    /// `schedule`, `ui`, `api`, `config`.
    pub by: String,
    /// Whether the engine now runs with `to`.
    pub applied: bool,
    /// Why it was refused; `None` when applied.
    pub error: Option<String>,
}

/// A step in the life of a job (`partition: None`) or of one of its partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// A job accepted; for a partition, put back in the queue after its device failed.
    Submitted,
    /// A partition's witness is ready and waits for a device.
    Synthesized,
    /// A partition started on a device (named in `detail`).
    Proving,
    /// A job ended with every partition verified.
    Verified,
    /// A job ended with at least one partition failed.
    Failed,
    /// A job cancelled, or ended with partitions cancelled and none failed.
    Cancelled,
}

/// How soon a job's partitions are served: each class goes ahead of the ones below it in
/// every queue of the pipeline (synthesis and devices), first come first served within a class;
/// running work is never interrupted.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Only when nothing else waits.
    Low,
    /// The default: first come, first served.
    #[default]
    Normal,
    /// Ahead of normal work.
    High,
    /// Ahead of everything (WinningPoSt's deadline is an epoch).
    Critical,
}

impl Priority {
    /// The lower-case name logs and the dashboard show.
    pub fn name(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }
}

/// A job's or partition's lifecycle step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobEvent {
    /// When the step happened (nanoseconds since session start).
    pub t: Nanos,
    /// The job's id, unique in the session.
    pub job: u64,
    /// The partition, from 0; `None` for the job as a whole.
    pub partition: Option<u32>,
    /// The step reached (`JobState` says which apply to partitions).
    pub state: JobState,
    /// The device for `proving`, why a partition was resubmitted; `None` otherwise.
    pub detail: Option<String>,
    /// What the job proves, on its `submitted` event: a Filecoin proof kind (`porep`, `snap`,
    /// `window-post`, `winning-post`) or the workload's family (`synthetic`, `sha256`); `None`
    /// on other events, and in recordings made before kinds were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// What the job is called where it came from, on its `submitted` event: a served request's
    /// id; `None` for the engine's own jobs, which views show as `#job`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl JobEvent {
    /// How views and logs name a job: its `name` where it has one, else `#job`.
    pub fn label(job: u64, name: Option<&str>) -> String {
        match name {
            Some(n) => n.to_string(),
            None => format!("#{job}"),
        }
    }
}

/// A finished partition and the time each of its stages took, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofRecord {
    /// When the partition finished (nanoseconds since session start).
    pub t: Nanos,
    /// The job's id, as in its `JobEvent`s.
    pub job: u64,
    /// The partition of the job, from 0.
    pub partition: u32,
    /// The device id that proved it; empty when it failed before reaching one.
    pub device: String,
    /// Whether the proof was made and verified.
    pub verified: bool,
    /// Why it failed; `None` when verified.
    pub error: Option<String>,
    /// Seconds per stage, for the stages it went through.
    pub stages: std::collections::BTreeMap<Stage, f64>,
}

/// A line of the engine's log, for the dashboard's log pane and recordings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    /// When it was logged (nanoseconds since session start).
    pub t: Nanos,
    /// `ERROR`, `WARN`, `INFO`, `DEBUG` or `TRACE`.
    pub level: String,
    /// The text as logged; may come from a file, so make it safe (`text`) before showing it.
    pub message: String,
}

/// A user's annotation on the timeline (`Control::Mark`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    /// Where it was placed (nanoseconds since session start).
    pub t: Nanos,
    /// The text the user gave.
    pub label: String,
}

/// Everything the bus carries and a recording stores; its JSON tag is `event`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Something that occupied a lane.
    Span(Span),
    /// A measured value.
    Sample(Sample),
    /// A configuration change, applied or refused.
    Config(ConfigChange),
    /// A job's or partition's lifecycle step.
    Job(JobEvent),
    /// A finished partition, verified or failed, with its stage times.
    Proof(ProofRecord),
    /// A line of the engine's log.
    Log(LogLine),
    /// A user's annotation on the timeline.
    Mark(Mark),
}

impl Event {
    /// When it happened (nanoseconds since session start): a span's end, otherwise its `t`.
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
