//! The served requests: each one's state from acceptance to its answer, `request_id`
//! idempotency, the queue in front of the engine, and cancellation. Requests wait here (what
//! `GetStatus` counts as pending) until the engine has room, then go to its pipeline like
//! `bench`'s jobs; the outcome thread (`outcomes`) assembles their partitions' proofs.

use anyhow::Result;
use parking_lot::{Condvar, Mutex};
use provetop_engine::pipeline::{EngineHandle, JobId, JobSpec, Priority};
use provetop_proto::cuzk::v1::await_proof_response::Status as Done;
use provetop_proto::cuzk::v1::{AwaitProofResponse, ProofKind, SubmitProofRequest};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

mod entry;
mod views;

pub use entry::{Accepted, Entry, Phase, Queues, Running};

use super::admission::{Limits, Load};
use super::cuzk_metrics::Tally;
use super::identity::{self, shown, Refusal};
use super::params::ParamSets;
use crate::cuzk as request;

/// Finished requests remembered for `AwaitProof` and retries, oldest forgotten first.
const KEEP_FINISHED: usize = 1024;

#[derive(Default)]
struct Inner {
    /// By job id, which is the request_id (or one made for a request without).
    entries: HashMap<String, Entry>,
    by_engine: HashMap<JobId, String>,
    queue: VecDeque<String>,
    finished: VecDeque<String>,
    /// Requests accepted: each one's circuit name is unique.
    accepted: u64,
    completed: u64,
    failed: u64,
    /// Requests whose proof the engine or filecoin-proofs failed (not refused requests).
    proof_failed: u64,
    /// Answers by kind, for cuzk's metric names.
    tally: Tally,
    /// The last ten minutes' answers, for the fleet and the alerts.
    served: super::served::Served,
    accepting: bool,
}

/// The table every RPC and the feeder and outcome threads share.
pub struct Jobs {
    pub engine: EngineHandle,
    pub params: ParamSets,
    inner: Mutex<Inner>,
    wake: Condvar,
    /// Jobs in the engine at most; None: the engine's own choice for the request's partitions.
    concurrency: Option<u64>,
    /// Filecoin's parameter folder; None with `--test-params` (parameters made here).
    params_dir: Option<PathBuf>,
    /// How many requests, and bytes of them, may wait.
    pub limits: Limits,
}

impl Jobs {
    pub fn new(
        engine: EngineHandle,
        params: ParamSets,
        concurrency: Option<u64>,
        params_dir: Option<PathBuf>,
        limits: Limits,
    ) -> Arc<Jobs> {
        Arc::new(Jobs {
            engine,
            params,
            inner: Mutex::new(Inner {
                accepting: true,
                ..Inner::default()
            }),
            wake: Condvar::new(),
            concurrency,
            params_dir,
            limits,
        })
    }

