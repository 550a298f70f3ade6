//! The cuda backend: our kernels from `cuda/`, loaded from the fatbin the binary embeds and
//! launched through the CUDA driver API (cudarc, loaded at run time). Without a driver, a GPU
//! or kernels, the engine keeps running on the cpu backend and `probe` says why.

/// The kernels' launch constants, read from cuda/msm and cuda/ntt by engine/build.rs.
#[allow(dead_code)]
mod consts {
    include!(concat!(env!("OUT_DIR"), "/kernel_consts.rs"));
}
mod abc;
mod executor;
mod gpu;
pub mod msm;
pub mod ntt;
mod ops;
mod pinned;
mod prestage;
mod products;
mod region;
mod shelf;
mod srs;
mod workspace;

pub use ops::{NttKind, UploadRates};

pub use executor::CudaExecutor;
/// One GPU's copy and launch wrappers, public for their documented contracts (the copy
/// guards' doctests show what does not compile).
pub use gpu::{Gpu, InFlight};

/// The least `vram_budget` a worker proves one partition of `shape` in: its buffers at their
/// largest (the SRS streamed from the host), B in G2's too when it runs on the device.
pub fn partition_vram_bytes(shape: &crate::circuit::Shape, b_g2: bool) -> u64 {
    let msm_n = shape.num_inputs + shape.num_aux;
    workspace::another_workers_bytes(shape.log2_domain(), msm_n, b_g2) as u64
}

/// Device memory one worker proves a partition of `shape` in with its parameter set on the
/// device: the set's `g1` and `g2` query points (G2 only when B in G2 runs there, `b_g2`), the
/// recorded matrices (`circuit_bytes`, where the device evaluates a, b, c) and the worker's
/// buffers. A 32 GiB PoRep partition needs more than an 80 GB card holds.
pub fn resident_partition_bytes(
    shape: &crate::circuit::Shape,
    (g1, g2): (usize, usize),
    circuit_bytes: u64,
    b_g2: bool,
) -> u64 {
    let g2 = if b_g2 { g2 * 192 } else { 0 };
    (g1 * 96 + g2) as u64 + circuit_bytes + partition_vram_bytes(shape, b_g2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::Workload;

    #[test]
    fn one_partition_at_2_27_fits_the_h200_it_proved_on_and_not_an_80_gb_card() {
        // The synthetic 2^27 set: A and B over every variable. It proved on an H200 (150 GB)
        // with one worker, B in G2 there, peaking at 124.7 GB (bench/results/h200-2026-11-30e).
        let shape = Workload::Synthetic {
            log2_constraints: 27,
        }
        .shape()
        .unwrap();
        let vars = shape.num_inputs + shape.num_aux;
        let g1 = (1 << 27) - 1 + shape.num_aux + 2 * vars;
        let need = resident_partition_bytes(&shape, (g1, vars), 7_000_000_000, true);
        assert!(need > partition_vram_bytes(&shape, true));
        assert!(need > 85_520_000_000, "{need}: an 80 GB card's 81,559 MiB");
        assert!(need < 150_000_000_000, "{need}: the H200 it proved on");
    }
}

use cudarc::driver::{CudaContext, CudaModule};
use serde::Serialize;
use std::sync::{Arc, OnceLock};

/// The kernels as embedded by the binary, registered once at start.
static KERNELS: OnceLock<Result<Kernels, String>> = OnceLock::new();

/// The kernels a binary embeds, handed to `register` at start.
#[derive(Clone, Copy)]
pub struct Kernels {
    /// The fatbin nvcc made of cuda/provetop.cu.
    pub fatbin: &'static [u8],
    /// `sm_80,…,sm_90,compute_90`.
    pub archs: &'static str,
}

/// Tells the engine which kernels the binary carries (or why it carries none).
pub fn register(kernels: Result<Kernels, String>) {
    let _ = KERNELS.set(kernels);
}

fn kernels() -> Result<Kernels, String> {
    KERNELS
        .get()
        .cloned()
        .unwrap_or_else(|| Err("this program embeds no CUDA kernels".into()))
}

/// One GPU as `probe` found it.
#[derive(Clone, Debug, Serialize)]
pub struct GpuInfo {
    /// The CUDA device ordinal.
    pub ordinal: usize,
    /// The device's name (empty when no context could be created).
    pub name: String,
    /// (major, minor); (0, 0) when unknown.
    pub compute_capability: (i32, i32),
    /// Device memory in bytes; 0 when unknown.
    pub memory_bytes: u64,
    /// Whether our kernels loaded on it, or why not.
    pub usable: Result<(), String>,
}

/// What the cuda backend found on this machine: driver, kernels and GPUs, each with why not when
/// missing.
#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    /// The driver's CUDA version (`CUDA 12.4`), or why there is no usable driver.
    pub driver: Result<String, String>,
    /// The architectures the embedded kernels are built for, or why the binary has none.
    pub kernels: Result<String, String>,
    /// Every GPU the driver lists, usable or not (empty without a driver).
    pub gpus: Vec<GpuInfo>,
}

