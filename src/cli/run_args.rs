//! The flags of a run of the engine, in groups, so a command takes only the groups it uses:
//! the workload, its Filecoin inputs, the run's length and schedule, the jobs in flight, and
//! the session's files (config, parameters cache, telemetry, recording, metrics). `EngineArgs`
//! gathers a command's groups into what `run::start` reads, with the defaults of the groups
//! a command does not take.

use clap::Args;
use provetop_engine::pipeline::Scheduled;
use std::path::PathBuf;

use super::engine_flags::EngineFlags;
use super::{Concurrency, OnOff, WorkloadName};

/// What one job proves, and the parameters it proves with.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Workload to prove.
    #[arg(long, value_enum, default_value_t = WorkloadName::Synthetic)]
    pub workload: WorkloadName,

    /// Synthetic workload size: constraints plus inputs fill a 2^K domain (4..=27)
    /// [default: 14 on the cpu backend, 24 on cuda]
    #[arg(long, value_name = "K")]
    pub log2_constraints: Option<u32>,

    /// SHA-256 workload size: the preimage is N × 64 bytes.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub blocks: usize,

    /// Partitions per job; each partition yields one 192-byte proof (a Filecoin workload's
    /// jobs have their proof's: a 32GiB PoRep 10, a SnapDeals update 16, a PoSt 1).
    #[arg(long, value_name = "P", default_value_t = 1)]
    pub partitions: u32,

    /// Seed of every witness (each partition derives its own).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Filecoin sector size: 2KiB, 8MiB or 512MiB seals a test sector here when there is no
    /// --c1 (once; cached under $XDG_CACHE_HOME/provetop/porep), which the snap, window-post
    /// and winning-post workloads prove from too; with --c1, checked against the file.
    #[arg(long, value_name = "SIZE")]
    pub sector_size: Option<String>,

    /// Use these bellperson-format parameters instead of generating or caching them.
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,

    /// Filecoin's parameter folder (the v28-….params and .vk files of the workload's circuit:
    /// stacked-proof-of-replication, empty-sector-update, proof-of-spacetime-fallback) instead
    /// of parameters generated here.
    #[arg(long, value_name = "DIR")]
    pub params_dir: Option<PathBuf>,
}

/// A Filecoin proof's own inputs: a PoRep's C1 output, or a whole request.
#[derive(Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// PoRep: a commit-phase-1 output (Lotus/Curio JSON, or lotus-bench's {"Phase1Out": …}).
    #[arg(long, value_name = "FILE")]
    pub c1: Option<PathBuf>,

    /// A SubmitProofRequest in proto3 JSON (from `provetop gen-vanilla`, or as Curio sends it
    /// to `serve`): proves it (a PoRep's C1 output for its miner and sector, a SnapDeals
    /// update's or a PoSt's vanilla proofs), checked as `serve` checks it. Implies the
    /// workload of its proof kind.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["c1", "sector_size", "prover_id", "sector_id"])]
    pub request: Option<PathBuf>,

    /// PoRep: the miner's prover id (f01000, or 64 hex digits), where the C1 file lacks it;
    /// needed for filecoin-proofs' own verification of the proofs.
    #[arg(long, value_name = "ID")]
    pub prover_id: Option<String>,

    /// PoRep: the sector number, where the C1 file lacks it.
    #[arg(long, value_name = "N")]
    pub sector_id: Option<u64>,
}

/// Jobs a run proves when `--proofs` is not given and it is not the dashboard.
pub const DEFAULT_PROOFS: u64 = 3;

/// How long a run proves and what it changes on the way.
#[derive(Args, Debug, Clone, Default)]
pub struct JobsArgs {
    /// Jobs to prove [default: until quit in the dashboard; 3 headless, in bench and tune]
    #[arg(long, value_name = "N")]
    pub proofs: Option<u64>,

    /// Apply changes during the run: WHEN is seconds from the start (5s, 2.5s) or pN, after the
    /// N-th finished partition; keys are the [engine] fields. Repeatable.
    /// Example: --at 5s:gpu_workers_per_device=3 --at p12:lock=two-lock,prestage=false
    #[arg(long, value_name = "WHEN:KEY=VALUE[,KEY=VALUE…]")]
    pub at: Vec<Scheduled>,
}

/// Jobs kept submitted at once.
#[derive(Args, Debug, Clone)]
pub struct ConcurrencyArgs {
    /// Jobs the run keeps submitted at once: a number, or auto (enough for every synthesis
    /// worker and device worker to have a partition, with two queued) [default: auto]
    #[arg(long, value_name = "C|auto", default_value = "auto")]
    pub concurrency: Concurrency,
}