    /// Accepts a request (or joins the open one it repeats) and checks and builds it on this
    /// thread. What can never prove is refused before it is a job (cuzk's INVALID_ARGUMENT);
    /// a request whose vanilla proofs do not verify is a job answered FAILED with the reason
    /// before this returns.
    pub fn submit(&self, r: &SubmitProofRequest) -> Result<Accepted, Refusal> {
        // Checked once, here; building the proof below takes what the checks found.
        let (req, checked) = request::checked(r).map_err(|e| Refusal::Invalid(format!("{e:#}")))?;
        let (kind, size) = (checked.kind, checked.size);
        if let Some(note) = request::size_note(&req, size) {
            tracing::warn!("serve: {}: {note}", shown(&r.request_id));
        }
        let digest = identity::digest(r);
        let wire = request::proof_kind(kind);
        let (job_id, name) = {
            let mut st = self.inner.lock();
            if !st.accepting {
                return Err(Refusal::Unavailable(
                    "the server is shutting down and takes no new requests".into(),
                ));
            }
            let job_id = match r.request_id.as_str() {
                "" => loop {
                    let id = identity::generated_id();
                    if !st.entries.contains_key(&id) {
                        break id;
                    }
                },
                id => {
                    if let Some(e) = st.entries.get(id) {
                        return self.reuse(&st, id, e, &digest);
                    }
                    id.to_string()
                }
            };
            let priority = request::priority(r.priority, wire);
            let bytes = provetop_proto::prost::Message::encoded_len(r) as u64;
            self.limits.admit(waiting(&st), priority, bytes)?;
            let (answer, _) = watch::channel(None);
            st.accepted += 1;
            let name = request::circuit_name(wire, st.accepted, &job_id);
            st.entries.insert(
                job_id.clone(),
                Entry {
                    digest,
                    kind: wire,
                    priority,
                    phase: Phase::Checking,
                    proof: None,
                    circuit_id: kind.circuit_id(size),
                    engine_job: None,
                    accepted: Instant::now(),
                    submitted: None,
                    srs_load_ms: 0,
                    proofs: vec![],
                    synthesis_s: 0.0,
                    device_s: 0.0,
                    answer,
                    bytes,
                },
            );
            (job_id, name)
        };
        // Built outside the lock: parsing a 32 GiB sector's vanilla proofs takes a while.
        let built = req.prepare(checked, self.params_dir.as_deref(), &name);
        let mut st = self.inner.lock();
        let Some(e) = st.entries.get_mut(&job_id) else {
            return Err(Refusal::Invalid("forgotten while being checked".into()));
        };
        match built {
            Err(err) => {
                let msg = format!("{err:#}");
                if err.chain().any(|c| c.is::<provetop_porep::MissingParams>()) {
                    // Not a job: the same request is welcome once the file is there. A retry
                    // that joined meanwhile hears why.
                    tracing::warn!("serve: {} refused: {msg}", shown(&job_id));
                    if let Some(e) = st.entries.remove(&job_id) {
                        e.answer.send_replace(Some(AwaitProofResponse {
                            job_id: job_id.clone(),
                            status: Done::Failed as i32,
                            error_message: msg.clone(),
                            ..Default::default()
                        }));
                    }
                    return Err(Refusal::Precondition(msg));
                }
                tracing::warn!("serve: {} refused: {msg}", shown(&job_id));
                finish(&mut st, &job_id, Done::Failed, vec![], msg);
            }
            Ok(_) if !matches!(e.phase, Phase::Checking) => {
                // Cancelled while it was being checked: its circuit goes with `built`.
            }
            Ok(p) => {
                e.proofs = vec![None; p.circuits().partitions as usize];
                e.proof = Some(Arc::new(p));
                e.phase = Phase::Queued;
                let priority = e.priority;
                // FIFO within a priority: after every queued request of its class or above.
                let at = {
                    let entries = &st.entries;
                    st.queue
                        .iter()
                        .position(|q| entries.get(q).is_some_and(|x| x.priority < priority))
                        .unwrap_or(st.queue.len())
                };
                st.queue.insert(at, job_id.clone());
                self.wake.notify_all();
            }
        }
        let queue_position = st.queue.iter().position(|q| *q == job_id).unwrap_or(0) as u32;
        Ok(Accepted {
            job_id,
            queue_position,
            joined: false,
        })
    }

    /// A request whose id `id` names `e` already: the same request still open joins it; any
    /// other is refused with the reason.
    fn reuse(
        &self,
        st: &Inner,
        id: &str,
        e: &Entry,
        digest: &[u8; 32],
    ) -> Result<Accepted, Refusal> {
        let answered = e.answer.borrow().as_ref().map(|a| a.status);
        identity::may_join(id, answered, e.digest == *digest)?;
        tracing::info!(
            "serve: a retry of {} joins it (the same request)",
            shown(id)
        );
        let position = st.queue.iter().position(|q| q == id).unwrap_or(0);
        Ok(Accepted {
            job_id: id.to_string(),
            queue_position: position as u32,
            joined: true,
        })
    }

    /// The channel that carries `job_id`'s answer, None for an unknown job.
    pub fn watch(&self, job_id: &str) -> Option<watch::Receiver<Option<AwaitProofResponse>>> {
        let st = self.inner.lock();
        st.entries.get(job_id).map(|e| e.answer.subscribe())
    }

    /// Cancels a request: a waiting one at once, a running one through the engine (its
    /// partitions on a device finish unreported). Some(was_running), None for an unknown or
    /// finished job.
    pub fn cancel(&self, job_id: &str) -> Option<bool> {
        let mut st = self.inner.lock();
        let e = st.entries.get(job_id)?;
        match e.phase {
            Phase::Finished => None,
            Phase::Running => {
                let job = e.engine_job?;
                drop(st);
                self.engine.cancel(job);
                Some(true)
            }
            Phase::Checking | Phase::Queued => {
                st.queue.retain(|q| q != job_id);
                finish(&mut st, job_id, Done::Cancelled, vec![], "cancelled".into());
                Some(false)
            }
        }
    }

