//! cuzk's status page: `GET /status` (JSON, its schema: `uptime_secs`, `memory`, `synthesis`,
//! `pipelines`, `gpu_workers`, `allocations`, `counters`, `buffers`) with provetop's own
//! fields under `provetop`, on `--status-listen` (off unless set), served by the same HTTP
//! server as the Prometheus metrics. Also cuzk's metric names for that server's `/metrics`.

use provetop_telemetry::export::prometheus::{Pages, METRICS_TYPE};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::board::{Board, PartState};
use super::cuzk_metrics;
use super::jobs::Jobs;

/// What the page reads: the request table, the partitions' board, the start.
pub struct StatusPage {
    pub jobs: Arc<Jobs>,
    pub board: Option<Arc<Board>>,
    pub started: Instant,
}

/// cuzk's metric names, for the exporter's `/metrics` and `GetMetrics`.
pub struct CuzkMetrics {
    pub jobs: Arc<Jobs>,
    pub started: Instant,
}

impl CuzkMetrics {
    /// The text exposition of cuzk's series now.
    pub fn render(&self) -> String {
        let queues = self.jobs.queues();
        let kinds: Vec<&'static str> = queues.iter().map(|q| q.0).collect();
        let gauges = cuzk_metrics::Gauges {
            queue_depth: queues.iter().map(|q| u64::from(q.1)).sum(),
            running_jobs: queues.iter().map(|q| u64::from(q.2)).sum(),
            gpu_workers: self
                .jobs
                .engine
                .status()
                .devices
                .iter()
                .map(|d| d.workers as u64)
                .sum(),
            uptime_seconds: self.started.elapsed().as_secs(),
        };
        cuzk_metrics::render(&self.jobs.tally(), &kinds, &gauges)
    }
}

impl Pages for CuzkMetrics {
    fn page(&self, path: &str) -> Option<(&'static str, String)> {
        (path == "/metrics").then(|| (METRICS_TYPE, self.render()))
    }
}

impl Pages for StatusPage {
    fn page(&self, path: &str) -> Option<(&'static str, String)> {
        (path == "/status").then(|| ("application/json", self.json().to_string()))
    }
}

/// Serves the status page at `listen` (`--status-listen`: HOST:PORT, or a bare PORT on
/// loopback), warning when other hosts can reach it. A bad or busy address is bad usage.
pub fn start(
    listen: &str,
    jobs: Arc<Jobs>,
    started: Instant,
) -> anyhow::Result<provetop_telemetry::export::prometheus::PageServer> {
    use provetop_telemetry::export::prometheus as prom;
    let usage = |e: String| crate::run::UsageError(anyhow::anyhow!("--status-listen {e}"));
    let addr = prom::parse_addr(listen).map_err(usage)?;
    let bus = jobs.engine.bus();
    let board = match bus.is_enabled() {
        true => Some(Board::start(bus)?),
        false => None,
    };
    let page = Arc::new(StatusPage {
        jobs,
        board,
        started,
    });
    let server = prom::PageServer::start(addr, page)
        .map_err(|e| usage(format!("{addr}: cannot listen: {e}")))?;
    let at = server.local_addr();
    eprintln!("serve: status page at http://{at}/status");
    tracing::info!("serve: status page at http://{at}/status");
    if let Some(w) = prom::exposure_warning(at) {
        tracing::warn!("serve: status page: {w}");
        eprintln!("serve: warning: status page: {w}");
    }
    Ok(server)
}

/// `MemTotal` and `MemAvailable` of /proc/meminfo, in bytes (0 where unknown).
fn memory() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map_or(0, |kb| kb * 1024)
    };
    (field("MemTotal:"), field("MemAvailable:"))
}

