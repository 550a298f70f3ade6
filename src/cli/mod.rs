//! Command-line arguments: the commands and the flags each takes. A command that runs the
//! engine takes the groups of `run_args` it uses and the `[engine]` flags of `engine_flags`
//! (made from the table of keys); `position` parses, with the rule for flags given before a
//! subcommand.

mod budget;
mod engine_flags;
mod fleet_args;
mod network;
mod position;
mod run_args;

pub use budget::{parse_duration, TuneBudget};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub use engine_flags::EngineFlags;
pub use fleet_args::FleetArgs;
use fleet_args::FLEET_HELP;
pub use network::{AttachArgs, ServeArgs};
use network::{ATTACH_HELP, SERVE_AFTER_HELP};
pub use position::parse;
pub use run_args::{
    ConcurrencyArgs, EngineArgs, InputArgs, JobsArgs, SessionArgs, WorkloadArgs, DEFAULT_PROOFS,
};

const AFTER_HELP: &str = "\
Files:
  config     $XDG_CONFIG_HOME/provetop/config.toml (or --config FILE): [engine], [ui], [serve], [alerts] and [fleet] tables
  params     $XDG_CACHE_HOME/provetop/params/ (or --params-cache DIR): generated parameters
  logs       $XDG_STATE_HOME/provetop/provetop.log.* (daily files, the last 7 kept)

Flags before a subcommand are its own (`provetop --lock none bench` is `provetop bench --lock
none`); a flag a command does not take is refused, exit 2. Every [engine] key, its values and
default: docs/configuration.md.

Exit codes: 0 every proof verified, 1 a proof failed or a check failed, 2 bad usage or input,
  3 stopped with jobs unfinished (SIGINT or SIGTERM, or quit in the dashboard) and none failed.
  A stopped run says how many jobs were unfinished; a second signal ends it at once (3).";

#[derive(Parser, Debug)]
#[command(
    name = "provetop",
    version,
    about = "A terminal dashboard over a pipelined Groth16 prover for BLS12-381",
    long_about = "provetop runs a Groth16 proving engine (BLS12-381, bellperson-compatible) and shows \
what every device is doing. With no subcommand it opens the dashboard over the embedded engine on a \
default workload; when stdout is not a terminal (or with --headless) it proves --proofs jobs, prints a \
status line per proof to stderr and exits.",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Run without the dashboard even on a terminal: prove, print status lines, exit.
    #[arg(long)]
    pub headless: bool,

    #[arg(long, value_name = "NAME|PATH", help = THEME_HELP)]
    pub theme: Option<String>,

    #[command(flatten)]
    pub run: RunFlags,
}

impl Cli {
    /// What the dashboard or the headless run proves with.
    pub fn engine_args(&self) -> EngineArgs {
        self.run.engine_args()
    }
}

/// The flags of a run that proves on the embedded engine: the main command's and `bench`'s,
/// declared once so the two cannot drift apart.
#[derive(Args, Debug)]
pub struct RunFlags {
    #[command(flatten, next_help_heading = WORKLOAD)]
    pub workload: WorkloadArgs,

    #[command(flatten, next_help_heading = INPUTS)]
    pub inputs: InputArgs,

    #[command(flatten, next_help_heading = RUN)]
    pub jobs: JobsArgs,

    #[command(flatten, next_help_heading = RUN)]
    pub concurrency: ConcurrencyArgs,

    #[command(flatten, next_help_heading = SESSION)]
    pub session: SessionArgs,

    #[command(flatten)]
    pub engine: EngineFlags,
}

impl RunFlags {
    /// What the run proves with.
    pub fn engine_args(&self) -> EngineArgs {
        EngineArgs::new(&self.session, &self.workload, &self.engine)
            .with_inputs(&self.inputs)
            .with_jobs(&self.jobs)
            .with_concurrency(&self.concurrency)
    }
}

/// `--theme`, where a dashboard is drawn: the main command, `replay` and `attach`.
pub const THEME_HELP: &str = "Dashboard colour theme: a name from themes/ (dark, light, \
high-contrast) or a TOML file [default: the [ui] table's theme, else dark]";

