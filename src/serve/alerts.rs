//! Alerts evaluated inside `serve`, so they fire with no viewer open: the `[alerts]` table's
//! thresholds, each held for a time before it fires and cleared only once the value is back
//! past a lower mark for as long (hysteresis). A thread of its own reads the rig's summary once a
//! second; each firing and clearing is logged into the session (every viewer and recording sees
//! it), shown in the fleet, and handed to `notify` (a webhook in Alertmanager's JSON, or a
//! command), which sends from a thread of its own: nothing here waits on the network.

mod notify;

use anyhow::{anyhow, bail, Result};
use parking_lot::Mutex;
use provetop_engine::pipeline::EngineHandle;
use provetop_proto::provetop::v1::RigSummary;
use provetop_telemetry::{Event, LogLine};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use notify::Notifier;

/// The alerts a rig can raise, by the name the fleet, the log and the webhook use.
pub const GPU_IDLE: &str = "ProvetopGpuIdleWhileQueued";
pub const FAILURES: &str = "ProvetopProofFailures";
pub const WINNING_LATE: &str = "ProvetopWinningPostSlow";
pub const VRAM: &str = "ProvetopVramNearBudget";
pub const HOST_MEMORY: &str = "ProvetopHostMemoryNearBudget";

/// A device counts as idle below this busy fraction.
const IDLE_BELOW: f64 = 0.05;

/// `[alerts]`: which conditions are watched, their bounds and hold times, and whom to tell.
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    /// How long a condition must hold before it fires, and be gone before it clears.
    pub hold: Duration,
    /// `window = "10m"`: how far back failures and WinningPoSt latencies are judged.
    pub window: Duration,
    /// `gpu_idle = true`: every device idle while requests wait.
    pub gpu_idle: bool,
    /// `failures = N`: at least N requests answered FAILED within the window.
    pub failures: Option<u64>,
    /// `winning_post_latency = "2s"`: a WinningPoSt answer within the window took longer.
    pub winning_latency: Option<Duration>,
    /// `vram_fraction = 0.95`: a device's VRAM in use above this share of its total.
    pub vram_fraction: Option<f64>,
    /// `host_memory_fraction = 0.9`: the host's memory in use above this share.
    pub host_fraction: Option<f64>,
    /// `webhook = "http://host:port/path"`: Alertmanager's webhook JSON, POSTed.
    pub webhook: Option<String>,
    /// `command = "/path/to/program"`: run with the same JSON on its standard input.
    pub command: Option<String>,
    /// `timeout = "5s"`, `retries = 3`: each delivery's bound.
    pub timeout: Duration,
    pub retries: u32,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            hold: Duration::from_secs(30),
            window: Duration::from_secs(600),
            gpu_idle: false,
            failures: None,
            winning_latency: None,
            vram_fraction: None,
            host_fraction: None,
            webhook: None,
            command: None,
            timeout: Duration::from_secs(5),
            retries: 3,
        }
    }
}

