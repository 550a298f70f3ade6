//! Executors: where a partition's NTTs and MSMs run. The `cpu` backend is always there; the
//! `cuda` backend runs our own kernels when a GPU and its driver are present.

pub mod cpu;
pub mod cuda;

use anyhow::Result;
use blstrs::{G1Projective, G2Projective, Scalar};
use std::sync::Arc;
use std::time::Instant;

use crate::circuit::precompiled::Precompiled;
use crate::circuit::Assignment;
use crate::params::Parameters;
use crate::telemetry::Stage;

/// The kind of backend is a config type; it lives with the config in the contract crate.
pub use crate::config::BackendKind;

/// The backend `auto` stands for on this machine, with the reason when it is not cuda.
pub fn resolve(kind: BackendKind) -> (BackendKind, Option<String>) {
    match kind {
        BackendKind::Auto => match cuda::probe().unavailable() {
            None => (BackendKind::Cuda, None),
            Some(why) => (BackendKind::Cpu, Some(why)),
        },
        k => (k, None),
    }
}

/// Where a timed step ran: one of a device's engines, or the worker's own thread (waiting for
/// a lock, allocating, planning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The worker's own thread on the host: lock waits, allocations, planning.
    Host,
    /// The device's compute (kernels on a GPU, the pool's threads on a cpu executor).
    Compute,
    /// The device's host-to-device copy engine.
    H2d,
    /// The device's device-to-host copy engine.
    D2h,
}

/// One timed step of a partition on a device.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// What the step did.
    pub stage: Stage,
    /// Where it ran, and so the lane its span is published on.
    pub engine: Engine,
    /// When it began, on the host's clock (a GPU's events are placed on it).
    pub start: Instant,
    /// When it ended, on the host's clock.
    pub end: Instant,
    /// Bytes copied or allocated; 0 for compute and waits.
    pub bytes: u64,
}

/// Called with each step as soon as it is recorded: the pipeline publishes it as a span then,
/// not when the region ends.
pub type StepSink = Box<dyn FnMut(&Step) + Send>;

/// The steps a partition went through, in the order they were recorded, each handed to the
/// sink (if any) as it is recorded.
#[derive(Default)]
pub struct Steps {
    steps: Vec<Step>,
    sink: Option<StepSink>,
    /// From this step on, recorded but not yet handed to the sink (`hold`).
    held: Option<usize>,
}

impl Steps {
    /// Steps that go to `sink` as they are recorded.
    pub fn publishing(sink: StepSink) -> Steps {
        Steps {
            steps: vec![],
            sink: Some(sink),
            held: None,
        }
    }

    /// Records a step whose times are known.
    pub fn record(&mut self, step: Step) {
        if let (Some(sink), None) = (&mut self.sink, self.held) {
            sink(&step);
        }
        self.steps.push(step);
    }

    /// Steps recorded from now on wait for `release` before they reach the sink: between
    /// taking the device's lock and launching its kernels, where publishing a span (an event
    /// cloned to each subscriber, each woken) kept the device idle 10-20 µs a step.
    pub fn hold(&mut self) {
        self.held.get_or_insert(self.steps.len());
    }

    /// Hands the held steps to the sink; nothing when none are held.
    pub fn release(&mut self) {
        if let (Some(from), Some(sink)) = (self.held.take(), &mut self.sink) {
            self.steps[from..].iter().for_each(sink);
        }
    }

    /// Records a step from `start` to now.
    pub fn push(&mut self, stage: Stage, engine: Engine, start: Instant, bytes: u64) {
        self.record(Step {
            stage,
            engine,
            start,
            end: Instant::now(),
            bytes,
        });
    }

    /// Runs `f` as one compute step.
    pub fn time<T>(&mut self, stage: Stage, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        self.push(stage, Engine::Compute, start, 0);
        out
    }

    /// Every step recorded so far.
    pub fn all(&self) -> &[Step] {
        &self.steps
    }
}

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.steps).finish()
    }
}