    /// The requests waiting now and their bytes, as the limits count them.
    pub fn waiting(&self) -> Load {
        waiting(&self.inner.lock())
    }

    /// Whether new work is taken (false from SIGTERM on).
    pub fn accepting(&self) -> bool {
        self.inner.lock().accepting
    }

    /// Stops taking new requests (SIGTERM); what is queued or running goes on.
    pub fn stop_accepting(&self) {
        self.inner.lock().accepting = false;
        self.wake.notify_all();
    }

    /// The drain ran out: every open request is answered FAILED with `why` and the queue is
    /// emptied (work already in the engine is left to it). Returns how many were open.
    pub fn abandon_open(&self, why: &str) -> usize {
        let mut st = self.inner.lock();
        let open: Vec<String> = st
            .entries
            .iter()
            .filter(|(_, e)| !matches!(e.phase, Phase::Finished))
            .map(|(id, _)| id.clone())
            .collect();
        st.queue.clear();
        for id in &open {
            finish(&mut st, id, Done::Failed, vec![], why.to_string());
        }
        self.wake.notify_all();
        open.len()
    }

    /// The feeder: hands queued requests to the engine while it has room, loading their
    /// parameters first. Returns when no more requests come and the queue is empty.
    pub fn feed(&self) {
        loop {
            let (job_id, proof, priority) = {
                let mut st = self.inner.lock();
                loop {
                    let running = st
                        .entries
                        .values()
                        .filter(|e| matches!(e.phase, Phase::Running))
                        .count() as u64;
                    if let Some(head) = st.queue.front().cloned() {
                        let e = &st.entries[&head];
                        let parts = e.proof.as_ref().map_or(1, |p| p.circuits().partitions);
                        let serial = (e.proof.as_ref())
                            .is_some_and(|p| !p.circuits().workload().parallel_witness());
                        let limit = self
                            .concurrency
                            .unwrap_or_else(|| self.engine.auto_concurrency(parts, serial).0);
                        // Critical work goes to the engine at once (its queues put it first);
                        // low work only when nothing else runs.
                        let room = match e.priority {
                            Priority::Critical => true,
                            Priority::Low => running == 0,
                            _ => running < limit.max(1),
                        };
                        if room {
                            let (proof, priority) = (e.proof.clone(), e.priority);
                            st.queue.pop_front();
                            break (head, proof, priority);
                        }
                    } else if !st.accepting {
                        return;
                    }
                    self.wake
                        .wait_for(&mut st, std::time::Duration::from_millis(200));
                }
            };
            let Some(proof) = proof else { continue };
            let started = Instant::now();
            let circuits = proof.circuits();
            let loaded = self.params.ensure(proof.kind(), proof.size(), circuits);
            let srs_load_ms = started.elapsed().as_millis() as u64;
            let spec = JobSpec {
                workload: circuits.workload(),
                partitions: circuits.partitions,
                seed: 0,
                priority,
                name: Some(job_id.clone()),
            };
            let submitted = loaded.and_then(|_| self.engine.submit(spec));
            let mut st = self.inner.lock();
            let Some(e) = st.entries.get_mut(&job_id) else {
                continue;
            };
            if !matches!(e.phase, Phase::Queued) {
                continue;
            }
            match submitted {
                Ok(job) => {
                    e.phase = Phase::Running;
                    e.engine_job = Some(job);
                    e.submitted = Some(Instant::now());
                    e.srs_load_ms = srs_load_ms;
                    st.by_engine.insert(job, job_id);
                }
                Err(err) => {
                    let msg = format!("{err:#}");
                    finish(&mut st, &job_id, Done::Failed, vec![], msg);
                }
            }
        }
    }

    /// Runs on the outcome thread: one partition's result.
    pub fn partition(&self, p: &provetop_engine::pipeline::PartitionResult) {
        let mut st = self.inner.lock();
        let Some(id) = st.by_engine.get(&p.record.job).cloned() else {
            return;
        };
        let Some(e) = st.entries.get_mut(&id) else {
            return;
        };
        let stage = |s: provetop_telemetry::Stage| p.record.stages.get(&s).copied().unwrap_or(0.0);
        use provetop_telemetry::Stage as S;
        e.synthesis_s += stage(S::Synthesis) + stage(S::AbcEval);
        e.device_s += [
            S::H2d,
            S::NttH,
            S::MsmH,
            S::MsmL,
            S::MsmA,
            S::MsmBG1,
            S::MsmBG2,
            S::BatchAdd,
        ]
        .into_iter()
        .map(stage)
        .sum::<f64>();
        if let (Some(slot), Some(proof), true) = (
            e.proofs.get_mut(p.record.partition as usize),
            &p.proof,
            p.record.verified,
        ) {
            *slot = Some(proof.to_bytes().to_vec());
        }
    }

