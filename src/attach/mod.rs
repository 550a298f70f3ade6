//! `provetop attach ADDR`: a running `provetop serve` watched over its `provetop.v1.Telemetry`
//! stream. `client` holds the connection (TCP, TLS or a unix socket) and reconnects; `view` is the
//! dashboard's source over it; `record` writes what arrived into a recording. Without a terminal,
//! `--summary` prints what `replay --summary` would about the server's history, and `--record`
//! records until a signal.

pub mod client;
mod record;
mod view;

use anyhow::{anyhow, Result};
use provetop_telemetry::record::stream::{decode_frame, Relay};
use provetop_telemetry::record::Recording;
use provetop_telemetry::text::printable;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::cli::AttachArgs;
use crate::run::{self, UsageError};
use client::{Client, Incoming, Viewer};

/// How long to wait for the server's first message before saying it has not answered.
const FIRST_WAIT: Duration = Duration::from_secs(30);

/// Whether the command wants the terminal (the dashboard).
pub fn interactive(args: &AttachArgs) -> bool {
    !args.summary && !args.json
}

/// `USER@HOST`, kept to the characters a viewer's name may hold.
fn default_name() -> String {
    let user = std::env::var("USER").unwrap_or_else(|_| "viewer".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let name: String = format!("{}@{}", user, host.trim())
        .trim_end_matches('@')
        .chars()
        .map(|c| match c.is_alphanumeric() || "._@+-".contains(c) {
            true => c,
            false => '-',
        })
        .take(64)
        .collect();
    name
}

/// `--name`, checked as the server checks it.
fn name(args: &AttachArgs) -> Result<String> {
    let Some(n) = &args.name else {
        return Ok(default_name());
    };
    let ok = (1..=64).contains(&n.chars().count())
        && n.chars()
            .all(|c| c.is_alphanumeric() || "._@+-".contains(c));
    if !ok {
        return Err(UsageError(anyhow!("--name {n:?}: 1 to 64 letters, digits or ._@+-")).into());
    }
    Ok(n.clone())
}

/// Watches one server; `from_fleet`: the dashboard was opened from the fleet, and Esc goes back.
pub fn main(
    args: &AttachArgs,
    interactive: bool,
    theme: Option<&str>,
    from_fleet: bool,
) -> Result<i32> {
    let target = run::usage(client::target(&args.addr, args.tls_ca.as_deref()))?;
    let token = match &args.token_file {
        Some(p) => run::usage(crate::token::read(p, "--token-file"))?,
        None => vec![],
    };
    let viewer = Viewer {
        name: name(args)?,
        token,
    };
    let settings = crate::dashboard::settings(args.config.as_deref(), theme)?;
    if !interactive && !args.summary && !args.json && args.record.is_none() {
        return Err(UsageError(anyhow!(
            "without a terminal, attach needs --summary or --record FILE"
        ))
        .into());
    }
    if let Some(path) = &args.record {
        let inputs: Vec<(&str, &std::path::Path)> = args
            .token_file
            .iter()
            .map(|p| ("the token file", p.as_path()))
            .chain(args.tls_ca.iter().map(|p| ("the CA file", p.as_path())))
            .collect();
        let checked = provetop_telemetry::output::check("--record", path, &inputs, args.force);
        run::usage(checked.map_err(Into::into))?;
    }
    let mut client = Client::start(target, viewer)?;
    let first = match client.recv_timeout(FIRST_WAIT) {
        Some(Incoming::Refused { why, answered }) => {
            eprintln!("provetop: cannot watch {}: {}", args.addr, printable(&why));
            let hint = match (&args.tls_ca, answered) {
                (_, true) => None,
                (Some(_), _) if why.contains("certificate") => {
                    Some("the server's certificate must be signed by the authority in --tls-ca")
                }
                (Some(_), _) => Some("is `provetop serve --tls-cert` listening there?"),
                (None, _) => Some(
                    "is `provetop serve` listening there? (one with --tls-cert needs --tls-ca)",
                ),
            };
            if let Some(h) = hint {
                eprintln!("provetop: {h}");
            }
            return Ok(1);
        }
        Some(m) => view::hello(m).map_err(|e| anyhow!("{}: {e}", args.addr))?,
        None => {
            eprintln!(
                "provetop: cannot watch {}: no answer in {} s",
                args.addr,
                FIRST_WAIT.as_secs()
            );
            return Ok(1);
        }
    };
    let recorder = args
        .record
        .as_deref()
        .map(|p| record::Recorder::new(p, args.force));
    if args.summary || args.json {
        return summary(client, first, args);
    }
    if !interactive {
        return headless(client, first, recorder, &args.addr);
    }
    let mut app = crate::dashboard::app(
        first.session.clone(),
        settings,
        crate::dashboard::options(args.config.clone(), 1),
    );
    app.ui.esc_leaves = from_fleet;
    let mut source = view::Attached::new(client, &args.addr, first, recorder, &mut app);
    crate::dashboard::show(&mut app, &mut source)?;
    if let Some(line) = source.finish() {
        eprintln!("{line}");
    }
    Ok(0)
}

/// The most history `--summary` keeps as received (compressed frames): a quarter of its memory
/// bound up to this; decoding it gets the rest, so the whole stays within the bound however
/// much a server sends.
const SUMMARY_RECEIVED: u64 = 64 << 20;

/// `--summary`: the history, up to where it turns live, into a recording in memory, then the
/// summary `replay --summary` prints of a file.
fn summary(mut client: Client, first: view::Hello, args: &AttachArgs) -> Result<i32> {
    let bound = args
        .max_memory
        .unwrap_or(provetop_telemetry::record::DEFAULT_MAX_MEMORY);
    let received = (bound / 4).min(SUMMARY_RECEIVED);
    let mut relay = Relay::new(Vec::new(), &first.header)?;
    let (mut kept, mut past) = (0u64, 0u64);
    loop {
        match client.recv_timeout(FIRST_WAIT) {
            Some(Incoming::Frame(b)) if kept + b.len() as u64 > received => {
                past += b.len() as u64;
            }
            Some(Incoming::Frame(b)) => match decode_frame(&b) {
                Ok(rs) => {
                    kept += b.len() as u64;
                    relay.push(&b, &rs)?
                }
                Err(e) => eprintln!("provetop: {}: a damaged frame: {e}", args.addr),
            },
            Some(Incoming::CaughtUp) => break,
            Some(Incoming::Lost { why, .. }) => {
                eprintln!(
                    "provetop: lost {} before its history was through: {}",
                    args.addr,
                    printable(&why)
                );
                return Ok(1);
            }
            Some(_) => {}
            None => {
                eprintln!(
                    "provetop: {}: no frame in {} s",
                    args.addr,
                    FIRST_WAIT.as_secs()
                );
                return Ok(1);
            }
        }
    }
    if past > 0 {
        eprintln!(
            "provetop: {}: the history past its first {kept} bytes ({past} bytes more) is \
             left out of the summary: the bound on its memory (raise it with --max-memory)",
            args.addr
        );
    }
    let bytes = relay.finish()?;
    // With --record, the history received is kept too.
    if let Some(path) = &args.record {
        use std::io::Write;
        let mut f = provetop_telemetry::output::create_in_place(path, args.force)
            .map_err(|e| anyhow!("--record {}: {e}", path.display()))?;
        f.write_all(&bytes)?;
        f.sync_data()?;
    }
    let mut rec = Recording::from_reader(std::io::Cursor::new(bytes))
        .map_err(|e| anyhow!("{}: the history received: {e}", args.addr))?;
    rec.set_max_memory(bound - received);
    crate::replay::summary(rec, &args.addr, args.json)
}

/// Without a terminal: records what arrives until SIGINT or SIGTERM, saying on stderr when the
/// server is lost and back.
fn headless(
    mut client: Client,
    first: view::Hello,
    mut recorder: Option<record::Recorder>,
    addr: &str,
) -> Result<i32> {
    let stop = run::stop_flag()?;
    let mut next = Some(first);
    let mut session = String::new();
    while !stop.load(Ordering::SeqCst) {
        if let Some(h) = next.take() {
            let what = match (session.is_empty(), h.session_id == session, h.resumed) {
                (true, _, _) => "watching",
                (false, false, _) => "the server restarted: a new session",
                (false, true, true) => "back: resumed",
                (false, true, false) => {
                    "back, with a gap (the server no longer held all that was missed)"
                }
            };
            eprintln!("attach: {addr}: {what} · {}", printable(&h.note));
            if h.session_id != session {
                session.clone_from(&h.session_id);
                if let Some(r) = &mut recorder {
                    if let Some(w) = r.session(&h.header)? {
                        eprintln!("attach: recorded {} bytes to {}", w.bytes, w.path.display());
                    }
                }
            }
            continue;
        }
        match client.recv_timeout(Duration::from_millis(200)) {
            Some(m @ Incoming::Hello { .. }) => {
                next = Some(view::hello(m).map_err(|e| anyhow!("{addr}: {e}"))?)
            }
            Some(Incoming::Frame(b)) => match decode_frame(&b) {
                Ok(rs) => {
                    if let Some(r) = &mut recorder {
                        r.frame(&b, &rs)?;
                    }
                }
                Err(e) => eprintln!("attach: {addr}: a damaged frame: {e}"),
            },
            Some(Incoming::CaughtUp) => eprintln!("attach: {addr}: caught up, live"),
            Some(Incoming::Lost { why, retry_in }) => {
                eprintln!(
                    "attach: lost {addr}: {}; retrying in {:.1} s",
                    printable(&why),
                    retry_in.as_secs_f64()
                );
            }
            Some(Incoming::Refused { why, .. } | Incoming::Reply { text: why, .. }) => {
                eprintln!("attach: {addr}: {}", printable(&why))
            }
            None => {}
        }
    }
    if let Some(r) = recorder {
        if let Some(w) = r.finish()? {
            eprintln!(
                "attach: recorded {} bytes to {} ({} not received)",
                w.bytes,
                w.path.display(),
                w.lost.describe()
            );
        }
    }
    Ok(0)
}
