//! `provetop.v1.Fleet`: the rig in one small message a second, for `provetop fleet` (what it
//! serves, its devices, its answers by kind over a minute and ten, its queues, WinningPoSt's
//! latency, the alerts firing and the advisor's sentence). The alerts read the same snapshot.

use provetop_proto::provetop::v1::fleet_server::Fleet;
use provetop_proto::provetop::v1::*;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tonic::{Request, Response, Status};

use super::alerts::Firing;
use super::cuzk_metrics::Tally;
use super::jobs::Jobs;
use super::rig::{self, Rig};
use super::served::short_kind;

/// The service's state.
#[derive(Clone)]
pub struct Summaries {
    pub jobs: Arc<Jobs>,
    pub rig: Arc<Rig>,
    pub firing: Arc<Firing>,
    pub session_id: String,
    pub started: Instant,
    /// `test` with `--test-params`, else the parameters' folder.
    pub parameters: String,
    pub stopping: watch::Receiver<bool>,
}

/// The slowest and the fastest a viewer may ask for.
const DEFAULT_INTERVAL: Duration = Duration::from_millis(1000);
const MIN_INTERVAL: Duration = Duration::from_millis(200);

impl Summaries {
    /// What the alerts read: the summary, and failures and WinningPoSt's slowest over `window`.
    pub fn reading(&self, window: Duration) -> super::alerts::Reading {
        let (slowest_winning_ms, failed) = self.jobs.within(window);
        super::alerts::Reading {
            summary: self.snapshot(),
            slowest_winning_ms,
            failed,
        }
    }

    /// The rig now.
    pub fn snapshot(&self) -> RigSummary {
        let (recent, winning) = self.jobs.served();
        let tally: Tally = self.jobs.tally();
        let mut kinds: Vec<KindSummary> = tally
            .0
            .iter()
            .map(|(k, t)| KindSummary {
                kind: short_kind(k).to_string(),
                done_total: t.completed,
                failed_total: t.failed,
                ..Default::default()
            })
            .collect();
        for r in &recent {
            if let Some(k) = kinds.iter_mut().find(|k| k.kind == r.kind) {
                (k.done_1m, k.done_10m, k.failed_10m) = (r.done_1m, r.done_10m, r.failed_10m);
            }
        }
        let served: Vec<(&str, usize)> = kinds
            .iter()
            .map(|k| (k.kind.as_str(), (k.done_total + k.failed_total) as usize))
            .collect();
        let queues = self
            .jobs
            .depths()
            .into_iter()
            .map(|((kind, priority), (pending, running))| QueueDepth {
                kind: short_kind(kind).to_string(),
                priority: priority.name().to_string(),
                pending,
                running,
            })
            .collect();
        let (host_used, host_total) = rig::host_memory();
        let (winning_last_ms, winning_median_ms) = winning.unwrap_or((0, 0));
        RigSummary {
            session_id: self.session_id.clone(),
            serving: provetop_telemetry::serving(provetop_telemetry::SERVING, served),
            gpus: self
                .rig
                .devices()
                .into_iter()
                .map(|d| GpuSummary {
                    name: d.name,
                    busy: d.busy,
                    vram_used_bytes: d.vram_used,
                    vram_total_bytes: d.vram_total,
                })
                .collect(),
            kinds,
            queues,
            failures: self.jobs.totals().1,
            winning_last_ms,
            winning_median_ms,
            alerts: self.firing.names(),
            bottleneck: self.rig.bottleneck(),
            uptime_seconds: self.started.elapsed().as_secs(),
            host_used_bytes: host_used,
            host_total_bytes: host_total,
            parameters: self.parameters.clone(),
        }
    }
}

#[tonic::async_trait]
impl Fleet for Summaries {
    type SummariesStream = tokio_stream::wrappers::ReceiverStream<Result<RigSummary, Status>>;

    async fn summaries(
        &self,
        req: Request<SummaryRequest>,
    ) -> Result<Response<Self::SummariesStream>, Status> {
        let interval = match req.into_inner().interval_ms {
            0 => DEFAULT_INTERVAL,
            ms => Duration::from_millis(ms.into()).max(MIN_INTERVAL),
        };
        let (tx, rx) = mpsc::channel(2);
        let (me, mut stopping) = (self.clone(), self.stopping.clone());
        tokio::spawn(async move {
            loop {
                // A viewer that reads nothing holds one message; the next waits, never piles up.
                tokio::select! {
                    r = tx.send(Ok(me.snapshot())) => if r.is_err() { return },
                    _ = stopped(&mut stopping) => return,
                }
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = stopped(&mut stopping) => return,
                    _ = tx.closed() => return,
                }
            }
        });
        Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(
            rx,
        )))
    }
}

/// Returns once the server stops (the borrow `wait_for` returns is not `Send`: dropped here).
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|s| *s).await.map(|_| ());
}
