//! A GPU as an `Executor`: per partition, uploads a/b/c and the MSM scalars, runs the H
//! pipeline and the H, L, A and B_G1 MSMs on the device, and reads back five points (`region`).
//! The SRS stays resident per parameter set (`srs`); each concurrent worker has its own streams
//! and buffers (`workspace`). A partition that does not fit waits for memory other workers
//! release, or, when nothing else runs, proves on the CPU and says so.

use anyhow::Result;
use cudarc::driver::CudaStream;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::abc::DeviceCircuit;
use super::gpu::{DevBuf, Gpu, OutOfMemory};
use super::shelf::Shelf;
use super::srs::{Srs, SrsKey};
use super::workspace::StreamSet;
use super::{ntt, pinned, prestage, products};
use crate::backend::cpu::CpuExecutor;
use crate::backend::Engine;
use crate::backend::{
    BackendKind, Executor, Gate, Prestaged, RegionInput, RegionResult, StagePlan, Steps, Target,
};
use crate::config::Budget;
use crate::telemetry::accounting::VramPurpose;
use crate::telemetry::DeviceInfo;
use crate::telemetry::Stage;

/// A GPU as an executor (`gpuN`): its resident SRS, NTT tables per domain size, and each worker's
/// streams and buffers; the cpu backend as its fallback for partitions that cannot fit.
pub struct CudaExecutor {
    pub(super) name: String,
    pub(super) gpu: Arc<Gpu>,
    tables: Mutex<HashMap<u32, Arc<ntt::Tables>>>,
    /// The parameter sets resident on the device (`srs`).
    pub(super) srs: Shelf<SrsKey, Srs>,
    /// The pre-compiled circuits whose matrices are resident (`abc`), by digest.
    pub(super) circuits: Shelf<String, DeviceCircuit>,
    /// Whether it was said that a circuit's matrices did not fit.
    abc_on_host: AtomicBool,
    /// Streams and buffers of the workers not in a region now.
    pub(super) idle: Mutex<Vec<StreamSet>>,
    /// Regions running now, and a signal when one ends (memory may have been released).
    running: Mutex<usize>,
    released: Condvar,
    fallback: Mutex<Option<Arc<CpuExecutor>>>,
}

impl CudaExecutor {
    /// Opens GPU `ordinal` (a context and our kernels) as `gpu{ordinal}`.
    pub fn new(ordinal: usize) -> Result<CudaExecutor> {
        let gpu = Gpu::open(ordinal)?;
        Ok(CudaExecutor {
            name: format!("gpu{ordinal}"),
            gpu,
            tables: Mutex::default(),
            srs: Shelf::default(),
            circuits: Shelf::default(),
            abc_on_host: AtomicBool::new(false),
            idle: Mutex::default(),
            running: Mutex::new(0),
            released: Condvar::new(),
            fallback: Mutex::default(),
        })
    }

    /// The GPU it drives, for single operations and copy-rate probes.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Allocates under the VRAM budget; failing that, frees idle workspaces, then resident
    /// parameter sets and circuits no region holds (least recently used first), and retries.
    pub(super) fn alloc(
        &self,
        bytes: usize,
        purpose: VramPurpose,
        budget: Budget,
    ) -> Result<DevBuf> {
        let cap = match budget {
            Budget::Bytes(max) => max,
            Budget::Auto => u64::MAX,
        };
        let mut workspaces_freed = false;
        loop {
            if let Some(held) = self.gpu.vram.try_reserve_under(bytes as u64, cap) {
                match self.gpu.alloc_held(bytes, purpose, held) {
                    Ok(b) => return Ok(b),
                    Err(e) if e.downcast_ref::<OutOfMemory>().is_none() => return Err(e),
                    Err(_) => {}
                }
            }
            if !workspaces_freed {
                workspaces_freed = true;
                for set in self.idle.lock().iter_mut() {
                    set.ws = None;
                }
            } else if !self.evict_idle() {
                return Err(OutOfMemory { bytes }.into());
            }
        }
    }

    /// Drops one resident parameter set or circuit that no region holds; false when none is.
    pub(super) fn evict_idle(&self) -> bool {
        let dropped = self.srs.evict_idle() || self.circuits.evict_idle();
        if dropped {
            tracing::info!(
                "{}: a resident set no proof is using dropped to make room",
                self.name
            );
        }
        dropped
    }

    pub(super) fn tables(
        &self,
        s: &CudaStream,
        log2: u32,
        steps: &mut Steps,
    ) -> Result<Arc<ntt::Tables>> {
        let mut t = self.tables.lock();
        if let Some(x) = t.get(&log2) {
            return Ok(x.clone());
        }
        let start = Instant::now();
        let x = Arc::new(ntt::Tables::build(&self.gpu, s, log2)?);
        steps.push(Stage::Resident, Engine::Compute, start, 0);
        t.insert(log2, x.clone());
        Ok(x)
    }

    fn cpu(&self) -> Result<Arc<CpuExecutor>> {
        let mut f = self.fallback.lock();
        if f.is_none() {
            *f = Some(Arc::new(CpuExecutor::new(0, crate::config::cores())?));
        }
        Ok(f.clone().expect("set above"))
    }