/// The help headings of the groups of a run's flags.
const WORKLOAD: &str = "Workload";
const INPUTS: &str = "Filecoin inputs";
const RUN: &str = "Run";
const SESSION: &str = "Files, telemetry and recording";

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once
pub enum Command {
    /// Headless benchmark: proves, verifies, and prints per-stage timings (a table, or --json).
    #[command(after_help = AFTER_HELP)]
    Bench(BenchArgs),
    /// Proving daemon: cuzk's gRPC interface (cuzk.v1.ProvingEngine, plaintext) for Curio.
    #[command(after_help = SERVE_AFTER_HELP)]
    Serve(ServeArgs),
    /// Writes the SubmitProofRequest Curio would send for a test sector sealed here (proto3
    /// JSON): a PoRep C2, a SnapDeals update, a WindowPoSt partition or a WinningPoSt; at
    /// 32GiB and 64GiB a sparse sector's (--sparse).
    #[command(after_help = GEN_VANILLA_AFTER_HELP)]
    GenVanilla(GenVanillaArgs),
    /// Checks a proof of a request file with filecoin-proofs' own verifier of its kind
    /// (verify_seal, verify_window_post, …; exit 0 verified, 1 not).
    Verify(VerifyArgs),
    /// Lists GPUs, the driver, the embedded kernels, and which backend `auto` picks.
    Devices,
    /// Checks every GPU against the cpu backend on fresh random inputs: NTTs in every order,
    /// the H polynomial, MSMs with edge cases, and whole proofs (byte-identical for equal r, s).
    Check {
        /// Largest log2 size of the NTT and MSM checks.
        #[arg(long, default_value_t = 20)]
        max_log2: u32,
    },
    /// Replays a recording (made with --record, or R in the dashboard): the dashboard over the
    /// file with play/pause, speed and seek, or a summary with --summary.
    #[command(after_help = REPLAY_HELP)]
    Replay(ReplayArgs),
    /// The dashboard over a running `provetop serve`, local or remote: its last minutes of
    /// history, then live; read-only unless the server takes this viewer's control token.
    #[command(after_help = ATTACH_HELP)]
    Attach(AttachArgs),
    /// Every rig on one screen: a row a running `provetop serve` (reachable or not, devices,
    /// proofs per hour by kind, queues, failures, WinningPoSt latency, alerts, bottleneck);
    /// Enter opens a rig's full dashboard.
    #[command(after_help = FLEET_HELP)]
    Fleet(FleetArgs),
    /// Exports a recording for other tools: --perfetto writes Perfetto's protobuf trace
    /// (OUT.pftrace) or Chrome Trace Event JSON (any other name).
    Export(ExportArgs),
    /// Searches [engine] settings on one running engine: measures proofs per hour, tries the
    /// advisor's changes and single-knob steps live, keeps what helps; a table of every step,
    /// then the best configuration (--write saves it to the config file).
    #[command(after_help = TUNE_AFTER_HELP)]
    Tune(TuneArgs),
}

const TUNE_AFTER_HELP: &str = "\
The search: the configuration as given (file and flags) is measured first, then one change at a
time: the advisor's recommendations for the last window, then single steps of
synthesis_workers, gpu_workers_per_device, cpu_devices (cpu backend), concurrency, lock,
b_g2_on and prestage (cuda backend) and precompiled. A change is kept when its window's proofs
per hour beat the configuration in force by more than the noise (at least 3 %); otherwise it is
set back. Each window waits for the jobs submitted before its change to finish, then counts 4
to 64 finished partitions (fewer when the budget is short). Jobs keep flowing throughout and
every proof is verified.

--budget: a time (90s, 5m, 1.5h) counted from the first job, or a number of proofs (200p: that
many finished partitions). When it is spent no new job starts; jobs in flight finish. The search
ends sooner when not even the shortest window fits what is left, or nothing is left to try.

