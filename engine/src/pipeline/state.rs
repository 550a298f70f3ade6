//! The pipeline's shared state, guarded by one mutex: queues, jobs, devices and pools.

use anyhow::Result;
use rayon::ThreadPool;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use super::locks::{new_lock, DeviceLock};
use super::pools::SynthesisPools;
use super::{DeviceStatus, JobId, JobSpec, Priority, Shared, Status};
use crate::backend::{Executor, Msms, Prestaged};
use crate::circuit::precompiled::Precompiled;
use crate::circuit::Assignment;
use crate::config::{Budget, EngineConfig};
use crate::hostmem::available_memory;
use crate::memory::{MemoryBudget, Reservation};
use crate::store::Loaded;
use crate::telemetry::{ConfigChange, Stage};

/// Synthesised partitions that may wait for a device, beyond those in synthesis. Keeps host
/// memory bounded however many jobs are submitted.
pub(crate) const QUEUE_SLACK: usize = 2;

pub(crate) struct Ticket {
    pub job: JobId,
    pub partition: u32,
    /// The job's, copied so the queues order by it without the job table.
    pub priority: Priority,
}

/// Something queued in a priority class.
pub(crate) trait Classed {
    fn priority(&self) -> Priority;
}

impl Classed for Ticket {
    fn priority(&self) -> Priority {
        self.priority
    }
}

impl Classed for Ready {
    fn priority(&self) -> Priority {
        self.ticket.priority
    }
}

/// Queues `item` behind everything of its class or above and ahead of every lower class.
pub(crate) fn enqueue<T: Classed>(q: &mut VecDeque<T>, item: T) {
    let at = q
        .iter()
        .position(|x| x.priority() < item.priority())
        .unwrap_or(q.len());
    q.insert(at, item);
}

/// Queues `item` ahead of everything of its class and below: work put back goes first again.
pub(crate) fn requeue<T: Classed>(q: &mut VecDeque<T>, item: T) {
    let at = q
        .iter()
        .position(|x| x.priority() <= item.priority())
        .unwrap_or(q.len());
    q.insert(at, item);
}

pub(crate) struct Ready {
    pub ticket: Ticket,
    pub asg: Assignment,
    pub msms: Msms,
    pub loaded: Arc<Loaded>,
    pub queued: Instant,
    pub stages: BTreeMap<Stage, f64>,
    /// The partition's host memory in the budget, held until its proof is reported. Dropped
    /// (or `release`d) with the state locked: the dispatcher waits on it there.
    pub host: Reservation,
    /// The witness as a device's backend laid it out after synthesis (`prestage`).
    pub prestaged: Option<Prestaged>,
    /// The recorded circuit a, b and c are still to be evaluated with, in the region
    /// (`Executor::evaluates_abc`); None when synthesis evaluated them.
    pub circuit: Option<Arc<Precompiled>>,
    /// A CRITICAL partition's hold on the devices, until its region starts.
    pub hold: Option<super::holds::Hold>,
}

pub(crate) struct Job {
    pub spec: JobSpec,
    pub loaded: Arc<Loaded>,
    /// The recorded circuit its partitions are evaluated with, when `precompiled` was on at
    /// submission.
    pub precompiled: Option<Arc<Precompiled>>,
    pub remaining: u32,
    pub verified: u32,
    pub failed: u32,
    pub cancelled: u32,
    pub is_cancelled: bool,
    /// Host bytes one partition of this job holds from synthesis to its proof.
    pub bytes: u64,
}

pub(crate) struct Device {
    pub exec: Arc<dyn Executor>,
    pub lock: Arc<dyn DeviceLock>,
    pub target: usize,
    /// Worker slots in use; a worker's slot names its lane.
    pub slots: Vec<bool>,
    /// Of the slots in use, those of workers for one CRITICAL partition each, beyond
    /// `target` (`worker::spawn_urgent`).
    pub urgent: usize,
    pub retiring: bool,
    /// Why the device was taken out of service (a `DeviceFault`); it never comes back.
    pub failed: Option<String>,
}

impl Device {
    /// Workers of this device now, urgent ones included.
    pub fn running(&self) -> usize {
        self.slots.iter().filter(|s| **s).count()
    }

    /// Workers that count against `target`: the urgent ones leave by themselves.
    pub fn regular(&self) -> usize {
        self.running() - self.urgent
    }
}

pub(crate) struct State {
    pub cfg: EngineConfig,
    pub jobs: BTreeMap<JobId, Job>,
    pub next_job: JobId,
    pub pending: VecDeque<Ticket>,
    pub synthesizing: usize,
    pub ready: VecDeque<Ready>,
    pub proving: usize,
    /// Workers waiting for a synthesised partition now.
    pub idle_workers: usize,
    pub devices: Vec<Device>,
    pub synthesis: SynthesisPools,
    pub prover_pool: Arc<ThreadPool>,
    /// Host memory of partitions between synthesis and their proof (`host_memory_budget`).
    pub host: Arc<MemoryBudget>,
    /// Host memory held for the whole run (parameters, recorded circuits, page-locked blocks):
    /// partitions get what it leaves of `host`'s limit.
    pub resident: Arc<MemoryBudget>,
    /// The page-locked prestaging blocks' bytes, counted in `resident`.
    pub prestaged: Option<Reservation>,
    pub finished: u64,
    pub config_log: Vec<ConfigChange>,
    /// Changes waiting for the N-th finished partition.
    pub after_partitions: Vec<(u64, Vec<(String, String)>)>,
    /// Changes waiting for a time (seconds from `scheduled_at`), soonest first.
    pub after_seconds: Vec<(f64, Vec<(String, String)>)>,
    /// When the schedule was installed: where its times count from.
    pub scheduled_at: Option<Instant>,
    pub shutdown: bool,
    pub threads: Vec<JoinHandle<()>>,
}