    /// Runs on the outcome thread: a job ended. Its proofs, all verified by the engine, are
    /// checked once more by filecoin-proofs (its verifier of the kind) before the answer goes out.
    pub fn job_done(&self, job: JobId, failed: u32, cancelled: u32) {
        let (job_id, proof, proofs) = {
            let mut st = self.inner.lock();
            let Some(id) = st.by_engine.remove(&job) else {
                return;
            };
            let Some(e) = st.entries.get_mut(&id) else {
                return;
            };
            let proofs: Option<Vec<u8>> = e
                .proofs
                .iter()
                .cloned()
                .collect::<Option<Vec<_>>>()
                .map(|v| v.concat());
            (id, e.proof.clone(), proofs)
        };
        let verdict = match (cancelled, failed, proof, proofs) {
            (c, _, _, _) if c > 0 => (Done::Cancelled, vec![], "cancelled".to_string()),
            (_, f, _, _) if f > 0 => (
                Done::Failed,
                vec![],
                format!("{f} partition(s) failed to prove or verify"),
            ),
            (_, _, Some(proof), Some(bytes)) => {
                let verifier = proof.kind().verifier();
                match self.params.verify(&proof, &bytes) {
                    Ok(true) => (Done::Completed, bytes, String::new()),
                    Ok(false) => (
                        Done::Failed,
                        vec![],
                        format!("filecoin-proofs' {verifier} rejected the proof"),
                    ),
                    Err(e) => (Done::Failed, vec![], format!("{verifier}: {e:#}")),
                }
            }
            _ => (Done::Failed, vec![], "partitions are missing".into()),
        };
        let mut st = self.inner.lock();
        if verdict.0 == Done::Failed {
            tracing::warn!("serve: {job_id} failed: {}", verdict.2);
            st.proof_failed += 1;
        }
        finish(&mut st, &job_id, verdict.0, verdict.1, verdict.2);
    }
}

/// The requests accepted and not yet in the engine (being checked or queued), and their bytes.
fn waiting(st: &Inner) -> Load {
    st.entries
        .values()
        .filter(|e| matches!(e.phase, Phase::Checking | Phase::Queued))
        .fold(Load::default(), |l, e| Load {
            queued: l.queued + 1,
            bytes: l.bytes + e.bytes,
        })
}

/// Answers `job_id` (once: a later answer is ignored) and forgets the oldest finished requests
/// beyond `KEEP_FINISHED`.
fn finish(st: &mut Inner, job_id: &str, status: Done, proof: Vec<u8>, error: String) {
    let Some(e) = st.entries.get_mut(job_id) else {
        return;
    };
    if matches!(e.phase, Phase::Finished) {
        return;
    }
    e.phase = Phase::Finished;
    let ms = |s: f64| (s * 1000.0).round() as u64;
    let queue_wait = e.submitted.unwrap_or_else(Instant::now) - e.accepted;
    let answer = AwaitProofResponse {
        job_id: job_id.to_string(),
        status: status as i32,
        proof,
        error_message: error,
        queue_wait_ms: queue_wait.as_millis() as u64,
        srs_load_ms: e.srs_load_ms,
        synthesis_ms: ms(e.synthesis_s),
        gpu_compute_ms: ms(e.device_s),
        total_ms: e.accepted.elapsed().as_millis() as u64,
    };
    let answer_seconds = e.accepted.elapsed().as_secs_f64();
    e.proof = None;
    e.proofs.clear();
    e.answer.send_replace(Some(answer));
    let kind = request::kind_name(e.kind);
    match status {
        Done::Completed => {
            st.completed += 1;
            st.tally.completed(kind, answer_seconds);
        }
        Done::Failed => {
            st.failed += 1;
            st.tally.failed(kind);
        }
        _ => {}
    }
    if matches!(status, Done::Completed | Done::Failed) {
        let ok = status == Done::Completed;
        st.served.answered(kind, ok, answer_seconds, Instant::now());
    }
    st.finished.push_back(job_id.to_string());
    while st.finished.len() > KEEP_FINISHED {
        if let Some(old) = st.finished.pop_front() {
            st.entries.remove(&old);
        }
    }
}