Exit codes: 0 the search ended and every proof verified, 1 a proof failed (the search stops),
  2 bad usage or input, 3 stopped by SIGINT or SIGTERM with jobs unfinished (the table is
  printed; --write is skipped).";

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// How long to search: a time (90s, 5m, 1h) or a number of proofs (200p) [default: 5m]
    #[arg(long, value_name = "TIME|Np", default_value = "5m")]
    pub budget: TuneBudget,

    /// Save the best configuration's [engine] fields that differ from the defaults to the
    /// config file (--config FILE, else the default path), keeping its comments.
    #[arg(long)]
    pub write: bool,

    /// Print one JSON object on stdout (steps, best configuration) instead of the table.
    #[arg(long)]
    pub json: bool,

    #[command(flatten, next_help_heading = WORKLOAD)]
    pub workload: WorkloadArgs,

    #[command(flatten, next_help_heading = INPUTS)]
    pub inputs: InputArgs,

    #[command(flatten, next_help_heading = "Start")]
    pub concurrency: ConcurrencyArgs,

    #[command(flatten, next_help_heading = SESSION)]
    pub session: SessionArgs,

    /// The configuration the search starts from.
    #[command(flatten)]
    pub engine: EngineFlags,
}

impl TuneArgs {
    /// What the searched engine proves with (tune makes its own changes: no `--at`).
    pub fn engine_args(&self) -> EngineArgs {
        EngineArgs::new(&self.session, &self.workload, &self.engine)
            .with_inputs(&self.inputs)
            .with_concurrency(&self.concurrency)
    }
}

const REPLAY_HELP: &str = "\
Keys besides the dashboard's: space play/pause, < > slower/faster (0.25x to 64x), g go to a time,
M next mark, C next config change. A file cut short replays up to where it stops (the byte is
named on stderr). Exit codes: 0 replayed, 2 not a provetop recording, a damaged header, or a
format newer than this provetop.";

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The recording.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print a summary instead of opening the dashboard: duration, proofs, each device's busy
    /// fraction and largest idle-gap causes, configuration changes.
    #[arg(long)]
    pub summary: bool,

    /// The summary as one JSON object with the keys of `bench --json` (summary, devices,
    /// config_events) and a `recording` object; implies --summary.
    #[arg(long)]
    pub json: bool,

    /// Playback speed to start at, 0.25 to 64.
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub speed: f64,

    /// Config file for the [ui] table (theme, keys) [default: $XDG_CONFIG_HOME/provetop/config.toml]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[arg(long, value_name = "NAME|PATH", help = THEME_HELP)]
    pub theme: Option<String>,

    /// Memory the decoded recording may take (bytes, or 2GiB); reading stops, as at a cut,
    /// where a file would take more [default: 512MiB]
    #[arg(long, value_name = "BYTES", value_parser = parse_max_memory)]
    pub max_memory: Option<u64>,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The recording.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Write a trace for Perfetto (ui.perfetto.dev): OUT.pftrace is Perfetto's protobuf (a
    /// track per device engine, worker and CPU pool, a counter track per metric, flows from
    /// synthesis to the device region to the proof); any other name is Chrome Trace Event
    /// JSON, for chrome://tracing too. Both: instants for config changes and marks.
    #[arg(long, value_name = "OUT.pftrace|OUT.json", required = true)]
    pub perfetto: PathBuf,

    /// Memory the decoded recording may take (bytes, or 2GiB); the export stops, as at a cut,
    /// where a file would take more [default: 512MiB]
    #[arg(long, value_name = "BYTES", value_parser = parse_max_memory)]
    pub max_memory: Option<u64>,
}