pub(crate) fn pool(name: &'static str, threads: usize) -> Result<Arc<ThreadPool>> {
    pool_with(name, threads, || {})
}

/// A pool of `threads` named `name-i`, each running `start` first.
pub(crate) fn pool_with(
    name: &'static str,
    threads: usize,
    start: fn(),
) -> Result<Arc<ThreadPool>> {
    Ok(Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("{name}-{i}"))
            .start_handler(move |_| start())
            .build()?,
    ))
}

/// Bytes of host memory the engine may hold: the budget, or 80 % of what is available.
pub(crate) fn host_budget(b: Budget) -> u64 {
    match b {
        Budget::Bytes(n) => n,
        Budget::Auto => available_memory().map(|m| m / 5 * 4).unwrap_or(u64::MAX),
    }
}

impl State {
    pub fn new(cfg: EngineConfig) -> Result<Self> {
        Ok(State {
            synthesis: SynthesisPools::new(cfg.synthesis_workers, cfg.synthesis_threads)?,
            prover_pool: pool("prover", cfg.prover_threads)?,
            host: MemoryBudget::new(host_budget(cfg.host_memory_budget)),
            resident: MemoryBudget::new(u64::MAX),
            prestaged: None,
            cfg,
            jobs: BTreeMap::new(),
            next_job: 0,
            pending: VecDeque::new(),
            synthesizing: 0,
            ready: VecDeque::new(),
            proving: 0,
            idle_workers: 0,
            devices: vec![],
            finished: 0,
            config_log: vec![],
            after_partitions: vec![],
            after_seconds: vec![],
            scheduled_at: None,
            shutdown: false,
            threads: vec![],
        })
    }

    pub fn add_device(&mut self, exec: Arc<dyn Executor>) {
        self.devices.push(Device {
            exec,
            lock: Arc::from(new_lock(self.cfg.lock)),
            target: self.cfg.gpu_workers_per_device,
            slots: vec![],
            urgent: 0,
            retiring: false,
            failed: None,
        });
    }

    /// Whether every device in service evaluates a pre-compiled circuit's a, b and c itself
    /// (`Executor::evaluates_abc`: the cuda backend, from its resident matrices).
    pub fn abc_on_devices(&self) -> bool {
        let mut in_service = self.devices.iter().filter(|d| !d.retiring).peekable();
        in_service.peek().is_some() && in_service.all(|d| d.exec.evaluates_abc())
    }

    /// Whether the dispatcher may start synthesising another partition now.
    pub fn can_synthesize(&self) -> bool {
        let Some(next) = self.pending.front() else {
            return false;
        };
        let workers = self.cfg.synthesis_workers;
        let bytes = self.jobs.get(&next.job).map_or(0, |j| j.bytes);
        // Critical work waits neither for a worker nor for the device queue to drain: it
        // starts on the critical pool at once and goes ahead of what waits for a device.
        let admitted = next.priority == Priority::Critical
            || (self.synthesizing < workers
                && self.synthesis.has_idle()
                && self.synthesizing + self.ready.len() < self.synthesized_bound());
        admitted
            // One partition is always admitted, so a budget smaller than a partition slows
            // the engine to one at a time instead of stopping it.
            && (self.host.in_use() == 0 || self.host.fits_under(bytes, self.partitions_room()))
    }

    /// What the host budget leaves partitions beside the memory held for the whole run.
    pub fn partitions_room(&self) -> u64 {
        self.host.limit().saturating_sub(self.resident.in_use())
    }

    /// The most partitions synthesising or synthesised and waiting for a device at once.
    pub fn synthesized_bound(&self) -> usize {
        self.cfg.synthesis_workers + QUEUE_SLACK
    }

    pub fn status(&self) -> Status {
        Status {
            jobs_open: self.jobs.len(),
            partitions_pending: self.pending.len(),
            synthesizing: self.synthesizing,
            queued: self.ready.len(),
            proving: self.proving,
            finished_partitions: self.finished,
            host_bytes_in_use: self.host.in_use(),
            devices: self
                .devices
                .iter()
                .filter(|d| !d.retiring)
                .map(|d| DeviceStatus {
                    name: d.exec.device().to_string(),
                    workers: d.regular(),
                    lock: format!("{:?}", d.lock.strategy()),
                })
                .collect(),
        }
    }
}

/// Stops the dispatcher and workers once running work is done, and waits for them.
pub(crate) fn shutdown(shared: &Shared) {
    let threads = {
        let mut st = shared.state.lock();
        st.shutdown = true;
        std::mem::take(&mut st.threads)
    };
    shared.cv.notify_all();
    for t in threads {
        let _ = t.join();
    }
}