/// The live settings a region runs under, read from the config when the partition starts.
#[derive(Clone, Copy, Debug)]
pub struct RegionOptions {
    /// Whether the witness may come laid out by `Executor::stage_target` (config `prestage`).
    pub prestage: bool,
    /// Off, the GPU synchronises after each MSM instead of overlapping them, for comparison (config
    /// `msm_double_buffer`).
    pub msm_double_buffer: bool,
    /// Whether the SRS stays on the device between partitions (config `srs_residency`; `host`
    /// uploads it each time).
    pub srs_residency: crate::config::Residency,
    /// Whether H's MSM may run over shifted copies of its bases when they fit (config
    /// `shifted_bases`).
    pub shifted_bases: crate::config::ShiftedBases,
    /// The most device memory in bytes the engine holds on a device, `auto` what the driver gives
    /// (config `vram_budget`).
    pub vram_budget: crate::config::Budget,
    /// Workers sharing a device: the room its resident data must leave them.
    pub workers_per_device: usize,
}

impl Default for RegionOptions {
    fn default() -> Self {
        let c = crate::config::EngineConfig::default();
        RegionOptions::from(&c)
    }
}

impl From<&crate::config::EngineConfig> for RegionOptions {
    fn from(c: &crate::config::EngineConfig) -> Self {
        RegionOptions {
            prestage: c.prestage,
            msm_double_buffer: c.msm_double_buffer,
            srs_residency: c.srs_residency,
            shifted_bases: c.shifted_bases,
            vram_budget: c.vram_budget,
            workers_per_device: c.gpu_workers_per_device,
        }
    }
}

/// The scalars of the A and B MSMs, gathered by density to line up with the queries' bases
/// (bellperson drops the points at infinity, i.e. the unused variables, from A and B):
/// `prover::prepare` makes them, an executor's region reads them.
pub struct Msms {
    /// Inputs (A is dense in inputs) then the aux variables A uses.
    pub a: Vec<Scalar>,
    /// The inputs, then the aux variables, that B uses.
    pub b: Vec<Scalar>,
}

/// What a device computes for one partition: the H, L, A and B MSMs.
#[derive(Clone, Copy, Debug)]
pub struct RegionResult {
    /// Σ h_i · H_i: the H polynomial's coefficients over the H query.
    pub h: G1Projective,
    /// The aux assignment over the L query.
    pub l: G1Projective,
    /// `Msms::a` over the A query.
    pub a: G1Projective,
    /// `Msms::b` over B's query in G1.
    pub b_g1: G1Projective,
    /// `Msms::b` over B's query in G2, when it ran on the device (`RegionInput::b_g2`); None leaves
    /// it to the finalizer.
    pub b_g2: Option<G2Projective>,
}

/// The evaluations and scalars a device works on for one partition.
pub struct RegionInput<'a> {
    /// A(z), B(z), C(z); empty when `prestaged` holds them or `circuit` is to give them.
    pub abc: [Vec<Scalar>; 3],
    /// A pre-compiled circuit whose matrices give a, b and c from `input` and `aux`, when they
    /// are left to the region (`Executor::evaluates_abc`): the cuda backend evaluates them on
    /// the device, any other executor on the host (`restore_abc`).
    pub circuit: Option<&'a Precompiled>,
    /// The public inputs, the constant one first.
    pub input: &'a [Scalar],
    /// log2 of the NTT domain: the assignment's rows rounded up to a power of two.
    pub log2_domain: u32,
    /// The aux assignment: the L MSM's scalars.
    pub aux: &'a [Scalar],
    /// The A and B MSMs' scalars.
    pub msms: &'a Msms,
    /// The parameter set whose queries are the MSMs' bases.
    pub params: &'a Parameters,
    /// Whether B in G2 runs here (`b_g2_on = gpu`) rather than in the finalizer.
    pub b_g2: bool,
    /// The live settings the region runs under.
    pub opts: RegionOptions,
    /// What the executor's `prestage` laid out after synthesis, if it did.
    pub prestaged: Option<&'a Prestaged>,
    /// A CRITICAL partition's region (a WinningPoSt with a block at stake): it runs beside
    /// the region in flight rather than after it, on the device's most urgent streams.
    pub urgent: bool,
}