/// `--max-memory`: bytes or a binary size, at least 1 MiB.
fn parse_max_memory(s: &str) -> Result<u64, String> {
    match provetop_telemetry::config::parse_budget(s) {
        Ok(provetop_telemetry::config::Budget::Bytes(n)) if n >= 1 << 20 => Ok(n),
        Ok(provetop_telemetry::config::Budget::Bytes(n)) => {
            Err(format!("{n} bytes: at least 1MiB"))
        }
        _ => Err(format!(
            "expected a size in bytes such as 1073741824 or 2GiB, got `{s}`"
        )),
    }
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Print exactly one JSON object on stdout (progress and logs go to stderr).
    #[arg(long)]
    pub json: bool,

    /// Write vk.bin, params.bin and proof-<i>.bin / inputs-<i>.bin (i = job × partitions +
    /// partition) in bellperson's formats into DIR.
    #[arg(long, value_name = "DIR")]
    pub export_dir: Option<PathBuf>,

    /// Mix kinds of Filecoin proofs: KIND:WEIGHT,… (porep, snap, window-post, winning-post),
    /// the weights of the jobs submitted, each kind's proof of the test sector of
    /// --sector-size with Curio's priority (WinningPoSt critical, WindowPoSt high). Example:
    /// --mix porep:8,window-post:1,winning-post:1
    #[arg(long, value_name = "KIND:WEIGHT,…", conflicts_with_all = ["request", "server"])]
    pub mix: Option<crate::mix::Mix>,

    /// With --request: send it --proofs times to a running `provetop serve` (or cuzk) at
    /// HOST:PORT instead of proving here, --concurrency requests outstanding [auto: 16], and
    /// check every answer with filecoin-proofs (verify_seal, …): proofs per hour through the
    /// API. With --token-file instead: --proofs jobs of the server's own workload, submitted
    /// through its telemetry service's Control, --concurrency in flight [auto: 2], counted from
    /// the server's own events (proofs per hour on its clock, its peak memory).
    #[arg(long, value_name = "HOST:PORT")]
    pub server: Option<String>,

    /// With --server: the server's control token (its control_token_file), for jobs of its own
    /// workload.
    #[arg(
        long,
        value_name = "FILE",
        requires = "server",
        conflicts_with = "request"
    )]
    pub token_file: Option<PathBuf>,

    #[command(flatten)]
    pub run: RunFlags,
}

impl BenchArgs {
    /// What the bench proves with.
    pub fn engine_args(&self) -> EngineArgs {
        self.run.engine_args()
    }
}

const GEN_VANILLA_AFTER_HELP: &str = "\
Sparse sectors (--sparse; the default at 32GiB and 64GiB, where no sector can be sealed here):
sectors of which only the nodes the proofs open are built. PoRep: a committed-capacity sector's
opened labels (Filecoin's labelling function over parents' labels drawn from --seed) and sparse
trees. WindowPoSt and WinningPoSt: each sector a comm_c and a sparse tree_r_last holding its
challenged leaves (--sectors N of them; a full WindowPoSt partition by default). SnapDeals: an
old replica and new data constant within each of the 2^h blocks rho is drawn for, so comm_r_new
is known before its challenges. The request passes the kind's own vanilla verifier before it is
written, in seconds. It is a test and benchmark tool, not a way round sealing: the challenges
(PoRep's seed, a PoSt's randomness) are chosen here or known before the trees are built, where
the chain draws them after the commitments, so a miner must have every node right and here only
the opened ones are; and the parameters such requests are proved with here are generated, not
Filecoin's, so their proofs verify only against those parameters' verifying key. Only the
interactive V1_1 seal proofs can be sparse: synthetic and non-interactive PoRep derive their
challenges from comm_r. See docs/sparse-sectors.md.

Exit codes: 0 written, 1 the generated request failed its check, 2 bad usage or input.";

