//! One GPU as the executor sees it: its context, our kernels, raw device buffers that account
//! for themselves (in the telemetry counters and the device's memory budget), streams, and
//! timed events. Raw device pointers keep the kernel ABI of
//! cuda/README.md literal (every argument a pointer or a u32).

use anyhow::{anyhow, Context, Result};
use cudarc::driver::sys::{self, CUevent};
use cudarc::driver::{
    result, CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg,
};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::msm::BIN_SORT_SMEM;
use crate::hostmem::PlainData;
use crate::memory::{MemoryBudget, Reservation};
use crate::telemetry::accounting::{self, DeviceCounters, Direction, VramPurpose};

/// Our kernels, looked up once.
pub struct Functions {
    pub ntt_pass: CudaFunction,
    pub ntt_consts: CudaFunction,
    pub fr_powers: CudaFunction,
    pub msm_digits: CudaFunction,
    pub msm_hist: CudaFunction,
    pub msm_plan_sums: CudaFunction,
    pub msm_plan: CudaFunction,
    pub msm_scatter: CudaFunction,
    pub msm_chunks: CudaFunction,
    pub msm_chunks_direct: CudaFunction,
    pub msm_aff_plan: CudaFunction,
    pub msm_aff_fwd: CudaFunction,
    pub msm_aff_inv: CudaFunction,
    pub msm_aff_bwd: CudaFunction,
    pub msm_fixup: CudaFunction,
    pub msm_bucket_reduce: CudaFunction,
    pub msm_reduce: CudaFunction,
    pub msm_final: CudaFunction,
    pub g1_sum_parts: CudaFunction,
    pub g2_sum_parts: CudaFunction,
    pub g2_to_jac: CudaFunction,
    pub g2_reduce: CudaFunction,
    pub g2_msm_chunks: CudaFunction,
    pub g2_msm_fixup: CudaFunction,
    pub g2_msm_bucket_reduce: CudaFunction,
    pub msm_hist_shared: CudaFunction,
    pub msm_bins: CudaFunction,
    pub msm_scatter_bins: CudaFunction,
    pub msm_bin_sort: CudaFunction,
    pub msm_shift: CudaFunction,
    pub msm_shift_affine: CudaFunction,
    pub g1_to_affine: CudaFunction,
    pub g2_to_affine: CudaFunction,
    pub g1_fixed_base: CudaFunction,
    pub g2_fixed_base: CudaFunction,
    pub abc_plan: CudaFunction,
    pub abc_eval: CudaFunction,
    pub abc_fixup: CudaFunction,
}

/// Dynamic shared memory of `pt_ntt_pass` for k ≥ 11 (cuda/README.md).
pub const NTT_SMEM_MAX: u32 = 73_728;

/// One GPU, opened once per executor: its context, our kernels looked up in it, and the counters
/// and memory budget shared by everything allocated on it.
pub struct Gpu {
    /// The CUDA device ordinal.
    pub ordinal: usize,
    /// The device's name as the driver reports it (empty if it reports none).
    pub name: String,
    /// The context every stream, buffer and launch of this `Gpu` uses.
    pub ctx: Arc<CudaContext>,
    _module: Arc<CudaModule>,
    /// Our kernels in this context.
    pub f: Functions,
    /// The telemetry counters of `gpu{ordinal}` (VRAM by purpose, copied bytes), one set per
    /// process.
    pub counters: Arc<DeviceCounters>,
    /// The device memory every `DevBuf` on this GPU holds, whichever `Gpu` allocated it.
    pub vram: Arc<MemoryBudget>,
    /// Device memory in bytes, as the driver reports it at open.
    pub total_memory: u64,
}

/// The memory budget of GPU `ordinal`, one for the process as the telemetry counters are: no
/// limit of its own (the driver's), each allocation under its caller's cap (`vram_budget`).
fn vram_budget(ordinal: usize) -> Arc<MemoryBudget> {
    static BUDGETS: OnceLock<Mutex<HashMap<usize, Arc<MemoryBudget>>>> = OnceLock::new();
    let mut all = BUDGETS.get_or_init(Mutex::default).lock();
    all.entry(ordinal)
        .or_insert_with(|| MemoryBudget::new(u64::MAX))
        .clone()
}

/// A driver error: the device, not the partition, is at fault (out-of-memory, which a
/// partition recovers from, is `OutOfMemory` instead).
pub(super) fn cuda(e: result::DriverError) -> anyhow::Error {
    crate::backend::DeviceFault(e.to_string()).into()
}

