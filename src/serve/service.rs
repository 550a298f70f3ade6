//! The `cuzk.v1.ProvingEngine` service over the request table: each RPC checks its message,
//! runs blocking work off the async threads, and answers in cuzk's terms.

use provetop_engine::params::residency::Tier::{Cold, Hot, Warm};
use provetop_porep::Kind;
use provetop_proto::cuzk::v1::await_proof_response::Status as Done;
use provetop_proto::cuzk::v1::proving_engine_server::ProvingEngine;
use provetop_proto::cuzk::v1::srs_status::Tier;
use provetop_proto::cuzk::v1::*;
use provetop_telemetry::export::prometheus::Collector;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::{Request, Response, Status};

use super::abandon::OnAbandon;
use super::identity::{shown, Refusal};
use super::jobs::Jobs;
use super::status_page::CuzkMetrics;

/// The service's state: the request table, the metrics collector and the start time.
pub struct Service {
    pub jobs: Arc<Jobs>,
    pub metrics: Option<Collector>,
    /// cuzk's metric names, exported beside provetop's.
    pub cuzk: Arc<CuzkMetrics>,
    pub started: Instant,
}

/// Runs `f` on tokio's blocking pool: building circuits and loading parameters take seconds.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("the request's worker ended: {e}")))
}

impl Service {
    async fn submit(&self, r: SubmitProofRequest) -> Result<SubmitProofResponse, Status> {
        let jobs = self.jobs.clone();
        let accepted = blocking(move || jobs.submit(&r)).await??;
        Ok(SubmitProofResponse {
            job_id: accepted.job_id,
            queue_position: accepted.queue_position,
            assigned_gpu: String::new(),
        })
    }

    async fn wait(
        &self,
        job_id: &str,
        timeout: Option<Duration>,
    ) -> Result<AwaitProofResponse, Status> {
        let mut rx = self.jobs.watch(job_id).ok_or_else(|| {
            Status::not_found(format!("no job `{}` (unknown or forgotten)", shown(job_id)))
        })?;
        let done = async {
            loop {
                if let Some(a) = rx.borrow_and_update().clone() {
                    return Ok(a);
                }
                if rx.changed().await.is_err() {
                    return Err(Status::internal("the job's answer was dropped"));
                }
            }
        };
        match timeout {
            None => done.await,
            Some(t) => match tokio::time::timeout(t, done).await {
                Ok(a) => a,
                Err(_) => Ok(AwaitProofResponse {
                    job_id: job_id.to_string(),
                    status: Done::Timeout as i32,
                    error_message: format!("not finished within {} ms", t.as_millis()),
                    ..Default::default()
                }),
            },
        }
    }
}

#[tonic::async_trait]
impl ProvingEngine for Service {
    async fn submit_proof(
        &self,
        req: Request<SubmitProofRequest>,
    ) -> Result<Response<SubmitProofResponse>, Status> {
        Ok(Response::new(self.submit(req.into_inner()).await?))
    }

    async fn await_proof(
        &self,
        req: Request<AwaitProofRequest>,
    ) -> Result<Response<AwaitProofResponse>, Status> {
        let r = req.into_inner();
        let timeout = (r.timeout_ms > 0).then(|| Duration::from_millis(r.timeout_ms));
        Ok(Response::new(self.wait(&r.job_id, timeout).await?))
    }

    async fn prove(&self, req: Request<ProveRequest>) -> Result<Response<ProveResponse>, Status> {
        let Some(submit) = req.into_inner().submit else {
            return Err(Status::invalid_argument("ProveRequest has no submit"));
        };
        // As cuzk's: a request refused at submit is that error; one that fails later, an
        // answer FAILED with the reason. A caller that leaves first cancels the job it made.
        let (guard, made) = OnAbandon::new(self.jobs.clone());
        let jobs = self.jobs.clone();
        let job = blocking(move || {
            let accepted = jobs.submit(&submit)?;
            made.report(&accepted);
            Ok::<_, Refusal>(accepted)
        })
        .await??;
        let result = self.wait(&job.job_id, None).await?;
        guard.answered();
        Ok(Response::new(ProveResponse {
            result: Some(result),
        }))
    }

    async fn cancel_proof(
        &self,
        req: Request<CancelProofRequest>,
    ) -> Result<Response<CancelProofResponse>, Status> {
        let id = req.into_inner().job_id;
        match self.jobs.cancel(&id) {
            Some(was_running) => Ok(Response::new(CancelProofResponse { was_running })),
            None => Err(Status::not_found(format!(
                "no open job `{}` (unknown or finished)",
                shown(&id)
            ))),
        }
    }