impl Rules {
    /// The `[alerts]` table; an unknown key or a bad value names the key.
    pub fn from_table(t: &toml::Table) -> Result<Rules> {
        let mut r = Rules::default();
        for (key, v) in t {
            let text = || {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| anyhow!("{key}: expected a string"))
            };
            let time = || crate::cli::parse_duration(&text()?).map_err(|e| anyhow!("{key}: {e}"));
            let fraction = || match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
                Some(f) if f > 0.0 && f <= 1.0 => Ok(f),
                _ => Err(anyhow!("{key}: expected a fraction in (0, 1], got {v}")),
            };
            match key.as_str() {
                "hold" => r.hold = time()?,
                "window" => r.window = time()?,
                "gpu_idle" => {
                    r.gpu_idle = v
                        .as_bool()
                        .ok_or_else(|| anyhow!("{key}: expected true or false"))?
                }
                "failures" => match v.as_integer() {
                    Some(n) if n >= 1 => r.failures = Some(n as u64),
                    _ => bail!("{key}: expected a count of at least 1, got {v}"),
                },
                "winning_post_latency" => r.winning_latency = Some(time()?),
                "vram_fraction" => r.vram_fraction = Some(fraction()?),
                "host_memory_fraction" => r.host_fraction = Some(fraction()?),
                "webhook" => {
                    let url = text()?;
                    notify::parse_url(&url).map_err(|e| anyhow!("{key}: {e}"))?;
                    r.webhook = Some(url)
                }
                "command" => r.command = Some(text()?),
                "timeout" => r.timeout = time()?,
                "retries" => match v.as_integer() {
                    Some(n @ 0..=10) => r.retries = n as u32,
                    _ => bail!("{key}: expected 0 to 10, got {v}"),
                },
                _ => bail!(
                    "unknown key `{key}`; [alerts] takes hold, window, gpu_idle, failures, \
                     winning_post_latency, vram_fraction, host_memory_fraction, webhook, \
                     command, timeout and retries"
                ),
            }
        }
        Ok(r)
    }

    /// Whether anything is watched.
    pub fn any(&self) -> bool {
        self.gpu_idle
            || self.failures.is_some()
            || self.winning_latency.is_some()
            || self.vram_fraction.is_some()
            || self.host_fraction.is_some()
    }
}

/// One condition's state: the value crosses `fire_at` and stays for `hold` to fire; it must be
/// below `clear_below` for `hold` to clear.
#[derive(Clone, Debug)]
pub struct Threshold {
    pub fire_at: f64,
    pub clear_below: f64,
    pub hold: Duration,
    firing: bool,
    since: Option<Instant>,
}

/// What a step of a threshold did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Fired,
    Cleared,
}

impl Threshold {
    pub fn new(fire_at: f64, clear_below: f64, hold: Duration) -> Threshold {
        Threshold {
            fire_at,
            clear_below,
            hold,
            firing: false,
            since: None,
        }
    }

    /// Takes the value at `now`; says when it fired or cleared.
    pub fn step(&mut self, value: f64, now: Instant) -> Option<Change> {
        let crossing = match self.firing {
            false => value >= self.fire_at,
            true => value < self.clear_below,
        };
        if !crossing {
            self.since = None;
            return None;
        }
        let since = *self.since.get_or_insert(now);
        if now.duration_since(since) < self.hold {
            return None;
        }
        self.firing = !self.firing;
        self.since = None;
        Some(if self.firing {
            Change::Fired
        } else {
            Change::Cleared
        })
    }

    pub fn firing(&self) -> bool {
        self.firing
    }
}

/// The alerts firing now, by name, for the fleet's summary.
#[derive(Default)]
pub struct Firing(Mutex<Vec<String>>);

impl Firing {
    pub fn names(&self) -> Vec<String> {
        self.0.lock().clone()
    }
}

/// What the evaluator reads each second: the rig's summary, and over the rules' window the
/// slowest WinningPoSt answer (ms) and the requests failed.
pub struct Reading {
    pub summary: RigSummary,
    pub slowest_winning_ms: u64,
    pub failed: u64,
}

/// A watched condition: its name, its threshold, and how to read its value and describe it.
struct Watch {
    name: &'static str,
    threshold: Threshold,
    value: fn(&Reading) -> f64,
    what: String,
}