impl Gpu {
    /// Creates a context on GPU `ordinal` and loads our kernels into it; a driver error is a
    /// `DeviceFault`, a kernel that does not load a plain error.
    pub fn open(ordinal: usize) -> Result<Arc<Gpu>> {
        let ctx = CudaContext::new(ordinal)
            .map_err(cuda)
            .context("creating a CUDA context")?;
        // Our buffers are raw pointers ordered by explicit events: cudarc's own tracking is not needed.
        // SAFETY: no cudarc buffer of this context exists yet, and the engine orders its raw
        // buffers itself (streams, events and the copy guards).
        unsafe { ctx.disable_event_tracking() };
        let module = super::load_module(&ctx).map_err(|e| anyhow!(e))?;
        let get = |name: &str| {
            module
                .load_function(name)
                .map_err(|e| anyhow!("kernel {name}: {e}"))
        };
        let f = Functions {
            ntt_pass: get("pt_ntt_pass")?,
            ntt_consts: get("pt_ntt_consts")?,
            fr_powers: get("pt_fr_powers")?,
            msm_digits: get("pt_msm_digits")?,
            msm_hist: get("pt_msm_hist")?,
            msm_plan_sums: get("pt_msm_plan_sums")?,
            msm_plan: get("pt_msm_plan")?,
            msm_scatter: get("pt_msm_scatter")?,
            msm_chunks: get("pt_msm_chunks")?,
            msm_chunks_direct: get("pt_msm_chunks_direct")?,
            msm_aff_plan: get("pt_msm_aff_plan")?,
            msm_aff_fwd: get("pt_msm_aff_fwd")?,
            msm_aff_inv: get("pt_msm_aff_inv")?,
            msm_aff_bwd: get("pt_msm_aff_bwd")?,
            msm_fixup: get("pt_msm_fixup")?,
            msm_bucket_reduce: get("pt_msm_bucket_reduce")?,
            msm_reduce: get("pt_msm_reduce")?,
            msm_final: get("pt_msm_final")?,
            g1_sum_parts: get("pt_g1_sum_parts")?,
            g2_sum_parts: get("pt_g2_sum_parts")?,
            g2_to_jac: get("pt_g2_to_jac")?,
            g2_reduce: get("pt_g2_reduce")?,
            g2_msm_chunks: get("pt_g2_msm_chunks")?,
            g2_msm_fixup: get("pt_g2_msm_fixup")?,
            g2_msm_bucket_reduce: get("pt_g2_msm_bucket_reduce")?,
            msm_hist_shared: get("pt_msm_hist_shared")?,
            msm_bins: get("pt_msm_bins")?,
            msm_scatter_bins: get("pt_msm_scatter_bins")?,
            msm_bin_sort: get("pt_msm_bin_sort")?,
            msm_shift: get("pt_msm_shift")?,
            msm_shift_affine: get("pt_msm_shift_affine")?,
            g1_to_affine: get("pt_g1_to_affine")?,
            g2_to_affine: get("pt_g2_to_affine")?,
            g1_fixed_base: get("pt_g1_fixed_base")?,
            g2_fixed_base: get("pt_g2_fixed_base")?,
            abc_plan: get("pt_abc_plan")?,
            abc_eval: get("pt_abc_eval")?,
            abc_fixup: get("pt_abc_fixup")?,
        };
        // kernels that take more than 48 KB of dynamic shared memory
        for (k, bytes) in [
            (&f.ntt_pass, NTT_SMEM_MAX),
            (&f.msm_bin_sort, BIN_SORT_SMEM),
        ] {
            k.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
            .map_err(cuda)?;
        }
        let name = ctx.name().unwrap_or_default();
        let total_memory = ctx.total_mem().map_err(cuda)? as u64;
        let counters = accounting::device(&format!("gpu{ordinal}"));
        Ok(Arc::new(Gpu {
            ordinal,
            name,
            ctx,
            _module: module,
            f,
            counters,
            vram: vram_budget(ordinal),
            total_memory,
        }))
    }