    async fn get_status(
        &self,
        _: Request<GetStatusRequest>,
    ) -> Result<Response<GetStatusResponse>, Status> {
        let jobs = &self.jobs;
        let in_use = jobs.in_use();
        let waiting = jobs.waiting();
        let (completed, failed) = jobs.totals();
        let gpus = jobs
            .engine
            .devices()
            .iter()
            .filter(|d| d.kind == "gpu")
            .enumerate()
            .map(|(i, d)| GpuStatus {
                ordinal: i as u32,
                name: d.name.clone(),
                vram_total_bytes: d.memory_bytes,
                ..Default::default()
            })
            .collect();
        let loaded_srs = jobs
            .params
            .list()
            .into_iter()
            .map(|s| SrsStatus {
                ref_count: in_use.get(&s.circuit_id).copied().unwrap_or(0),
                tier: match s.tier {
                    Hot => Tier::Hot,
                    Warm => Tier::Warm,
                    Cold => Tier::Cold,
                } as i32,
                circuit_id: s.circuit_id,
                size_bytes: s.bytes,
            })
            .collect();
        let queues = jobs
            .queues()
            .into_iter()
            .map(|(kind, pending, in_progress)| QueueStatus {
                proof_kind: kind.to_string(),
                pending,
                in_progress,
            })
            .collect();
        Ok(Response::new(GetStatusResponse {
            gpus,
            loaded_srs,
            queues,
            total_proofs_completed: completed,
            total_proofs_failed: failed,
            uptime_seconds: self.started.elapsed().as_secs(),
            pinned_memory_bytes: jobs.params.pinned_bytes(),
            pinned_memory_limit_bytes: provetop_engine::hostmem::page_locked_ceiling(),
            parameters: jobs.params.source(),
            queued_requests: waiting.queued.min(u32::MAX as u64) as u32,
            max_queued_requests: jobs.limits.max_queued.min(u32::MAX as u64) as u32,
            queued_bytes: waiting.bytes,
            max_queued_bytes: jobs.limits.max_bytes,
        }))
    }

    async fn get_metrics(
        &self,
        _: Request<GetMetricsRequest>,
    ) -> Result<Response<GetMetricsResponse>, Status> {
        let Some(m) = &self.metrics else {
            return Err(Status::unavailable(
                "metrics need telemetry: drop --telemetry off",
            ));
        };
        Ok(Response::new(GetMetricsResponse {
            prometheus_text: m.render() + &self.cuzk.render(),
        }))
    }

    async fn preload_srs(
        &self,
        req: Request<PreloadSrsRequest>,
    ) -> Result<Response<PreloadSrsResponse>, Status> {
        let id = req.into_inner().circuit_id;
        let (kind, size) =
            Kind::of_circuit_id(&id).map_err(|e| Status::invalid_argument(format!("{e:#}")))?;
        if !self.jobs.accepting() {
            return Err(Status::unavailable(
                "the server is shutting down and loads no parameters",
            ));
        }
        self.jobs
            .params
            .may_preload(&id, size)
            .map_err(Status::failed_precondition)?;
        let jobs = self.jobs.clone();
        let (already_loaded, load_time_ms) = blocking(move || jobs.params.preload(kind, size))
            .await?
            .map_err(|e| Status::failed_precondition(format!("{e:#}")))?;
        Ok(Response::new(PreloadSrsResponse {
            already_loaded,
            load_time_ms,
        }))
    }

    async fn evict_srs(
        &self,
        req: Request<EvictSrsRequest>,
    ) -> Result<Response<EvictSrsResponse>, Status> {
        let id = req.into_inner().circuit_id;
        let (kind, size) =
            Kind::of_circuit_id(&id).map_err(|e| Status::invalid_argument(format!("{e:#}")))?;
        let in_use = self.jobs.in_use().get(&id).copied().unwrap_or(0);
        let freed = self
            .jobs
            .params
            .evict(kind, size, in_use)
            .map_err(|e| Status::failed_precondition(format!("{e:#}")))?;
        Ok(Response::new(EvictSrsResponse {
            was_loaded: freed.is_some(),
            freed_bytes: freed.unwrap_or(0),
        }))
    }
}
