//! Made-up rigs for measuring the fleet view (`fleet --simulate N`): N `provetop.v1.Fleet`
//! services on consecutive loopback ports, each summarising a rig proving 50,000 partitions an
//! hour (WinningPoSt and PoRep answers, queues, a GPU's busy fraction and VRAM), until SIGTERM
//! or SIGINT. What a rig sends is one summary a second whatever its rate, so this is the load
//! 64 real rigs put on the viewer.

use anyhow::{Context, Result};
use provetop_proto::provetop::v1::fleet_server::{Fleet, FleetServer};
use provetop_proto::provetop::v1::*;
use std::time::{Duration, Instant};
use tonic::{Request, Response, Status};

/// The simulated rate: partitions an hour.
const PARTITIONS_PER_HOUR: f64 = 50_000.0;

struct Simulated {
    rig: u32,
    started: Instant,
}

impl Simulated {
    fn summary(&self) -> RigSummary {
        let t = self.started.elapsed().as_secs_f64();
        let per_s = PARTITIONS_PER_HOUR / 3600.0;
        // A PoRep is ten partitions; WinningPoSt one; half the partitions each.
        let kind = |kind: &str, parts: f64| {
            let rate = per_s / 2.0 / parts;
            KindSummary {
                kind: kind.into(),
                done_1m: (rate * t.min(60.0)) as u64,
                done_10m: (rate * t.min(600.0)) as u64,
                done_total: (rate * t) as u64,
                failed_total: 0,
                failed_10m: 0,
            }
        };
        let kinds = vec![kind("porep", 10.0), kind("winning-post", 1.0)];
        let wobble = ((t + f64::from(self.rig)).sin() + 1.0) / 2.0;
        RigSummary {
            session_id: format!("simulated-{}", self.rig),
            serving: format!(
                "serving: porep ×{}, winning-post ×{}",
                kinds[0].done_total, kinds[1].done_total
            ),
            gpus: (0..8)
                .map(|g| GpuSummary {
                    name: format!("gpu{g}"),
                    busy: 0.8 + 0.2 * wobble,
                    vram_used_bytes: (60.0 + 10.0 * wobble) as u64 * (1 << 30),
                    vram_total_bytes: 80 << 30,
                })
                .collect(),
            kinds,
            queues: vec![QueueDepth {
                kind: "porep".into(),
                priority: "normal".into(),
                pending: (wobble * 8.0) as u32,
                running: 8,
            }],
            failures: 0,
            winning_last_ms: 180 + (wobble * 60.0) as u64,
            winning_median_ms: 200,
            alerts: vec![],
            bottleneck: "the GPUs were busy 92 % of the window: the rig is GPU-bound".into(),
            uptime_seconds: t as u64,
            host_used_bytes: 300 << 30,
            host_total_bytes: 1 << 40,
            parameters: "simulated".into(),
        }
    }
}

#[tonic::async_trait]
impl Fleet for Simulated {
    type SummariesStream = tokio_stream::wrappers::ReceiverStream<Result<RigSummary, Status>>;

    async fn summaries(
        &self,
        req: Request<SummaryRequest>,
    ) -> Result<Response<Self::SummariesStream>, Status> {
        let every = Duration::from_millis(u64::from(req.into_inner().interval_ms.max(200)));
        let (tx, rx) = tokio::sync::mpsc::channel(2);
        let me = Simulated {
            rig: self.rig,
            started: self.started,
        };
        tokio::spawn(async move {
            while tx.send(Ok(me.summary())).await.is_ok() {
                tokio::time::sleep(every).await;
            }
        });
        Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(
            rx,
        )))
    }
}

pub fn main(n: u32, first_port: u16) -> Result<i32> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        let started = Instant::now();
        for rig in 0..n {
            let port = first_port + rig as u16;
            let addr = ([127, 0, 0, 1], port).into();
            let svc = FleetServer::new(Simulated { rig, started });
            tokio::spawn(
                tonic::transport::Server::builder()
                    .add_service(svc)
                    .serve(addr),
            );
        }
        eprintln!(
            "fleet: {n} simulated rigs on 127.0.0.1:{first_port}–{}",
            first_port + n as u16 - 1
        );
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(0)
}