    /// Makes this GPU's context current on the calling thread (before any driver call there).
    pub fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(cuda)
    }

    /// A new stream in this GPU's context.
    pub fn stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.new_stream().map_err(cuda)
    }

    /// A new stream of the highest priority the device has: as the blocks of kernels on
    /// other streams finish, the scheduler starts this stream's blocks before theirs.
    pub fn urgent_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.bind_to_thread().map_err(cuda)?;
        let (_, greatest) = cudarc::driver::result::stream::get_priority_range().map_err(cuda)?;
        self.ctx.new_stream_with_priority(greatest).map_err(cuda)
    }

    /// Free and total device memory now.
    pub fn mem_info(&self) -> Result<(u64, u64)> {
        let (free, total) = self.ctx.mem_get_info().map_err(cuda)?;
        Ok((free as u64, total as u64))
    }

    /// A device buffer of `bytes` for `purpose`, counted in the device's budget whatever its
    /// callers' caps; out-of-memory is reported as `OutOfMemory`.
    pub fn alloc(self: &Arc<Self>, bytes: usize, purpose: VramPurpose) -> Result<DevBuf> {
        self.alloc_held(bytes, purpose, self.vram.reserve(bytes as u64))
    }

    /// `alloc` of the bytes `held` reserves in the device's budget; they go back with the
    /// buffer, or at once when the allocation fails.
    pub fn alloc_held(
        self: &Arc<Self>,
        bytes: usize,
        purpose: VramPurpose,
        held: Reservation,
    ) -> Result<DevBuf> {
        self.bind()?;
        // SAFETY: an allocation on the context bound above; the `DevBuf` made of it owns it
        // and frees it once.
        match unsafe { result::malloc_sync(bytes.max(256)) } {
            Ok(ptr) => {
                self.counters.allocated(purpose, bytes as u64);
                Ok(DevBuf {
                    ptr,
                    bytes,
                    purpose,
                    gpu: self.clone(),
                    _held: held,
                })
            }
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                Err(OutOfMemory { bytes }.into())
            }
            Err(e) => Err(cuda(e)),
        }
    }

    /// Enqueues `f` on `stream` over a `grid` of (x, y) blocks of `block` threads with `smem` bytes
    /// of dynamic shared memory; `args` follow the kernel's ABI (cuda/README.md).
    pub fn launch(
        &self,
        stream: &CudaStream,
        f: &CudaFunction,
        grid: (u32, u32),
        block: u32,
        smem: u32,
        args: &[Arg],
    ) -> Result<()> {
        let mut b = stream.launch_builder(f);
        for a in args {
            match a {
                Arg::Ptr(p) => b.arg(p),
                Arg::U32(v) => b.arg(v),
            };
        }
        let cfg = LaunchConfig {
            grid_dim: (grid.0, grid.1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: smem,
        };
        // SAFETY: the arguments follow the kernel ABI of cuda/README.md (device pointers of
        // live buffers and u32s); each caller sizes the buffers for the grid it launches.
        unsafe { b.launch(cfg) }.map_err(cuda)?;
        Ok(())
    }

    /// Starts copying `src` to device address `dst` on `stream`. The returned guard borrows
    /// `src` until the copy has finished: `wait` for it (dropping the guard waits too).
    pub fn h2d<'a, T: PlainData>(
        &self,
        stream: &'a CudaStream,
        dst: u64,
        src: &'a [T],
    ) -> Result<InFlight<'a>> {
        // SAFETY: the guard keeps `src` borrowed, and so alive and unchanged, until the stream
        // has been synchronised; `dst` is a device address of ours (the caller's buffer).
        unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }.map_err(cuda)?;
        self.counters
            .copied(Direction::H2d, std::mem::size_of_val(src) as u64);
        Ok(InFlight::on(stream))
    }

    /// Starts copying device address `src` into `dst` on `stream`. The guard borrows `dst`
    /// mutably until the copy has finished: `wait`, then read `dst`.
    ///
    /// The host memory cannot be used, moved or freed while the copy may still write it;
    /// this does not compile:
    ///
    /// ```compile_fail,E0505
    /// use provetop_engine::backend::cuda::Gpu;
    /// fn misuse(gpu: &Gpu, stream: &cudarc::driver::CudaStream, dev: u64) -> anyhow::Result<()> {
    ///     let mut host = vec![0u8; 1 << 20];
    ///     let copy = gpu.d2h(stream, &mut host, dev)?;
    ///     drop(host); // freed while the device may still write into it
    ///     copy.wait()
    /// }
    /// ```
    ///
    /// while waiting first does:
    ///
    /// ```no_run
    /// use provetop_engine::backend::cuda::Gpu;
    /// fn fine(gpu: &Gpu, stream: &cudarc::driver::CudaStream, dev: u64) -> anyhow::Result<u8> {
    ///     let mut host = vec![0u8; 1 << 20];
    ///     let copy = gpu.d2h(stream, &mut host, dev)?;
    ///     copy.wait()?;
    ///     Ok(host[0])
    /// }
    /// ```
    pub fn d2h<'a, T: PlainData>(
        &self,
        stream: &'a CudaStream,
        dst: &'a mut [T],
        src: u64,
    ) -> Result<InFlight<'a>> {
        let bytes = std::mem::size_of_val(dst) as u64;
        // SAFETY: the guard keeps `dst` mutably borrowed until the stream has been
        // synchronised, so nothing reads, moves or frees it while the device writes it; any
        // bytes are a `PlainData` value.
        unsafe { result::memcpy_dtoh_async(dst, src, stream.cu_stream()) }.map_err(cuda)?;
        self.counters.copied(Direction::D2h, bytes);
        Ok(InFlight::on(stream))
    }

    /// Copies `bytes` from page-locked host memory at `src` to `dst`, on `stream`.
    ///
    /// # Safety
    ///
    /// `src` must point to `bytes` readable bytes that stay allocated and unwritten until
    /// the copy has finished (an event recorded after it, or the stream, synchronised).
    pub unsafe fn h2d_pinned(
        &self,
        stream: &CudaStream,
        dst: u64,
        src: *const u8,
        bytes: usize,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller keeps the `bytes` at `src` alive and unchanged until the copy
        // has finished (this function's contract).
        unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src as *const _, bytes, stream.cu_stream()) }
            .result()
            .map_err(cuda)?;
        self.counters.copied(Direction::H2d, bytes as u64);
        Ok(())
    }

    /// Sets `count` u32 words at `dst` to zero.
    pub fn zero_u32(&self, stream: &CudaStream, dst: u64, count: usize) -> Result<()> {
        // SAFETY: device memory only (no host byte is touched); the caller's buffer at `dst`
        // holds `count` words.
        unsafe { sys::cuMemsetD32Async(dst, 0, count, stream.cu_stream()) }
            .result()
            .map_err(cuda)
    }

    /// Sets `bytes` bytes at device address `dst` to zero, on `stream`.
    pub fn zero_bytes(&self, stream: &CudaStream, dst: u64, bytes: usize) -> Result<()> {
        // SAFETY: as for `zero_u32`: device memory of the caller's buffer.
        unsafe { sys::cuMemsetD8Async(dst, 0, bytes, stream.cu_stream()) }
            .result()
            .map_err(cuda)
    }

    /// Waits on the host until everything enqueued on `stream` has finished.
    pub fn sync(&self, stream: &CudaStream) -> Result<()> {
        stream.synchronize().map_err(cuda)
    }
}