/// A partition's witness as an executor laid it out on the host right after synthesis (the
/// cuda backend: in page-locked memory, ready for the copy engines). Its layout is the maker's
/// business; any other executor takes a/b/c back as vectors (`RegionInput::restore_abc`).
pub struct Prestaged {
    /// Rows of the assignment (its a/b/c may have moved here).
    pub rows: usize,
    /// The witness in its maker's layout.
    pub data: Box<dyn Staged>,
}

/// What a `Prestaged` holds.
pub trait Staged: Send + Sync + 'static {
    /// A(z), B(z), C(z), copied back out.
    fn abc(&self) -> [Vec<Scalar>; 3];
    /// For the maker to recognise its own layout.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// What a partition's prestaged witness holds room for: a, b and c of `rows` each, or, when
/// their evaluation is left to the device, the `witness` values (inputs, then aux) they come
/// from; and the L, A and B MSMs' scalars (`tails` of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagePlan {
    /// Rows of the assignment.
    pub rows: usize,
    /// The lengths of the L, A and B MSMs.
    pub tails: [usize; 3],
    /// Inputs plus aux when a, b and c are evaluated on the device; None when they are staged.
    pub witness: Option<usize>,
}

/// A prestaged witness being made: see `Executor::stage_target`.
pub trait Target: Send {
    /// Where A(z), B(z), C(z) go, each `rows` long (empty when the plan left them to the
    /// device).
    fn abc(&mut self) -> [&mut [Scalar]; 3];
    /// Lays out the MSMs' scalars once synthesis has written a/b/c.
    fn finish(self: Box<Self>, asg: &Assignment, msms: &Msms) -> Prestaged;
}

/// Prestages an assignment synthesised into its own vectors (outside the pipeline): a/b/c move
/// into `exec`'s target, which then holds the whole witness (or, an assignment whose a/b/c are
/// left to the device, `deferred`, its inputs and aux). None as `stage_target`.
pub fn prestage(
    exec: &dyn Executor,
    asg: &mut Assignment,
    msms: &Msms,
    deferred: bool,
) -> Option<Prestaged> {
    let plan = StagePlan {
        rows: asg.num_rows(),
        tails: [asg.aux.len(), msms.a.len(), msms.b.len()],
        witness: deferred.then(|| asg.input.len() + asg.aux.len()),
    };
    let mut target = exec.stage_target(plan)?;
    if !deferred {
        asg.move_abc_into(target.abc());
    }
    Some(target.finish(asg, msms))
}

impl<'a> RegionInput<'a> {
    /// Puts a/b/c into `abc` when they are not there: evaluated on the host when they were
    /// left to the region (`circuit`), copied back when they moved into `prestaged`. For an
    /// executor that does not read the prestaged layout or evaluate on the device (a CPU
    /// fallback, another backend).
    pub fn restore_abc(&mut self) -> Result<()> {
        if !self.abc[0].is_empty() {
            return Ok(());
        }
        if let Some(pc) = self.circuit.take() {
            self.abc = pc.abc(self.input, self.aux, None)?;
        } else if let Some(p) = self.prestaged {
            self.abc = p.data.abc();
        }
        Ok(())
    }

    /// The same input with a, b and c left to `circuit` (the assignment's were left empty by
    /// `Precompiled::deferred`).
    pub fn with_circuit(mut self, circuit: Option<&'a Precompiled>) -> Self {
        self.circuit = circuit;
        self
    }

    /// The same input, marked urgent (a CRITICAL partition) or not.
    pub fn with_urgent(mut self, urgent: bool) -> Self {
        self.urgent = urgent;
        self
    }

