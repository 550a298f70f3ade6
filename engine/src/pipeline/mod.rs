//! The pipeline: jobs of P partitions flow through synthesis workers, a bounded queue of
//! synthesised partitions, the workers of every device (under its lock strategy), and a
//! finalizer that assembles and verifies each proof. Configuration changes apply at safe
//! points, and every stage reports to the telemetry bus.

pub mod auto;
mod finalize;
mod holds;
pub mod locks;
mod pools;
mod reconfigure;
pub mod schedule;
mod state;
mod synthesis;
mod worker;

use anyhow::Result;
use blstrs::Scalar;
use crossbeam_channel::{unbounded, Receiver, Sender};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;

use crate::backend::BackendKind;
use crate::circuit::precompiled::Precompiled;
use crate::circuit::Workload;
use crate::config::{ConfigError, EngineConfig};
use crate::prover::Proof;
use crate::store::ParamsStore;
use crate::telemetry::samplers::Depths;
use crate::telemetry::{Bus, Clock, ConfigChange, ProofRecord};
use state::State;
pub(crate) use state::QUEUE_SLACK;

pub use crate::telemetry::Priority;
pub use reconfigure::fits_backend;
pub use schedule::{Scheduled, When};
pub use synthesis::partition_bytes;

/// A job's number, from 0 in submission order, unique for the engine's life.
pub type JobId = u64;

/// Partitions of one job at most: a PoRep C2 job has 10; each is a ticket held from submission.
pub const MAX_PARTITIONS: u32 = 1024;

/// A job: `partitions` circuits of one workload sharing one set of parameters.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The circuit each partition proves.
    pub workload: Workload,
    /// Partitions of the job, 1..=`MAX_PARTITIONS`.
    pub partitions: u32,
    /// Seed of the job's witnesses: each partition's own comes from it, the job and the partition
    /// (`partition_seed`).
    pub seed: u64,
    /// Where its partitions go in the queues: ahead of every lower class.
    pub priority: Priority,
    /// What it is called where it came from (serve: the request id), shown in place of the
    /// engine's `#id` in views and logs; `None` for the engine's own numbering.
    pub name: Option<String>,
}

/// One partition's result, proof and public inputs included.
#[derive(Clone, Debug)]
pub struct PartitionResult {
    /// What the bus carried: stage times, the device, and whether it verified (with the error if
    /// not).
    pub record: ProofRecord,
    /// The proof, also when it failed to verify; None when none was made.
    pub proof: Option<Proof>,
    /// The partition's public inputs without the leading one, as the verifier takes them.
    pub inputs: Vec<Scalar>,
}

/// What the engine reports on `EngineHandle::outcomes` as work finishes.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A partition finished (not sent for cancelled jobs).
    Partition(Box<PartitionResult>),
    /// Every partition of a job has ended; the counts add up to its partitions.
    JobDone {
        /// The job that ended.
        job: JobId,
        /// Partitions whose proof verified.
        verified: u32,
        /// Partitions that failed (no proof, or one that did not verify).
        failed: u32,
        /// Partitions dropped or left unreported because the job was cancelled.
        cancelled: u32,
    },
}

/// A snapshot of the pipeline, for the dashboard and status lines.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Status {
    /// Jobs submitted and not yet done.
    pub jobs_open: usize,
    /// Partitions waiting for a synthesis worker.
    pub partitions_pending: usize,
    /// Partitions in synthesis now.
    pub synthesizing: usize,
    /// Synthesised partitions waiting for a device worker.
    pub queued: usize,
    /// Partitions on a device or in the finalizer.
    pub proving: usize,
    /// Partitions reported since start, cancelled ones not counted.
    pub finished_partitions: u64,
    /// Host bytes held by partitions between synthesis and their proof (the `host_memory_budget` in
    /// use).
    pub host_bytes_in_use: u64,
    /// The devices in service, retiring ones left out.
    pub devices: Vec<DeviceStatus>,
}

impl Status {
    /// The partitions waiting, in synthesis, queued and on a device, as the pipeline sampler
    /// publishes them.
    pub fn depths(&self) -> Depths {
        Depths {
            pending: self.partitions_pending,
            synthesizing: self.synthesizing,
            queued: self.queued,
            proving: self.proving,
            params: vec![],
        }
    }
}

