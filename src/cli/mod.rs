//! Command-line arguments. Engine flags are shared by every command that runs the engine;
//! each `EngineConfig` field has a flag of the same name (with dashes).

mod network;

pub use crate::tune::budget::{parse_duration, TuneBudget};
use clap::{Args, Parser, Subcommand, ValueEnum};
use provetop_engine::pipeline::Scheduled;
use std::path::PathBuf;

pub use network::{AttachArgs, ServeArgs};
use network::{ATTACH_HELP, SERVE_AFTER_HELP};

const AFTER_HELP: &str = "\
Files:
  config     $XDG_CONFIG_HOME/provetop/config.toml (or --config FILE): [engine], [ui] and [serve] tables
  params     $XDG_CACHE_HOME/provetop/params/ (or --params-cache DIR): generated parameters
  logs       $XDG_STATE_HOME/provetop/provetop.log.* (daily files, the last 7 kept)

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

    #[command(flatten)]
    pub engine: EngineArgs,

    /// Run without the dashboard even on a terminal: prove, print status lines, exit.
    #[arg(long)]
    pub headless: bool,

    /// Dashboard colour theme: a name from themes/ (dark, light, high-contrast) or a TOML file
    /// [default: the [ui] table's theme, else dark]
    #[arg(long, value_name = "NAME|PATH", global = true)]
    pub theme: Option<String>,
}

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
    #[command(flatten)]
    pub engine: EngineArgs,

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
    #[command(flatten)]
    pub engine: EngineArgs,

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
}

const GEN_VANILLA_AFTER_HELP: &str = "\
Sparse sectors (--sparse; the default at 32GiB and 64GiB, where no sector can be sealed here):
a committed-capacity sector of which only the nodes the proofs open are built: their labels
(Filecoin's labelling function over parents' labels drawn from --seed) and sparse trees. The
request passes storage-proofs' own vanilla verifier before it is written, in seconds. It is a
test and benchmark tool, not a way round sealing: the seed that picks the
challenges is chosen here before the trees are built, where the chain draws it after comm_r is
committed; and the parameters such requests are proved with here are generated, not
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
    /// Build a sparse committed-capacity sector instead of sealing one (PoRep; the default at
    /// 32GiB and 64GiB).
    #[arg(long)]
    pub sparse: bool,
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
    /// Cache of generated parameters [default: $XDG_CACHE_HOME/provetop/params]
    #[arg(long, value_name = "DIR")]
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

