//! The arguments of `provetop fleet`.

use clap::Args;
use std::path::PathBuf;

use super::THEME_HELP;

pub const FLEET_HELP: &str = "\
ADDR: HOST:PORT, a bare PORT (loopback) or unix:///PATH of a `provetop serve`, as `attach` takes
it; NAME=ADDR names its row. Without ADDR, the config file's [fleet] rigs:

  [fleet]
  rigs = [{ name = \"rig7\", addr = \"10.0.0.7:9820\", ca = \"ca.pem\", token = \"rig7.token\" }]

Each rig sends one summary a second (provetop.v1.Fleet), not its event history, so one fleet
view watches many rigs. A row shows: the rig's name (else its ADDR); `live`, or `unreachable
HH:MM:SS (N s)` (UTC) within 5 s of its connection dropping, tried again with backoff (0.5 s
doubling to 10 s); its devices with their busy fraction over the last 10 s and VRAM; proofs per
hour by kind over the last minute and the last ten; requests waiting and running by kind and
priority; requests failed since the rig started; WinningPoSt's latency (the last answer and the
median of the last 64); the alerts firing (serve's [alerts], and `rig unreachable`); the
advisor's sentence on the rig's last minute. A rig without the summary (an older provetop, or
cuzk itself) is asked GetStatus instead and its row says `GetStatus only`.

Keys: ↑/↓ (j/k) select · Enter opens the selected rig's full dashboard (what `attach` shows; Esc
or q there comes back to the fleet) · s sorts by name, alerts, proofs/h, queue, failures, WinningPoSt
latency in turn · / filters rows by name, address, kind or alert (Enter keeps, Esc clears) · q
quits.

Without a terminal, --print SECS watches for SECS seconds, then prints one line a rig and the
viewer's own peak memory and CPU time.

Exit codes: 0 quit (or printed), 2 bad usage or input (no rig, a bad ADDR or [fleet] entry).";

#[derive(Args, Debug)]
pub struct FleetArgs {
    /// The rigs: HOST:PORT, PORT, unix:///PATH, or NAME=ADDR [default: the config file's
    /// [fleet] rigs]
    #[arg(value_name = "ADDR")]
    pub addrs: Vec<String>,

    /// The certificate authority (PEM) of the rigs given as ADDR: TLS to each.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<PathBuf>,

    /// The control token the rigs' dashboards present (as `attach --token-file`).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// Without a terminal: watch for SECS seconds, then print each rig's row and the viewer's
    /// peak memory and CPU time.
    #[arg(long, value_name = "SECS")]
    pub print: Option<u64>,

    /// Serves N simulated rigs on consecutive loopback ports from --simulate-port, each
    /// summarising 50,000 partitions an hour, until SIGTERM (for measuring the fleet view).
    #[arg(long, value_name = "N", hide = true)]
    pub simulate: Option<u32>,
    #[arg(long, value_name = "PORT", default_value_t = 19000, hide = true)]
    pub simulate_port: u16,

    /// Config file [default: $XDG_CONFIG_HOME/provetop/config.toml]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[arg(long, value_name = "NAME|PATH", help = THEME_HELP)]
    pub theme: Option<String>,
}