    /// Moves the evaluations out of `asg`, which keeps the witness for the finalizer.
    pub fn new(
        asg: &'a mut Assignment,
        msms: &'a Msms,
        params: &'a Parameters,
        b_g2: bool,
        opts: RegionOptions,
        prestaged: Option<&'a Prestaged>,
    ) -> Self {
        let rows = prestaged.map_or(asg.num_rows(), |p| p.rows);
        let log2_domain = rows.next_power_of_two().trailing_zeros();
        let abc = [
            std::mem::take(&mut asg.a),
            std::mem::take(&mut asg.b),
            std::mem::take(&mut asg.c),
        ];
        RegionInput {
            abc,
            circuit: None,
            input: &asg.input,
            log2_domain,
            aux: &asg.aux,
            msms,
            params,
            b_g2,
            opts,
            prestaged,
            urgent: false,
        }
    }
}

/// An executor error that condemns the device rather than the partition (a driver error):
/// the pipeline retires the device and proves its partitions on the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFault(pub String);

impl std::fmt::Display for DeviceFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "device fault: {}", self.0)
    }
}

impl std::error::Error for DeviceFault {}

/// The gate an executor passes through: `memory` before it allocates or stages device memory,
/// `compute` before its first kernel. The lock strategy behind it decides who waits; waits
/// are recorded as `lock_wait` steps.
pub trait Gate {
    /// Passes the gate before device memory is allocated or staged (waiting if the strategy says
    /// so, the wait recorded in `steps`).
    fn memory(&mut self, steps: &mut Steps);
    /// Passes the gate before the first kernel (waiting if the strategy says so, the wait recorded
    /// in `steps`).
    fn compute(&mut self, steps: &mut Steps);
}

/// A device: the part of a partition's proof that a GPU (or a CPU stand-in) computes.
pub trait Executor: Send + Sync {
    /// `cpu0`, `gpu1`: the device's name in telemetry and reports.
    fn device(&self) -> &str;
    /// The backend the device belongs to.
    fn kind(&self) -> BackendKind;
    /// What the dashboard shows about the device.
    fn info(&self) -> crate::telemetry::DeviceInfo;
    /// H from the evaluations, then the H, L, A, B_G1 (and maybe B_G2) MSMs.
    fn prove_region(
        &self,
        input: RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult>;
    /// A place for one partition's witness laid out for this device's copies, planned before
    /// synthesis: synthesis writes a/b/c into it (unless the plan leaves them to the device),
    /// then `Target::finish` adds the MSMs' scalars (and the witness values). None when the
    /// backend has nothing to do there or no room: the region then stages as it goes.
    fn stage_target(&self, _plan: StagePlan) -> Option<Box<dyn Target>> {
        None
    }
    /// Whether the region evaluates a pre-compiled circuit's a, b and c itself, from the
    /// witness (`RegionInput::circuit`), faster than the host would: synthesis then computes
    /// the witness alone.
    fn evaluates_abc(&self) -> bool {
        false
    }
    /// Where parameter generation may compute its fixed-base products on this device.
    fn setup_products(&self) -> Option<Arc<dyn crate::params::setup::Products>> {
        None
    }
    /// Makes room ahead of time for `count` partitions' prestaged witnesses as `plan` lays
    /// them out; returns the bytes set aside.
    fn reserve_prestage(&self, _plan: StagePlan, _count: usize) -> Result<u64> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn held_steps_reach_the_sink_on_release_in_order_and_once() {
        let seen = Arc::new(Mutex::new(vec![]));
        let s2 = seen.clone();
        let mut steps =
            Steps::publishing(Box::new(move |s: &Step| s2.lock().unwrap().push(s.stage)));
        let t = Instant::now();
        steps.push(Stage::H2d, Engine::H2d, t, 0);
        steps.hold();
        steps.push(Stage::LockWait, Engine::Host, t, 0);
        steps.push(Stage::Alloc, Engine::Host, t, 0);
        assert_eq!(*seen.lock().unwrap(), vec![Stage::H2d]);
        steps.release();
        steps.release();
        steps.push(Stage::NttH, Engine::Compute, t, 0);
        let want = vec![Stage::H2d, Stage::LockWait, Stage::Alloc, Stage::NttH];
        assert_eq!(*seen.lock().unwrap(), want);
        assert_eq!(steps.all().len(), 4);
    }
}