/// An asynchronous copy between host memory it borrows and the device: the borrow lasts
/// until the copy is known to have finished, on `wait` or when the guard is dropped (which
/// waits too, ignoring an error: `wait` reports it).
#[must_use = "the copy may still be running: `wait` for it before using the host memory"]
pub struct InFlight<'a> {
    stream: &'a CudaStream,
    waited: bool,
    _host: PhantomData<&'a mut [u8]>,
}

impl<'a> InFlight<'a> {
    fn on(stream: &'a CudaStream) -> InFlight<'a> {
        InFlight {
            stream,
            waited: false,
            _host: PhantomData,
        }
    }

    /// Waits until the copy (and everything before it on its stream) has finished.
    pub fn wait(mut self) -> Result<()> {
        self.waited = true;
        self.stream.synchronize().map_err(cuda)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.waited {
            let _ = self.stream.synchronize();
        }
    }
}

/// A kernel argument: a device pointer (0 for null) or a u32.
#[derive(Clone, Copy)]
pub enum Arg {
    Ptr(u64),
    U32(u32),
}

#[derive(Debug, thiserror::Error)]
#[error("out of device memory allocating {bytes} bytes")]
pub struct OutOfMemory {
    pub bytes: usize,
}

/// Device memory that returns itself and its accounting on drop (its share of the budget
/// once the memory is free).
pub struct DevBuf {
    pub ptr: u64,
    pub bytes: usize,
    purpose: VramPurpose,
    gpu: Arc<Gpu>,
    _held: Reservation,
}

impl DevBuf {
    /// The address `offset` bytes in.
    pub fn at(&self, offset: usize) -> u64 {
        debug_assert!(offset <= self.bytes);
        self.ptr + offset as u64
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        let _ = self.gpu.bind();
        // SAFETY: allocated by `alloc_held`, freed only here; `free_sync` waits for the
        // device's work on it.
        let _ = unsafe { result::free_sync(self.ptr) };
        self.gpu.counters.freed(self.purpose, self.bytes as u64);
    }
}

/// Events recorded on streams and, once they completed, placed on the host clock.
pub struct Timeline {
    anchor: CUevent,
    anchor_at: Instant,
    marks: Vec<CUevent>,
    /// Copy pieces: (mark before, mark after, bytes).
    pub pieces: Vec<(usize, usize, u64)>,
}

impl Timeline {
    /// Anchors the device clock to the host clock on an idle `stream`: the anchor event ran
    /// between its record call and the first query that saw it done, and is placed at their
    /// middle. Polled, not waited for: a blocking wait returns tens of microseconds after the
    /// event, which put every device span that much late against the host's (the lock taken,
    /// then 40-50 µs of unattributed idle before the first kernel, in each 8MiB region).
    pub fn start(stream: &CudaStream) -> Result<Timeline> {
        let anchor = new_event()?;
        let issued = Instant::now();
        // SAFETY: a fresh event of ours, on a live stream.
        unsafe { result::event::record(anchor, stream.cu_stream()) }.map_err(cuda)?;
        let anchor_at = loop {
            // SAFETY: the event just recorded, live until the timeline drops.
            match unsafe { result::event::query(anchor) } {
                Ok(()) => break issued + issued.elapsed() / 2,
                Err(e) if e.0 != sys::CUresult::CUDA_ERROR_NOT_READY => return Err(cuda(e)),
                // a stream that was not idle after all: wait, and take the later bound
                Err(_) if issued.elapsed() > std::time::Duration::from_millis(2) => {
                    // SAFETY: as above.
                    unsafe { result::event::synchronize(anchor) }.map_err(cuda)?;
                    break Instant::now();
                }
                Err(_) => std::hint::spin_loop(),
            }
        };
        Ok(Timeline {
            anchor,
            anchor_at,
            marks: vec![],
            pieces: vec![],
        })
    }