/// One device in service, as `Status` shows it.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct DeviceStatus {
    /// The device's name (`gpu0`, `cpu1`).
    pub name: String,
    /// Worker threads it runs now.
    pub workers: usize,
    /// Its lock strategy, as `Debug` spells it (`Single`, `TwoLock`, `None`).
    pub lock: String,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    cv: Condvar,
    bus: Bus,
    clock: Clock,
    store: Arc<ParamsStore>,
    outcomes: Sender<Outcome>,
    backend: BackendKind,
    /// What `auto` values are chosen for.
    machine: crate::pipeline::auto::Machine,
    /// The devices kept for CRITICAL partitions between their synthesis and their region.
    holds: Arc<holds::Holds>,
}

/// The running engine. Cheap to clone; every clone drives the same pipeline.
#[derive(Clone)]
pub struct EngineHandle {
    shared: Arc<Shared>,
    outcomes: Receiver<Outcome>,
    /// Telemetry samplers (none when the bus is disabled); stopped at shutdown.
    samplers: Arc<crate::telemetry::samplers::Samplers>,
}

impl EngineHandle {
    /// Starts the pipeline's threads and devices.
    pub fn start(
        config: EngineConfig,
        store: Arc<ParamsStore>,
        bus: Bus,
        clock: Clock,
    ) -> Result<Self> {
        Self::start_with_executors(config, store, bus, clock, vec![])
    }