    /// Runs the region, waiting for memory while other regions hold it.
    fn run(
        &self,
        input: &mut RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        self.gpu.bind()?;
        let mut set = self.take_set(input.urgent)?;
        let result = self
            .circuit_for(&mut set, input, steps)
            .and_then(|c| self.region(&mut set, input, c.as_deref(), gate, steps));
        self.idle.lock().push(set);
        result
    }

    /// The resident matrices a, b and c are evaluated with on the device, when the region is
    /// to evaluate them; if they do not fit the budget, a, b and c are evaluated on the host
    /// instead (and said once).
    fn circuit_for(
        &self,
        set: &mut StreamSet,
        input: &mut RegionInput<'_>,
        steps: &mut Steps,
    ) -> Result<Option<Arc<DeviceCircuit>>> {
        let Some(pc) = input.circuit else {
            return Ok(None);
        };
        let copy = set.copy.clone();
        match self.device_circuit(&mut set.staging, &copy, pc, input.opts.vram_budget, steps) {
            Ok(c) => Ok(Some(c)),
            Err(e) if e.downcast_ref::<OutOfMemory>().is_some() => {
                if !self.abc_on_host.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "{}: the circuit's matrices do not fit on the device ({e}); a, b and c are evaluated on the host",
                        self.name
                    );
                }
                let start = std::time::Instant::now();
                input.restore_abc()?;
                steps.push(Stage::AbcEval, Engine::Host, start, 0);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

impl Executor for CudaExecutor {
    fn device(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            id: self.name.clone(),
            name: self.gpu.name.clone(),
            kind: "gpu".into(),
            memory_bytes: self.gpu.total_memory,
            pcie: None,
        }
    }

    fn stage_target(&self, plan: StagePlan) -> Option<Box<dyn Target>> {
        let layout = prestage::Layout::plan(plan);
        let block = match pinned::pool(&self.gpu).take(layout.bytes) {
            Ok(Some(b)) => b,
            // Page-locked memory is at its cap: this partition stages as its region goes.
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!("{}: no page-locked memory for prestaging: {e:#}", self.name);
                return None;
            }
        };
        Some(Box::new(prestage::Filling {
            block,
            layout,
            counters: self.gpu.counters.clone(),
        }))
    }

    fn setup_products(&self) -> Option<Arc<dyn crate::params::setup::Products>> {
        Some(Arc::new(products::GpuProducts {
            gpu: self.gpu.clone(),
        }))
    }

    fn evaluates_abc(&self) -> bool {
        true
    }

    fn reserve_prestage(&self, plan: StagePlan, count: usize) -> Result<u64> {
        let bytes = prestage::Layout::plan(plan).bytes;
        let free = pinned::pool(&self.gpu).reserve(bytes, count)?;
        Ok((free * bytes) as u64)
    }

    fn prove_region(
        &self,
        input: RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        let mut input = input;
        let ours = |p: &Prestaged| p.data.as_any().is::<prestage::Witness>();
        if !input.prestaged.is_some_and(ours) && input.circuit.is_none() {
            input.restore_abc()?;
        }
        *self.running.lock() += 1;
        let mut result = self.run(&mut input, gate, steps);
        {
            let mut running = self.running.lock();
            *running -= 1;
            self.released.notify_all();
        }
        // Out of memory: wait while other regions may release some, then prove on the CPU.
        let mut waited = false;
        while let Err(e) = &result {
            if e.downcast_ref::<OutOfMemory>().is_none() {
                break;
            }
            let mut running = self.running.lock();
            if *running > 0 {
                if !waited {
                    tracing::warn!(
                        "{}: {e}; waiting for another worker to release device memory",
                        self.name
                    );
                    waited = true;
                }
                self.released.wait(&mut running);
                drop(running);
                *self.running.lock() += 1;
                result = self.run(&mut input, gate, steps);
                let mut running = self.running.lock();
                *running -= 1;
                self.released.notify_all();
            } else {
                drop(running);
                // Nothing else holds device memory: this partition does not fit here. The CPU
                // proves it only where the host has room for what that takes (a 2^27
                // partition: 26 GB more, and minutes): a run at production size is not to be
                // ended by the host's OOM killer.
                let need = crate::pipeline::partition_bytes(1 << input.log2_domain);
                let free = crate::hostmem::available_memory().unwrap_or(0);
                if free < need.saturating_mul(2) {
                    anyhow::bail!(
                        "{}: {e} with no other partition on the device: a partition of 2^{} rows \
                         does not fit its memory beside the resident parameters and circuit \
                         (see the VRAM view), and the host has {:.1} GB available of the {:.1} GB \
                         the CPU would need to prove it instead",
                        self.name,
                        input.log2_domain,
                        free as f64 / 1e9,
                        need as f64 * 2.0 / 1e9
                    );
                }
                tracing::warn!(
                    "{}: {e}; this partition proves on the CPU instead",
                    self.name
                );
                return self.cpu()?.prove_region(input, gate, steps);
            }
        }
        result
    }
}