#[derive(Args, Debug)]
pub struct GenVanillaArgs {
    /// The proof kind of the request: porep, snap, window-post or winning-post.
    #[arg(long, default_value = "porep")]
    pub kind: String,
    /// The sector's size: 2KiB, 8MiB or 512MiB (sealed here, or sparse with --sparse),
    /// 32GiB or 64GiB (sparse).
    #[arg(long, default_value = "2KiB")]
    pub sector_size: String,
    /// Build sparse sectors instead of sealing one (every kind; the default at 32GiB and 64GiB).
    #[arg(long)]
    pub sparse: bool,
    /// The sectors of a sparse PoSt, numbered from --sector-id [default: a full WindowPoSt
    /// partition (2,349 at 32GiB); for WinningPoSt 1, the set it challenges one sector of].
    #[arg(long, value_name = "N")]
    pub sectors: Option<usize>,
    /// The registered seal proof of a PoRep request [default: the V1_1 proof of the size, 5-9].
    #[arg(long, value_name = "N")]
    pub registered_proof: Option<u64>,
    /// The miner's number (f0N); the prover id follows from it as in Filecoin.
    #[arg(long, value_name = "N")]
    pub miner_id: Option<u64>,
    /// The miner's ID address, f0N: the same as --miner-id N.
    #[arg(long, value_name = "f0N")]
    pub prover_id: Option<String>,
    /// The sector number.
    #[arg(long, default_value_t = 7)]
    pub sector_id: u64,
    /// Picks the sector's data, ticket and seed (and a PoSt's randomness, an update's data).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The request file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Overwrite --out if it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The request file (proto3 JSON of a SubmitProofRequest, as gen-vanilla writes it).
    #[arg(long, value_name = "FILE")]
    pub request: PathBuf,
    /// The proof: the bytes of AwaitProofResponse.proof.
    #[arg(long, value_name = "FILE")]
    pub proof: PathBuf,
    /// The verifying key (bellperson's layout, as Filecoin's .vk files) instead of the one in
    /// --params-dir.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["params_dir", "test_params"])]
    pub vk: Option<PathBuf>,
    /// Filecoin's parameter folder, where only the circuit's v28-….vk is read [default:
    /// $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters]
    #[arg(long, value_name = "DIR", conflicts_with = "test_params")]
    pub params_dir: Option<PathBuf>,
    /// The key of the parameters `serve --test-params` (or bench) made here, read from the
    /// cache (never made by verify).
    #[arg(long)]
    pub test_params: bool,
    /// Cache of generated parameters, for --test-params [default: $XDG_CACHE_HOME/provetop/params]
    #[arg(long, value_name = "DIR", requires = "test_params")]
    pub params_cache: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WorkloadName {
    /// PoRep-shaped rows filling a 2^K domain (see --log2-constraints).
    Synthetic,
    /// SHA-256 of N 64-byte blocks (see --blocks).
    Sha256,
    /// Filecoin PoRep C2: the stacked-DRG circuit of each partition of a sector, from --c1
    /// FILE or a test sector of --sector-size sealed here (cached).
    Porep,
    /// Filecoin SnapDeals: the EmptySectorUpdate circuit of each partition of an update
    /// encoded into a test sector of --sector-size sealed here (both cached).
    Snap,
    /// Filecoin WindowPoSt: the FallbackPoSt circuit of one partition over a test sector of
    /// --sector-size sealed here.
    WindowPost,
    /// Filecoin WinningPoSt: the FallbackPoSt circuit over the challenged test sector of
    /// --sector-size sealed here.
    WinningPost,
}

impl WorkloadName {
    /// The Filecoin proof kind of the workload, if it is one.
    pub fn filecoin(self) -> Option<provetop_porep::Kind> {
        use provetop_porep::Kind;
        match self {
            WorkloadName::Synthetic | WorkloadName::Sha256 => None,
            WorkloadName::Porep => Some(Kind::Porep),
            WorkloadName::Snap => Some(Kind::Snap),
            WorkloadName::WindowPost => Some(Kind::WindowPost),
            WorkloadName::WinningPost => Some(Kind::WinningPost),
        }
    }
}

/// `--concurrency`: a number of jobs, or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Concurrency {
    Auto,
    Jobs(u64),
}

impl std::str::FromStr for Concurrency {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "auto" => Ok(Concurrency::Auto),
            n => match n.parse::<u64>() {
                Ok(n) if n >= 1 => Ok(Concurrency::Jobs(n)),
                _ => Err(format!(
                    "expected `auto` or a number of jobs ≥ 1, got `{s}`"
                )),
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[cfg(test)]
mod tests;