    /// `start`, with `extra` devices beside the backend's own (an embedder's executors; the
    /// tests inject device faults through one).
    pub fn start_with_executors(
        config: EngineConfig,
        store: Arc<ParamsStore>,
        bus: Bus,
        clock: Clock,
        extra: Vec<Arc<dyn crate::backend::Executor>>,
    ) -> Result<Self> {
        let (backend, why) = crate::backend::resolve(config.backend);
        if let Some(why) = why {
            tracing::info!("backend auto: the cpu backend, because {why}");
        }
        let (tx, rx) = unbounded();
        let config_devices = config.devices.clone();
        // GPUs are fixed at start; `cpu_devices` applies to the cpu backend only.
        let gpus: Vec<Arc<dyn crate::backend::Executor>> = match backend {
            BackendKind::Cuda => {
                crate::backend::cuda::msm::select_accumulation(config.msm_accumulation);
                crate::backend::cuda::executors(&config_devices)?
                    .into_iter()
                    .map(|e| e as Arc<dyn crate::backend::Executor>)
                    .collect()
            }
            _ => vec![],
        };
        let machine = crate::pipeline::auto::Machine::here(backend, gpus.len());
        let mut config = config;
        crate::pipeline::auto::resolve(&mut config, &machine);
        let mut state = State::new(config)?;
        state.resident = store.resident().clone();
        for exec in gpus.into_iter().chain(extra) {
            state.add_device(exec);
        }
        // A setup this engine needs runs its fixed-base products on its first device that can.
        if let Some(p) = state.devices.iter().find_map(|d| d.exec.setup_products()) {
            store.set_products(p);
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            cv: Condvar::new(),
            bus,
            clock,
            store,
            outcomes: tx,
            backend,
            machine,
            holds: holds::Holds::new(holds::HOLD_MAX),
        });
        reconfigure::sync_devices(&shared);
        synthesis::spawn_dispatcher(shared.clone());
        let samplers = Arc::new(crate::telemetry::samplers::Samplers::for_engine(
            &shared.bus,
            clock,
            &config_devices,
            Arc::downgrade(&shared),
            |s: &Shared| {
                let mut d = s.state.lock().status().depths();
                d.params = s.store.sets();
                d
            },
        ));
        Ok(EngineHandle {
            shared,
            outcomes: rx,
            samplers,
        })
    }

    /// `--concurrency auto`: jobs of `partitions` to keep submitted, and why; `serial` when
    /// their witness is one core's, so that they get a synthesis worker a core
    /// (`auto::workers_for`) and enough jobs to keep those busy.
    pub fn auto_concurrency(&self, partitions: u32, serial: bool) -> (u64, String) {
        let st = self.shared.state.lock();
        let workers = st
            .devices
            .iter()
            .filter(|d| !d.retiring)
            .map(|d| d.target)
            .sum();
        let mut cfg = st.cfg.clone();
        let wanted =
            crate::pipeline::auto::workers_for(&cfg, &self.shared.machine, (u64::MAX, 1), serial);
        if let Some((n, _)) = wanted.filter(|(n, _)| *n > cfg.synthesis_workers) {
            cfg.synthesis_workers = n;
        }
        crate::pipeline::auto::jobs_in_flight(&cfg, workers, partitions)
    }

    /// The backend proving, `auto` resolved at start.
    pub fn backend(&self) -> BackendKind {
        self.shared.backend
    }

    /// The bus every stage publishes on.
    pub fn bus(&self) -> &Bus {
        &self.shared.bus
    }

    /// The clock event times count from.
    pub fn clock(&self) -> Clock {
        self.shared.clock
    }

    /// The parameters and recorded circuits of every job's shape.
    pub fn store(&self) -> &Arc<ParamsStore> {
        &self.shared.store
    }

    /// Results as partitions and jobs finish.
    pub fn outcomes(&self) -> &Receiver<Outcome> {
        &self.outcomes
    }

    /// The configuration now, `auto` keys resolved and applied changes included.
    pub fn config(&self) -> EngineConfig {
        self.shared.state.lock().cfg.clone()
    }

    /// Whether a job of `workload` submitted now takes the pre-compiled path
    /// (`auto::precompiled_for` on the configuration and the devices in service).
    pub fn precompiled_for(&self, workload: &crate::circuit::Workload) -> bool {
        let st = self.shared.state.lock();
        crate::pipeline::auto::precompiled_for(&st.cfg, workload, st.abc_on_devices())
    }

    /// Whether every device in service evaluates a pre-compiled circuit's a, b and c itself.
    pub fn abc_on_devices(&self) -> bool {
        self.shared.state.lock().abc_on_devices()
    }

    /// With `prestage` on, sets aside host memory for the witnesses of as many partitions of
    /// this parameter set as the pipeline holds at once (synthesising, queued, on devices), so
    /// that page-locking it is paid once, before the first job; `precompiled` when its jobs
    /// take the pre-compiled path (their a, b and c may then be evaluated on the device, and
    /// the witness staged instead). Returns the bytes set aside.
    pub fn reserve_prestage(
        &self,
        workload: &Workload,
        loaded: &crate::store::Loaded,
        precompiled: bool,
    ) -> Result<u64> {
        let st = self.shared.state.lock();
        let Some(exec) = st
            .devices
            .iter()
            .find(|d| !d.retiring)
            .map(|d| d.exec.clone())
        else {
            return Ok(0);
        };
        if !st.cfg.prestage {
            return Ok(0);
        }
        let plan = synthesis::stage_plan(loaded, precompiled && exec.evaluates_abc());
        // As many synthesis workers as this workload's jobs will be given (`auto::workers_for`).
        let room = (st.partitions_room(), synthesis::held_bytes(&plan));
        let serial = !workload.parallel_witness();
        let workers =
            crate::pipeline::auto::workers_for(&st.cfg, &self.shared.machine, room, serial)
                .map_or(st.cfg.synthesis_workers, |(n, _)| n);
        let count = workers + QUEUE_SLACK + st.cfg.gpu_workers_per_device * st.devices.len();
        drop(st);
        let bytes = exec.reserve_prestage(plan, count)?;
        // The pool's blocks serve every later set: counted once, at their largest.
        let mut st = self.shared.state.lock();
        if st.prestaged.as_ref().is_none_or(|r| r.bytes() < bytes) {
            st.prestaged = Some(st.resident.reserve(bytes));
        }
        Ok(bytes)
    }

    /// Submits a job; its parameters must be obtainable (loaded, cached or generated first).
    pub fn submit(&self, spec: JobSpec) -> Result<JobId> {
        synthesis::submit(&self.shared, spec)
    }

    /// Cancels a job: its waiting partitions are dropped, running ones finish unreported.
    pub fn cancel(&self, job: JobId) -> bool {
        synthesis::cancel(&self.shared, job)
    }

    /// Validates every change, then applies all of them at the next safe points and emits a
    /// `Config` event for each; if any is invalid nothing changes and a refusal is recorded.
    pub fn reconfigure(
        &self,
        changes: &[(String, String)],
        by: &str,
    ) -> Result<Vec<ConfigChange>, ConfigError> {
        reconfigure::apply(&self.shared, changes, by)
    }

    /// Every change applied or refused so far, in order.
    pub fn config_log(&self) -> Vec<ConfigChange> {
        self.shared.state.lock().config_log.clone()
    }

    /// Applies changes at a time from the start or after a number of finished partitions.
    pub fn schedule(&self, plan: Vec<Scheduled>) {
        schedule::install(&self.shared, plan)
    }

    /// Ends the schedule of `schedule`: changes that have not come due are dropped and
    /// logged as not applied, with the reason; returns them. For the end of a run.
    pub fn end_schedule(&self) -> Vec<ConfigChange> {
        schedule::end(&self.shared)
    }

    /// Puts a user annotation on the timeline.
    pub fn mark(&self, label: &str) {
        let t = self.shared.clock.now();
        self.shared
            .bus
            .publish(crate::telemetry::Event::Mark(crate::telemetry::Mark {
                t,
                label: label.to_string(),
            }));
    }

    /// Whether one partition of `loaded` fits each GPU in service (`circuit`: its recorded
    /// matrices, resident where the device evaluates a, b, c): its parameters, matrices and a
    /// worker's buffers against the device's memory or `vram_budget`. An error names the device,
    /// what is needed and what it has: said before the first proof rather than by every one.
    pub fn check_fits(
        &self,
        loaded: &crate::store::Loaded,
        circuit: Option<&Precompiled>,
    ) -> Result<()> {
        let (budget, b_g2, on_devices) = {
            let st = self.shared.state.lock();
            let budget = match st.cfg.vram_budget {
                crate::config::Budget::Bytes(b) => b,
                crate::config::Budget::Auto => u64::MAX,
            };
            (
                budget,
                st.cfg.b_g2_on == crate::config::Placement::Gpu,
                st.abc_on_devices(),
            )
        };
        let matrices = circuit
            .filter(|_| on_devices)
            .map_or(0, |pc| pc.bytes() as u64);
        let p = &loaded.params;
        let g1 = p.h.len() + p.l.len() + p.a.len() + p.b_g1.len();
        let need = crate::backend::cuda::resident_partition_bytes(
            &loaded.shape,
            (g1, p.b_g2.len()),
            matrices,
            b_g2,
        );
        let gb = |b: u64| b as f64 / 1e9;
        for d in self.devices().iter().filter(|d| d.kind == "gpu") {
            let has = d.memory_bytes.min(budget);
            if has > 0 && need > has {
                anyhow::bail!(
                    "{} ({}) cannot prove a partition of this circuit: its parameters ({:.1} GB), \
                     recorded matrices ({:.1} GB) and one worker's buffers need {:.1} GB of device \
                     memory, and it has {:.1} GB{}; the parameters are not streamed from the host \
                     yet, so this size needs a card with more memory",
                    d.id,
                    d.name,
                    gb(loaded.params.bytes() as u64),
                    gb(matrices),
                    gb(need),
                    gb(has),
                    if has < d.memory_bytes {
                        " under vram_budget"
                    } else {
                        ""
                    }
                );
            }
        }
        Ok(())
    }

    /// The devices the engine drives now.
    pub fn devices(&self) -> Vec<crate::telemetry::DeviceInfo> {
        self.shared
            .state
            .lock()
            .devices
            .iter()
            .filter(|d| !d.retiring)
            .map(|d| d.exec.info())
            .collect()
    }

    /// A snapshot of the pipeline now.
    pub fn status(&self) -> Status {
        self.shared.state.lock().status()
    }

    /// Stops accepting work, lets running partitions finish, and joins the workers.
    pub fn shutdown(&self) {
        state::shutdown(&self.shared);
        self.samplers.stop();
    }
}