#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Config file with [engine], [ui] and [serve] tables [default: $XDG_CONFIG_HOME/provetop/config.toml]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

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

    /// Jobs to prove.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub proofs: u64,

    /// Partitions per job; each partition yields one 192-byte proof (a Filecoin workload's
    /// jobs have their proof's: a 32GiB PoRep 10, a SnapDeals update 16, a PoSt 1).
    #[arg(long, value_name = "P", default_value_t = 1)]
    pub partitions: u32,

    /// Jobs the run keeps submitted at once: a number, or auto (enough for every synthesis
    /// worker and device worker to have a partition, with two queued) [default: auto]
    #[arg(long, value_name = "C|auto", default_value = "auto")]
    pub concurrency: Concurrency,

    /// Seed of every witness (each partition derives its own).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Use these bellperson-format parameters instead of generating or caching them.
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,

    /// Where generated parameters are cached [default: $XDG_CACHE_HOME/provetop/params]
    #[arg(long, value_name = "DIR")]
    pub params_cache: Option<PathBuf>,

    /// PoRep: a commit-phase-1 output (Lotus/Curio JSON, or lotus-bench's {"Phase1Out": …}).
    #[arg(long, value_name = "FILE")]
    pub c1: Option<PathBuf>,

    /// A SubmitProofRequest in proto3 JSON (from `provetop gen-vanilla`, or as Curio sends it
    /// to `serve`): proves it (a PoRep's C1 output for its miner and sector, a SnapDeals
    /// update's or a PoSt's vanilla proofs), checked as `serve` checks it. Implies the
    /// workload of its proof kind.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["c1", "sector_size", "prover_id", "sector_id"])]
    pub request: Option<PathBuf>,

    /// Filecoin sector size: 2KiB, 8MiB or 512MiB seals a test sector here when there is no
    /// --c1 (once; cached under $XDG_CACHE_HOME/provetop/porep), which the snap, window-post
    /// and winning-post workloads prove from too; with --c1, checked against the file.
    #[arg(long, value_name = "SIZE")]
    pub sector_size: Option<String>,

    /// PoRep: the miner's prover id (f01000, or 64 hex digits), where the C1 file lacks it;
    /// needed for filecoin-proofs' own verification of the proofs.
    #[arg(long, value_name = "ID")]
    pub prover_id: Option<String>,

    /// PoRep: the sector number, where the C1 file lacks it.
    #[arg(long, value_name = "N")]
    pub sector_id: Option<u64>,

    /// Filecoin's parameter folder (the v28-….params and .vk files of the workload's circuit:
    /// stacked-proof-of-replication, empty-sector-update, proof-of-spacetime-fallback) instead
    /// of parameters generated here.
    #[arg(long, value_name = "DIR")]
    pub params_dir: Option<PathBuf>,

    /// Apply changes during the run: WHEN is seconds from the start (5s, 2.5s) or pN, after the
    /// N-th finished partition; keys are the [engine] fields. Repeatable.
    /// Example: --at 5s:gpu_workers_per_device=3 --at p12:lock=two-lock,prestage=false
    #[arg(long, value_name = "WHEN:KEY=VALUE[,KEY=VALUE…]")]
    pub at: Vec<Scheduled>,

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

    /// Backend: auto (cuda when a GPU is usable, else cpu), cpu, cuda [default: auto]
    #[arg(long, value_name = "auto|cpu|cuda")]
    pub backend: Option<String>,

    /// GPU ordinals to use, comma separated, or `all` [default: all]
    #[arg(long, value_name = "LIST")]
    pub devices: Option<String>,

    /// CPU executors on the cpu backend, each with its own pool [default: 1]
    #[arg(long, value_name = "N")]
    pub cpu_devices: Option<String>,

    /// Workers per device, 1–16 [default: 2]
    #[arg(long, value_name = "N")]
    pub gpu_workers_per_device: Option<String>,

    /// How a device's workers share it: single (one mutex), two-lock (memory + compute), none
    /// [default: single]
    #[arg(long, value_name = "single|two-lock|none")]
    pub lock: Option<String>,

    /// Partitions synthesised at once [default: 2]
    #[arg(long, value_name = "N")]
    pub synthesis_workers: Option<String>,

    /// Threads of the synthesis pool [default: all cores]
    #[arg(long, value_name = "N")]
    pub synthesis_threads: Option<String>,

    /// Threads of the prover pool: B in G2 on the CPU, assembly, verification [default: all cores]
    #[arg(long, value_name = "N")]
    pub prover_threads: Option<String>,

    /// Witness only in synthesis, a, b, c from the circuit's recorded matrices (recorded once,
    /// cached beside the parameters); false builds every linear combination; auto: true but
    /// for the synthetic workload [default: auto]
    #[arg(long, value_name = "true|false|auto")]
    pub precompiled: Option<String>,

    /// Page-lock a/b/c and upload them before the partition's GPU region; auto: true on the
    /// cuda backend [default: auto]
    #[arg(long, value_name = "true|false|auto")]
    pub prestage: Option<String>,

    /// MSM batches without hard synchronisation between them [default: true]
    #[arg(long, value_name = "true|false")]
    pub msm_double_buffer: Option<String>,

    /// How the GPU's MSMs accumulate buckets: xyzz, or batch-affine levels before the XYZZ
    /// pass (slower on the H200; to compare) [default: xyzz]
    #[arg(long, value_name = "xyzz|batch-affine")]
    pub msm_accumulation: Option<String>,

    /// H's MSM over shifted copies of its bases when they fit in VRAM (auto) or over the bases
    /// as they are (off) [default: auto]
    #[arg(long, value_name = "auto|off")]
    pub shifted_bases: Option<String>,

    /// Where B in G2 is computed: cpu (the finalizer) or gpu; auto: gpu on the cuda backend
    /// [default: auto]
    #[arg(long, value_name = "cpu|gpu|auto")]
    pub b_g2_on: Option<String>,

    /// Where the SRS lives: host (streamed), device (resident when it fits), auto [default: auto]
    #[arg(long, value_name = "auto|host|device")]
    pub srs_residency: Option<String>,

    /// Host memory the engine may hold: bytes (or 64GiB) or auto (80 % of available) [default: auto]
    #[arg(long, value_name = "BYTES|auto")]
    pub host_memory_budget: Option<String>,

    /// VRAM the engine may use per device: bytes (or 120GiB) or auto [default: auto]
    #[arg(long, value_name = "BYTES|auto")]
    pub vram_budget: Option<String>,
}

impl EngineArgs {
    /// The `[engine]` flags that were given, as (key, value).
    pub fn config_overrides(&self) -> Vec<(&'static str, String)> {
        let flags = [
            ("backend", &self.backend),
            ("devices", &self.devices),
            ("cpu_devices", &self.cpu_devices),
            ("gpu_workers_per_device", &self.gpu_workers_per_device),
            ("lock", &self.lock),
            ("synthesis_workers", &self.synthesis_workers),
            ("synthesis_threads", &self.synthesis_threads),
            ("prover_threads", &self.prover_threads),
            ("precompiled", &self.precompiled),
            ("prestage", &self.prestage),
            ("msm_double_buffer", &self.msm_double_buffer),
            ("msm_accumulation", &self.msm_accumulation),
            ("shifted_bases", &self.shifted_bases),
            ("b_g2_on", &self.b_g2_on),
            ("srs_residency", &self.srs_residency),
            ("host_memory_budget", &self.host_memory_budget),
            ("vram_budget", &self.vram_budget),
        ];
        flags
            .into_iter()
            .filter_map(|(k, v)| v.clone().map(|v| (k, v)))
            .collect()
    }
}
