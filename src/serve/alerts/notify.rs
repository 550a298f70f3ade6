//! Delivers alerts: POSTed to a webhook in Alertmanager's webhook JSON (version 4), or given to
//! a command on its standard input. A thread of its own sends them in order through a bounded
//! queue; the evaluator never waits (a full queue drops the alert and says so). Each delivery
//! has a timeout and a bounded number of retries with backoff.

use anyhow::{anyhow, bail, Context, Result};
use crossbeam_channel::{bounded, Sender, TrySendError};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::Rules;

/// Alerts waiting to be sent at most.
const QUEUE: usize = 64;

/// One change of one alert.
#[derive(Clone, Debug)]
pub struct Alert {
    pub name: &'static str,
    pub firing: bool,
    pub summary: String,
    pub instance: String,
}

/// Where alerts go.
#[derive(Clone, Debug)]
enum Target {
    Webhook {
        host: String,
        port: u16,
        path: String,
    },
    Command(String),
}

/// The sending thread's queue.
pub struct Notifier {
    tx: Sender<(Alert, SystemTime)>,
}

/// `http://host[:port]/path` → (host, port, path). Only plain HTTP: a local relay or
/// Alertmanager on the rig's network.
pub fn parse_url(url: &str) -> Result<(String, u16, String)> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("expected http://HOST[:PORT]/PATH, got {url:?}");
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().map_err(|_| anyhow!("bad port in {url:?}"))?),
        None => (authority, 80),
    };
    if host.is_empty() {
        bail!("no host in {url:?}");
    }
    let path = if path.is_empty() { "/" } else { path };
    Ok((host.to_string(), port, path.to_string()))
}

impl Notifier {
    /// A sender for `rules`' webhook or command; None when it names neither.
    pub fn start(rules: &Rules) -> std::io::Result<Option<Notifier>> {
        let target = match (&rules.webhook, &rules.command) {
            (Some(url), _) => match parse_url(url) {
                Ok((host, port, path)) => Target::Webhook { host, port, path },
                Err(_) => return Ok(None),
            },
            (None, Some(c)) => Target::Command(c.clone()),
            (None, None) => return Ok(None),
        };
        let (tx, rx) = bounded::<(Alert, SystemTime)>(QUEUE);
        let (timeout, retries) = (rules.timeout, rules.retries);
        std::thread::Builder::new()
            .name("serve-notify".into())
            .spawn(move || {
                for (alert, at) in rx {
                    let body = alertmanager_json(&alert, at).to_string();
                    let mut wait = Duration::from_millis(500);
                    for attempt in 0..=retries {
                        match deliver(&target, &body, timeout) {
                            Ok(()) => {
                                tracing::info!("serve: alert {} delivered", alert.name);
                                break;
                            }
                            Err(e) if attempt == retries => {
                                tracing::warn!(
                                    "serve: alert {} not delivered after {} tries: {e:#}",
                                    alert.name,
                                    retries + 1
                                );
                            }
                            Err(e) => {
                                tracing::info!("serve: alert {}: {e:#}; retrying", alert.name);
                                std::thread::sleep(wait);
                                wait = (wait * 2).min(Duration::from_secs(10));
                            }
                        }
                    }
                }
            })?;
        Ok(Some(Notifier { tx }))
    }

    /// Queues `alert`; never waits.
    pub fn send(&self, alert: Alert) {
        if let Err(TrySendError::Full((a, _))) = self.tx.try_send((alert, SystemTime::now())) {
            tracing::warn!(
                "serve: alert {} dropped: {QUEUE} alerts wait already",
                a.name
            );
        }
    }
}

/// Alertmanager's webhook payload (version 4) for one alert.
pub fn alertmanager_json(a: &Alert, at: SystemTime) -> serde_json::Value {
    let status = if a.firing { "firing" } else { "resolved" };
    let labels = json!({"alertname": a.name, "instance": a.instance, "severity": "warning",
                        "job": "provetop"});
    let when = rfc3339(at);
    let (starts, ends) = match a.firing {
        true => (when.clone(), "0001-01-01T00:00:00Z".to_string()),
        false => (when.clone(), when),
    };
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname=\"{}\"}}", a.name),
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "provetop",
        "groupLabels": {"alertname": a.name},
        "commonLabels": labels,
        "commonAnnotations": {"summary": a.summary},
        "externalURL": "",
        "alerts": [{
            "status": status,
            "labels": labels,
            "annotations": {"summary": a.summary},
            "startsAt": starts,
            "endsAt": ends,
            "generatorURL": "",
            "fingerprint": format!("{:016x}", fingerprint(a.name, &a.instance)),
        }],
    })
}

/// A stable id of (alert, instance): FNV-1a.
fn fingerprint(name: &str, instance: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in name.bytes().chain([0]).chain(instance.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    h
}

/// `2026-12-05T08:00:00Z` (UTC, whole seconds).
pub fn rfc3339(t: SystemTime) -> String {
    let unix = t
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let (y, mo, d, h, mi, s) = provetop_telemetry::record::civil_utc(unix.floor());
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

fn deliver(target: &Target, body: &str, timeout: Duration) -> Result<()> {
    match target {
        Target::Webhook { host, port, path } => post(host, *port, path, body, timeout),
        Target::Command(c) => run(c, body, timeout),
    }
}

/// One HTTP/1.1 POST; a 2xx answer is delivered.
fn post(host: &str, port: u16, path: &str, body: &str, timeout: Duration) -> Result<()> {
    let addr = (host, port)
        .to_socket_addrs()
        .with_context(|| format!("resolving {host}"))?
        .next()
        .ok_or_else(|| anyhow!("{host} has no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, timeout)
        .with_context(|| format!("connecting to {addr}"))?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut head = [0u8; 64];
    let n = s.read(&mut head).context("reading the answer")?;
    let line = String::from_utf8_lossy(&head[..n]);
    let code = line.split_whitespace().nth(1).unwrap_or("");
    match code.starts_with('2') {
        true => Ok(()),
        false => bail!(
            "answered {:?}",
            line.lines().next().unwrap_or("nothing").trim()
        ),
    }
}

/// Runs `command` (through `sh -c`) with `body` on its standard input; exit 0 is delivered. One
/// still running after `timeout` is killed.
fn run(command: &str, body: &str, timeout: Duration) -> Result<()> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {command:?}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(body.as_bytes());
    }
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return match status.success() {
                true => Ok(()),
                false => Err(anyhow!("{command:?} exited with {status}")),
            };
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{command:?} still running after {} s", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