/// The session's files and what it reports: config, parameter cache, telemetry, recording,
/// metrics.
#[derive(Args, Debug, Clone)]
pub struct SessionArgs {
    /// Config file with [engine], [ui] and [serve] tables [default: $XDG_CONFIG_HOME/provetop/config.toml]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Where generated parameters are cached [default: $XDG_CACHE_HOME/provetop/params]
    #[arg(long, value_name = "DIR")]
    pub params_cache: Option<PathBuf>,

    /// Collect telemetry (spans, samples); `off` measures its cost. Proofs are verified either way.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pub telemetry: OnOff,

    /// Record every event and sample to FILE, for `provetop replay` and `provetop export`.
    /// The recorder never holds the engine up: when the disk falls behind it drops samples,
    /// then spans, counts them, and marks the hole in the file.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Let --record overwrite an existing file (without it, an existing file is refused).
    #[arg(long, requires = "record")]
    pub force: bool,

    /// Serve Prometheus metrics (text exposition) at ADDR/metrics, e.g. 127.0.0.1:9464; off
    /// by default. A bare port listens on loopback only.
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<String>,
}

/// What a run of the engine is given, from the groups its command takes; a group a command
/// does not take has its defaults here.
#[derive(Debug, Clone)]
pub struct EngineArgs {
    pub config: Option<PathBuf>,
    pub workload: WorkloadName,
    pub log2_constraints: Option<u32>,
    pub blocks: usize,
    pub proofs: Option<u64>,
    pub partitions: u32,
    pub concurrency: Concurrency,
    pub seed: u64,
    pub params: Option<PathBuf>,
    pub params_cache: Option<PathBuf>,
    pub c1: Option<PathBuf>,
    pub request: Option<PathBuf>,
    pub sector_size: Option<String>,
    pub prover_id: Option<String>,
    pub sector_id: Option<u64>,
    pub params_dir: Option<PathBuf>,
    pub at: Vec<Scheduled>,
    pub telemetry: OnOff,
    pub record: Option<PathBuf>,
    pub force: bool,
    pub metrics_addr: Option<String>,
    /// The `[engine]` keys given as flags.
    pub engine: EngineFlags,
    /// What the session's header calls its workload, when not the workload's own label
    /// (`serve`'s sessions say what they serve).
    pub label: Option<String>,
}

impl EngineArgs {
    /// `--proofs`, or [`DEFAULT_PROOFS`]: the dashboard alone proves until quit without it.
    pub fn proofs(&self) -> u64 {
        self.proofs.unwrap_or(DEFAULT_PROOFS)
    }

    /// A run of `workload` in `session` with `engine`'s settings; no Filecoin inputs, the
    /// default length and schedule, concurrency `auto`, until `with_*` says otherwise.
    pub fn new(session: &SessionArgs, workload: &WorkloadArgs, engine: &EngineFlags) -> Self {
        let jobs = JobsArgs::default();
        EngineArgs {
            config: session.config.clone(),
            workload: workload.workload,
            log2_constraints: workload.log2_constraints,
            blocks: workload.blocks,
            proofs: jobs.proofs,
            partitions: workload.partitions,
            concurrency: Concurrency::Auto,
            seed: workload.seed,
            params: workload.params.clone(),
            params_cache: session.params_cache.clone(),
            c1: None,
            request: None,
            sector_size: workload.sector_size.clone(),
            prover_id: None,
            sector_id: None,
            params_dir: workload.params_dir.clone(),
            at: jobs.at,
            telemetry: session.telemetry,
            record: session.record.clone(),
            force: session.force,
            metrics_addr: session.metrics_addr.clone(),
            engine: engine.clone(),
            label: None,
        }
    }

    /// With a Filecoin proof's inputs.
    pub fn with_inputs(mut self, inputs: &InputArgs) -> Self {
        self.c1 = inputs.c1.clone();
        self.request = inputs.request.clone();
        self.prover_id = inputs.prover_id.clone();
        self.sector_id = inputs.sector_id;
        self
    }

    /// With the run's length and schedule.
    pub fn with_jobs(mut self, jobs: &JobsArgs) -> Self {
        self.proofs = jobs.proofs;
        self.at = jobs.at.clone();
        self
    }

    /// With the jobs kept in flight.
    pub fn with_concurrency(mut self, c: &ConcurrencyArgs) -> Self {
        self.concurrency = c.concurrency;
        self
    }

    /// The `[engine]` flags that were given, as (key, value).
    pub fn config_overrides(&self) -> Vec<(&'static str, String)> {
        self.engine.given.clone()
    }
}
