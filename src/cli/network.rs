//! The arguments of the daemon and its viewers: `serve` (cuzk's interface and the telemetry
//! service beside it) and `attach`.

use clap::Args;
use provetop_telemetry::config::Budget;
use std::path::PathBuf;

use super::{
    parse_duration, Concurrency, EngineArgs, EngineFlags, SessionArgs, WorkloadArgs, THEME_HELP,
};

/// serve's own workload: what the jobs that viewers submit prove.
const VIEWER_JOBS: &str =
    "Jobs viewers submit (n in `attach --token-file`, `bench --server --token-file`)";

pub const SERVE_AFTER_HELP: &str = "\
Beside cuzk.v1.ProvingEngine the listener offers provetop.v1.Telemetry: the event stream that
`provetop attach` shows (the last --history, then live), and changes from viewers holding the
control token.

Exit codes: 0 stopped (SIGTERM or SIGINT) with every request answered, 1 a proof failed,
  2 bad usage, 3 requests left unfinished when --drain-timeout ran out (or a second signal).";

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Where to listen: HOST:PORT, a bare PORT (loopback) or unix:///PATH (owner-only socket).
    /// Other than loopback, anyone who reaches it can submit proofs: a warning says so.
    /// [default: the config file's [serve] listen, else 127.0.0.1:9820]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Seconds that open requests get to finish after SIGTERM before the server exits.
    /// [default: the config file's [serve] drain_timeout, else 60]
    #[arg(long, value_name = "SECONDS")]
    pub drain_timeout: Option<u64>,

    /// Host memory for parameter sets kept hot (loaded, a proof starts at once): `auto` (half the
    /// memory available at start), or a size such as 64GiB. A set that does not fit moves the
    /// least recently used sets no proof is using to warm (their files mapped) and is refused
    /// when the sets in use leave no room. [default: the config file's [serve] srs_budget, else
    /// auto]
    #[arg(long, value_name = "SIZE", value_parser = parse_srs_budget)]
    pub srs_budget: Option<Budget>,

    /// A file holding the token that lets `provetop attach --token-file` viewers change the
    /// engine (settings, jobs, marks); without one every viewer is read-only. The file must be
    /// readable by its owner only. [default: the config file's [serve] control_token_file]
    #[arg(long, value_name = "FILE")]
    pub control_token_file: Option<PathBuf>,

    /// Telemetry a viewer that attaches is sent first: the last 90s, 10m, 1h (at most 64 MiB of
    /// frames). [default: the config file's [serve] history, else 10m]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub history: Option<std::time::Duration>,

    /// Serve over TLS with this certificate chain (PEM); needs --tls-key. [default: the config
    /// file's [serve] tls_cert]
    #[arg(long, value_name = "PEM")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM). [default: the config file's [serve] tls_key]
    #[arg(long, value_name = "PEM")]
    pub tls_key: Option<PathBuf>,

    /// Requests the engine works on at once (a critical one goes at once, past this; a low one
    /// only when nothing else runs): a number, or auto (enough for every synthesis worker and
    /// device worker to have a partition, with two queued) [default: auto]
    #[arg(long, value_name = "N|auto", default_value = "auto")]
    pub in_flight: Concurrency,

    /// Prove with parameters made here (test rigs, benchmarks, CI) instead of Filecoin's from
    /// --params-dir: their proofs verify only against this machine's keys, never on chain. The
    /// log, GetStatus and the dashboard's header say so.
    #[arg(long, conflicts_with = "params_dir")]
    pub test_params: bool,

    /// Serve cuzk's status page (`GET /status`, JSON) at ADDR: HOST:PORT or a bare PORT
    /// (loopback); off by default. [default: the config file's [serve] status_listen]
    #[arg(long, value_name = "ADDR")]
    pub status_listen: Option<String>,

    #[command(flatten, next_help_heading = VIEWER_JOBS)]
    pub workload: WorkloadArgs,

    #[command(flatten, next_help_heading = "Files, telemetry and recording")]
    pub session: SessionArgs,

    #[command(flatten)]
    pub engine: EngineFlags,
}

impl ServeArgs {
    /// The engine serve starts: its settings, and the workload of the jobs viewers submit.
    pub fn engine_args(&self) -> EngineArgs {
        EngineArgs::new(&self.session, &self.workload, &self.engine)
    }
}

fn parse_srs_budget(s: &str) -> Result<Budget, String> {
    provetop_telemetry::config::parse_budget(s)
}

pub const ATTACH_HELP: &str = "\
ADDR: HOST:PORT, a bare PORT (loopback), or unix:///PATH (serve's socket). Without --tls-ca the
stream is plaintext, like cuzk's interface: beyond loopback, serve with --tls-cert/--tls-key and
attach with --tls-ca.

When the server is lost the dashboard keeps what it shows and says so, and reconnects when the
server is back (resuming where it was, or starting over if the server restarted). Without a
terminal, attach needs --summary or --record FILE (recording until SIGINT or SIGTERM).

Exit codes: 0 quit (or summary printed, or recording stopped), 1 the server could not be watched
(unreachable, refused, a certificate not signed by --tls-ca), 2 bad usage or input.";

#[derive(Args, Debug)]
pub struct AttachArgs {
    /// The server: HOST:PORT, PORT (loopback) or unix:///PATH.
    #[arg(value_name = "ADDR")]
    pub addr: String,

    /// A file holding the server's control token (readable by its owner only): settings, jobs
    /// and marks from this dashboard are then taken, and logged as made by attach:NAME.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// This viewer's name in the server's log (letters, digits and ._@+-) [default: USER@HOST]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Record what this viewer receives into FILE (a later server session goes on in
    /// FILE-2.ptrec, …); replay it with `provetop replay`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Let --record overwrite an existing file.
    #[arg(long, requires = "record")]
    pub force: bool,

    /// Print what `replay --summary` would say about the server's history (its last --history)
    /// and exit.
    #[arg(long)]
    pub summary: bool,

    /// The summary as one JSON object (the keys of `replay --summary --json`); implies --summary.
    #[arg(long)]
    pub json: bool,

    /// Connect over TLS, trusting the server's certificate only if this certificate authority
    /// (PEM) signed it.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<PathBuf>,

    /// Config file for the [ui] table (theme, keys) [default: $XDG_CONFIG_HOME/provetop/config.toml]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[arg(long, value_name = "NAME|PATH", help = THEME_HELP)]
    pub theme: Option<String>,

    /// Memory the history may take with --summary (bytes, or 2GiB): a quarter of it, at most
    /// 64 MiB, for the history as received (what lies past that is left out, and said), the
    /// rest for decoding it [default: 512MiB]
    #[arg(long, value_name = "BYTES", value_parser = super::parse_max_memory)]
    pub max_memory: Option<u64>,
}