/// The conditions `rules` asks for.
fn watches(rules: &Rules) -> Vec<Watch> {
    let h = rules.hold;
    let mut w = vec![];
    if rules.gpu_idle {
        w.push(Watch {
            name: GPU_IDLE,
            // 1 when every device is idle while requests wait.
            threshold: Threshold::new(1.0, 1.0, h),
            value: |r| {
                let s = &r.summary;
                let waiting = s.queues.iter().any(|q| q.pending > 0);
                let idle = !s.gpus.is_empty() && s.gpus.iter().all(|g| g.busy < IDLE_BELOW);
                f64::from(u8::from(waiting && idle))
            },
            what: "every device idle while requests wait".into(),
        });
    }
    if let Some(n) = rules.failures {
        w.push(Watch {
            name: FAILURES,
            threshold: Threshold::new(n as f64, n as f64, h),
            value: |r| r.failed as f64,
            what: format!("{n} or more requests failed within the window"),
        });
    }
    if let Some(b) = rules.winning_latency {
        let ms = b.as_millis() as f64;
        w.push(Watch {
            name: WINNING_LATE,
            // Cleared a tenth under the bound: a latency hovering at it does not flap.
            threshold: Threshold::new(ms, ms * 0.9, h),
            value: |r| r.slowest_winning_ms as f64,
            what: format!("a WinningPoSt answer took over {} ms", b.as_millis()),
        });
    }
    if let Some(f) = rules.vram_fraction {
        w.push(Watch {
            name: VRAM,
            threshold: Threshold::new(f, f - 0.05, h),
            value: |r| {
                r.summary
                    .gpus
                    .iter()
                    .filter(|g| g.vram_total_bytes > 0)
                    .map(|g| g.vram_used_bytes as f64 / g.vram_total_bytes as f64)
                    .fold(0.0, f64::max)
            },
            what: format!("a device's VRAM over {:.0} % in use", f * 100.0),
        });
    }
    if let Some(f) = rules.host_fraction {
        w.push(Watch {
            name: HOST_MEMORY,
            threshold: Threshold::new(f, f - 0.05, h),
            value: |r| match r.summary.host_total_bytes {
                0 => 0.0,
                t => r.summary.host_used_bytes as f64 / t as f64,
            },
            what: format!("the host's memory over {:.0} % in use", f * 100.0),
        });
    }
    w
}

/// Starts the evaluator: once a second it reads the rig (`read` over the rules' window), steps every watched condition, and
/// on a change logs it into the session, updates `firing` and hands it to the notifier. Ends
/// when `stop` turns true.
pub fn start(
    rules: Rules,
    engine: EngineHandle,
    firing: Arc<Firing>,
    read: impl Fn(Duration) -> Reading + Send + 'static,
    stop: Arc<AtomicBool>,
) -> std::io::Result<()> {
    if !rules.any() {
        return Ok(());
    }
    let mut watches = watches(&rules);
    let notifier = Notifier::start(&rules)?;
    let instance = hostname();
    std::thread::Builder::new()
        .name("serve-alerts".into())
        .spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_secs(1));
                let s = read(rules.window);
                let now = Instant::now();
                let changes: Vec<(usize, Change, f64)> = (0..watches.len())
                    .filter_map(|i| {
                        let value = (watches[i].value)(&s);
                        Some((i, watches[i].threshold.step(value, now)?, value))
                    })
                    .collect();
                if !changes.is_empty() {
                    *firing.0.lock() = watches_firing(&watches);
                }
                for (i, change, value) in changes {
                    let w = &watches[i];
                    let (level, verb) = match change {
                        Change::Fired => ("WARN", "firing"),
                        Change::Cleared => ("INFO", "cleared"),
                    };
                    let message = format!("alert {verb}: {} ({}; now {value})", w.name, w.what);
                    tracing::warn!("serve: {message}");
                    engine.bus().publish(Event::Log(LogLine {
                        t: engine.clock().now(),
                        level: level.into(),
                        message,
                    }));
                    if let Some(n) = &notifier {
                        n.send(notify::Alert {
                            name: w.name,
                            firing: change == Change::Fired,
                            summary: w.what.clone(),
                            instance: instance.clone(),
                        });
                    }
                }
            }
        })?;
    Ok(())
}

fn watches_firing(watches: &[Watch]) -> Vec<String> {
    watches
        .iter()
        .filter(|w| w.threshold.firing())
        .map(|w| w.name.to_string())
        .collect()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