    /// Records an event on `stream`; its index names it.
    pub fn mark(&mut self, stream: &CudaStream) -> Result<usize> {
        let e = new_event()?;
        // SAFETY: a fresh event of ours, on a live stream; destroyed with the timeline.
        unsafe { result::event::record(e, stream.cu_stream()) }.map_err(cuda)?;
        self.marks.push(e);
        Ok(self.marks.len() - 1)
    }

    /// Makes `stream` wait for mark `i`.
    pub fn wait(&self, stream: &CudaStream, i: usize) -> Result<()> {
        self.event(i).wait(stream)
    }

    /// Mark `i`, for a stream to wait on while the timeline is borrowed elsewhere.
    pub fn event(&self, i: usize) -> Event {
        Event(self.marks[i])
    }

    /// The host time of mark `i`; call after the work it follows has completed.
    pub fn at(&self, i: usize) -> Result<Instant> {
        // SAFETY: two live events of this timeline (destroyed only on its drop).
        let ms = unsafe { result::event::elapsed(self.anchor, self.marks[i]) }.map_err(cuda)?;
        Ok(self.anchor_at + std::time::Duration::from_secs_f64(ms.max(0.0) as f64 / 1e3))
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        for e in self.marks.drain(..).chain(std::iter::once(self.anchor)) {
            // SAFETY: each event of the timeline, destroyed once; a stream still waiting on
            // one keeps its own reference (the driver's rule).
            let _ = unsafe { result::event::destroy(e) };
        }
    }
}

/// An event of a live `Timeline`.
#[derive(Clone, Copy)]
pub struct Event(CUevent);

impl Event {
    /// Makes `stream` wait for the event.
    pub fn wait(self, stream: &CudaStream) -> Result<()> {
        // SAFETY: an event of a live timeline, on a live stream.
        unsafe {
            result::stream::wait_event(
                stream.cu_stream(),
                self.0,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(cuda)
    }
}

pub(super) fn new_event() -> Result<CUevent> {
    result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(cuda)
}