/// The ordinal in a device's name (`gpu1` → 1).
fn ordinal(name: &str) -> u64 {
    let digits: String = name.chars().filter(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(0)
}

impl StatusPage {
    /// The page's JSON now.
    pub fn json(&self) -> Value {
        let jobs = &self.jobs;
        let engine = jobs.engine.status();
        let (total, available) = memory();
        let mut synthesizing = engine.synthesizing;
        let now = Instant::now();
        // Partitions on a device, by device, for the workers' rows.
        let mut on_device: BTreeMap<String, Vec<(String, u32, f64)>> = BTreeMap::new();
        let pipelines: Vec<Value> = jobs
            .running()
            .into_iter()
            .map(|r| {
                let parts = match &self.board {
                    Some(b) => b.partitions(r.engine_job, r.partitions, &mut synthesizing),
                    None => vec![Default::default(); r.partitions as usize],
                };
                let done = parts
                    .iter()
                    .filter(|p| p.state == PartState::Done)
                    .count()
                    .max(r.done as usize);
                let rows: Vec<Value> = parts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        if let (PartState::Gpu, Some(d)) = (p.state, &p.device) {
                            let busy = p.since.map_or(0.0, |s| (now - s).as_secs_f64());
                            on_device.entry(d.clone()).or_default().push((
                                r.job_id.clone(),
                                i as u32,
                                busy,
                            ));
                        }
                        json!({"index": i, "state": p.state.name(), "synth_ms": p.synth_ms,
                               "gpu_ms": p.gpu_ms})
                    })
                    .collect();
                json!({
                    "job_id": r.job_id,
                    "proof_kind": r.kind,
                    "started_secs_ago": (now - r.since).as_secs(),
                    "total_partitions": r.partitions,
                    "partitions_done": done,
                    "partitions": rows,
                })
            })
            .collect();
        let mut gpu_workers = vec![];
        for d in &engine.devices {
            let mut busy = on_device.remove(&d.name).unwrap_or_default().into_iter();
            for _ in 0..d.workers {
                let mut row = match busy.next() {
                    Some((job, partition, secs)) => json!({
                        "state": "proving", "current_job": job, "current_partition": partition,
                        "busy_secs": secs}),
                    None => json!({"state": "idle", "current_job": null,
                                   "current_partition": null, "busy_secs": 0.0}),
                };
                row["worker_id"] = json!(gpu_workers.len());
                row["gpu_ordinal"] = json!(ordinal(&d.name));
                row["device"] = json!(d.name);
                gpu_workers.push(row);
            }
        }
        let in_use = jobs.in_use();
        let sets = jobs.params.list();
        // A recorded circuit is evicted with its parameters, so it is evictable when they are.
        let pce: Vec<Value> = sets
            .iter()
            .filter_map(|s| {
                let users = in_use.get(&s.circuit_id).copied().unwrap_or(0);
                Some(json!({
                    "circuit_id": s.circuit_id,
                    "bytes": s.recorded_bytes?,
                    "last_used_secs_ago": jobs.params.last_used(&s.circuit_id)
                        .map(|t| (now - t).as_secs()),
                    "evictable": users == 0,
                }))
            })
            .collect();
        let srs: Vec<Value> = sets
            .into_iter()
            .map(|s| {
                let users = in_use.get(&s.circuit_id).copied().unwrap_or(0);
                json!({
                    "circuit_id": s.circuit_id,
                    "bytes": s.bytes,
                    "last_used_secs_ago": jobs.params.last_used(&s.circuit_id)
                        .map(|t| (now - t).as_secs()),
                    "evictable": users == 0 && s.tier == provetop_engine::params::residency::Tier::Hot,
                    "tier": format!("{:?}", s.tier).to_lowercase(),
                    "in_use": users,
                })
            })
            .collect();
        let tally = jobs.tally();
        let by = |f: fn(&cuzk_metrics::KindTally) -> u64| -> BTreeMap<&str, u64> {
            tally.0.iter().map(|(k, t)| (*k, f(t))).collect()
        };
        let (completed, failed) = jobs.totals();
        let queues = jobs.queues();
        json!({
            "uptime_secs": self.started.elapsed().as_secs(),
            "memory": {
                "total_bytes": total,
                "used_bytes": total.saturating_sub(available),
                "available_bytes": available,
            },
            "synthesis": {
                "max_concurrent": jobs.engine.config().synthesis_workers,
                "active": engine.synthesizing,
            },
            "pipelines": pipelines,
            "gpu_workers": gpu_workers,
            "allocations": { "srs": srs, "pce": pce },
            "counters": {
                "total_completed": completed,
                "total_failed": failed,
                "completed_by_kind": by(|t| t.completed),
                "failed_by_kind": by(|t| t.failed),
                "queue_depth": queues.iter().map(|q| q.1).sum::<u32>(),
            },
            "buffers": {
                "pinned_bytes": jobs.params.pinned_bytes(),
                "pinned_limit_bytes": provetop_engine::hostmem::page_locked_ceiling(),
                "host_bytes_in_use": engine.host_bytes_in_use,
            },
            "provetop": {
                "parameters": jobs.params.source(),
                "queues": queues.iter().map(|(k, pending, running)| {
                    json!({"proof_kind": k, "pending": pending, "in_progress": running})
                }).collect::<Vec<_>>(),
                "engine": {
                    "partitions_pending": engine.partitions_pending,
                    "synthesizing": engine.synthesizing,
                    "queued": engine.queued,
                    "proving": engine.proving,
                },
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_and_ordinals_read() {
        let (total, available) = memory();
        assert!(total > 0 && available <= total, "{total} {available}");
        assert_eq!(ordinal("gpu12"), 12);
        assert_eq!(ordinal("cpu"), 0);
    }
}