impl Probe {
    /// Ordinals of the GPUs the cuda backend can use.
    pub fn usable(&self) -> Vec<usize> {
        self.gpus
            .iter()
            .filter(|g| g.usable.is_ok())
            .map(|g| g.ordinal)
            .collect()
    }

    /// Why the cuda backend cannot run here, if it cannot.
    pub fn unavailable(&self) -> Option<String> {
        if let Err(e) = &self.driver {
            return Some(e.clone());
        }
        if let Err(e) = &self.kernels {
            return Some(e.clone());
        }
        if self.gpus.is_empty() {
            return Some("the CUDA driver reports no GPU".into());
        }
        if self.usable().is_empty() {
            let why: Vec<String> = self
                .gpus
                .iter()
                .map(|g| {
                    format!(
                        "gpu{}: {}",
                        g.ordinal,
                        g.usable.as_ref().err().cloned().unwrap_or_default()
                    )
                })
                .collect();
            return Some(format!("no GPU can run our kernels ({})", why.join("; ")));
        }
        None
    }
}

fn driver_version() -> Result<String, String> {
    let mut v = 0i32;
    // SAFETY: only called once libcuda is known to be present.
    let r = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
    if r != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        return Err(format!("cuDriverGetVersion failed: {r:?}"));
    }
    Ok(format!("CUDA {}.{}", v / 1000, v % 1000 / 10))
}

/// Looks for the driver, the GPUs and the kernels, never panicking when any is missing.
pub fn probe() -> Probe {
    let kernels = kernels().map(|k| k.archs.to_string());
    // SAFETY: checks for the library before any driver call, which cudarc would panic on.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Probe {
            driver: Err("no CUDA driver (libcuda) on this machine".into()),
            kernels,
            gpus: vec![],
        };
    }
    let count = match CudaContext::device_count() {
        Ok(n) => n.max(0) as usize,
        Err(e) => {
            return Probe {
                driver: Err(format!("the CUDA driver did not initialise: {e}")),
                kernels,
                gpus: vec![],
            }
        }
    };
    let gpus = (0..count)
        .map(|ordinal| match CudaContext::new(ordinal) {
            Ok(ctx) => GpuInfo {
                ordinal,
                name: ctx.name().unwrap_or_default(),
                compute_capability: ctx.compute_capability().unwrap_or((0, 0)),
                memory_bytes: ctx.total_mem().unwrap_or(0) as u64,
                usable: load_module(&ctx).map(|_| ()),
            },
            Err(e) => GpuInfo {
                ordinal,
                name: String::new(),
                compute_capability: (0, 0),
                memory_bytes: 0,
                usable: Err(format!("could not create a context: {e}")),
            },
        })
        .collect();
    Probe {
        driver: driver_version(),
        kernels,
        gpus,
    }
}

/// Loads our kernels into `ctx`.
pub fn load_module(ctx: &Arc<CudaContext>) -> Result<Arc<CudaModule>, String> {
    let k = kernels()?;
    let (major, _) = ctx.compute_capability().map_err(|e| e.to_string())?;
    if major < 8 {
        return Err(format!("compute capability {major}.x is below 8.0"));
    }
    ctx.load_module(cudarc::nvrtc::Ptx::from_binary(k.fatbin.to_vec()))
        .map_err(|e| format!("loading the kernels failed: {e}"))
}

/// Executors for the GPUs `devices` names (all usable ones when empty).
pub fn executors(devices: &[u32]) -> anyhow::Result<Vec<Arc<CudaExecutor>>> {
    let probe = probe();
    if let Some(why) = probe.unavailable() {
        anyhow::bail!("the cuda backend cannot run: {why}");
    }
    let usable = probe.usable();
    let wanted: Vec<usize> = if devices.is_empty() {
        usable.clone()
    } else {
        devices.iter().map(|d| *d as usize).collect()
    };
    wanted
        .into_iter()
        .map(|d| {
            if !usable.contains(&d) {
                anyhow::bail!("GPU {d} is not usable (usable: {usable:?})");
            }
            Ok(Arc::new(CudaExecutor::new(d)?))
        })
        .collect()
}
