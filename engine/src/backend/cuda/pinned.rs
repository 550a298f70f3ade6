//! Page-locked host memory, which the copy engines read at full link speed: the blocks of the
//! pool that prestaged witnesses take (one pool for the process, under a budget), and the
//! staging ring through which pageable data goes up. Page-locking is slow (~2 GB/s) and the
//! memory is the host's, so both are kept and reused rather than made per partition.

use anyhow::Result;
use cudarc::driver::sys::{self, CUevent};
use cudarc::driver::{result, CudaStream};
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

use super::gpu::{cuda, new_event, Gpu, OutOfMemory, Timeline};
use crate::memory::{MemoryBudget, Reservation};

/// Page-locked host memory the copy engines can read at full link speed.
pub(super) struct Pinned {
    pub ptr: *mut u8,
    pub bytes: usize,
    gpu: Arc<Gpu>,
}

impl Pinned {
    /// `bytes` of page-locked memory, portable: every context (every GPU) may copy from it.
    pub fn new(gpu: &Arc<Gpu>, bytes: usize) -> Result<Pinned> {
        gpu.bind()?;
        const PORTABLE: u32 = 1; // CU_MEMHOSTALLOC_PORTABLE
                                 // SAFETY: an allocation on the bound context; the pointer is owned by the `Pinned`
                                 // made of it and freed once, on drop.
        let ptr = match unsafe { result::malloc_host(bytes.max(1), PORTABLE) } {
            Ok(p) => p as *mut u8,
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                return Err(OutOfMemory { bytes }.into())
            }
            Err(e) => return Err(cuda(e)),
        };
        Ok(Pinned {
            ptr,
            bytes,
            gpu: gpu.clone(),
        })
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `bytes` bytes at `ptr` belong to this value alone.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes) }
    }
}

// SAFETY: plain bytes; readers only take shared slices.
unsafe impl Sync for Pinned {}

// SAFETY: the buffer is plain bytes owned by this value; access is serialised by `Staging`.
unsafe impl Send for Pinned {}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = self.gpu.bind();
        // SAFETY: allocated by `malloc_host` in `new`, freed only here; whoever copied from it
        // has waited (`Staging`'s events, a `Block`'s holder).
        let _ = unsafe { result::free_host(self.ptr as *mut std::ffi::c_void) };
    }
}

/// Page-locked blocks, reused across partitions, never more than the budget's limit in all.
pub(super) struct PinnedPool {
    gpu: Arc<Gpu>,
    budget: Arc<MemoryBudget>,
    /// The most `reserve` raises the budget to.
    ceiling: u64,
    /// Blocks no partition holds, each with its share of the budget.
    free: Mutex<Vec<(Pinned, Reservation)>>,
}

/// The process's pool: page-locked memory is portable, so one pool serves every GPU. Its cap
/// is a quarter of the memory available when it is first used, raised by `reserve` as far as
/// half of it so that every partition in flight has a block.
pub(super) fn pool(gpu: &Arc<Gpu>) -> Arc<PinnedPool> {
    static POOL: OnceLock<Arc<PinnedPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let ceiling = crate::hostmem::page_locked_ceiling();
        Arc::new(PinnedPool {
            gpu: gpu.clone(),
            budget: MemoryBudget::new(ceiling / 2),
            ceiling,
            free: Mutex::default(),
        })
    })
    .clone()
}

impl PinnedPool {
    /// A block of at least `bytes`: the smallest free one that fits, else a new one while the
    /// cap allows (idle blocks too small are released to make room). None when blocks in use
    /// hold the cap: the partition then stages as its region goes.
    pub fn take(self: &Arc<Self>, bytes: usize) -> Result<Option<Block>> {
        let mut free = self.free.lock();
        let fits = free
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| p.bytes >= bytes)
            .min_by_key(|(_, (p, _))| p.bytes)
            .map(|(i, _)| i);
        if let Some(i) = fits {
            let kept = free.swap_remove(i);
            return Ok(Some(self.block(kept)));
        }
        let held = loop {
            if let Some(r) = self.budget.try_reserve(bytes as u64) {
                break r;
            }
            if free.pop().is_none() {
                return Ok(None);
            }
        };
        drop(free);
        // On failure `held` goes back with the error.
        let pinned = Pinned::new(&self.gpu, bytes)?;
        Ok(Some(self.block((pinned, held))))
    }

    /// Allocates blocks of `bytes` until `count` of at least that size are free, within the
    /// cap, several at once (page-locking is slow: ~2 GB/s a block): a run pays it before its
    /// first partition rather than one synthesis worker at a time. Returns the blocks free.
    pub fn reserve(self: &Arc<Self>, bytes: usize, count: usize) -> Result<usize> {
        // A partition in flight without a block stages under the lock (2^24 on the H200: ten
        // blocks for twelve partitions cost 4.5 s of upload gaps in 48 proofs).
        let wanted = (bytes as u64).saturating_mul(count as u64);
        if wanted > self.budget.limit() {
            self.budget.set_limit(wanted.min(self.ceiling));
        }
        let held: Vec<Reservation> = {
            let free = self.free.lock();
            let have = free.iter().filter(|(p, _)| p.bytes >= bytes).count();
            (have..count)
                .map_while(|_| self.budget.try_reserve(bytes as u64))
                .collect()
        };
        let made: Vec<Result<(Pinned, Reservation)>> = std::thread::scope(|s| {
            let jobs: Vec<_> = held
                .into_iter()
                .map(|r| s.spawn(|| Pinned::new(&self.gpu, bytes).map(|p| (p, r))))
                .collect();
            jobs.into_iter()
                .map(|j| j.join().expect("allocating a page-locked block"))
                .collect()
        });
        let mut free = self.free.lock();
        let mut err = None;
        for m in made {
            match m {
                Ok(kept) => free.push(kept),
                Err(e) => {
                    err.get_or_insert(e);
                }
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(free.iter().filter(|(p, _)| p.bytes >= bytes).count()),
        }
    }

    fn block(self: &Arc<Self>, kept: (Pinned, Reservation)) -> Block {
        Block {
            kept: Some(kept),
            pool: self.clone(),
        }
    }
}

/// A block taken from the pool; it goes back when dropped.
pub(super) struct Block {
    kept: Option<(Pinned, Reservation)>,
    pool: Arc<PinnedPool>,
}

impl Block {
    fn pinned(&self) -> &Pinned {
        &self.kept.as_ref().expect("held until drop").0
    }

    /// The address of byte `at`, for the copy engines.
    pub fn ptr(&self, at: usize) -> *const u8 {
        assert!(at <= self.pinned().bytes);
        // SAFETY: in bounds, checked above.
        unsafe { self.pinned().ptr.add(at) }
    }

    pub fn bytes(&self) -> &[u8] {
        let p = self.pinned();
        // SAFETY: the block's bytes; writers hold `&mut self`.
        unsafe { std::slice::from_raw_parts(p.ptr, p.bytes) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.kept
            .as_mut()
            .expect("held until drop")
            .0
            .as_mut_slice()
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if let Some(kept) = self.kept.take() {
            self.pool.free.lock().push(kept);
        }
    }
}

/// Uploads through a ring of two pinned buffers: while the copy engine reads one, the CPU
/// fills the other, so pageable data reaches the device at link speed with bounded pinned
/// memory.
pub struct Staging {
    bufs: Vec<(Pinned, CUevent)>,
    next: usize,
}

// SAFETY: the events and pinned buffers belong to one context and are used by one worker at a time.
unsafe impl Send for Staging {}

/// Bytes per pinned buffer.
const STAGE_BYTES: usize = 64 << 20;

/// The plain fill of a staged piece (see `Staging::upload_timed`).
pub(super) fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    dst.copy_from_slice(src);
}

impl Staging {
    pub fn new(gpu: &Arc<Gpu>) -> Result<Staging> {
        gpu.bind()?;
        let bufs = (0..2)
            .map(|_| Ok((Pinned::new(gpu, STAGE_BYTES)?, new_event()?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Staging { bufs, next: 0 })
    }

    /// Copies `src` to device address `dst` on `stream`; returns once the last piece is queued.
    pub fn upload<T: crate::hostmem::PlainData>(
        &mut self,
        gpu: &Gpu,
        stream: &CudaStream,
        dst: u64,
        src: &[T],
    ) -> Result<()> {
        self.upload_pieces(gpu, stream, dst, src, &copy_bytes, None)
    }

    /// `upload`, marking each piece's copy on `tl` (`Timeline::pieces`): the time the copy
    /// engine is busy, without the host copies into the pinned buffers between pieces. `fill`
    /// writes each staged piece from the source's bytes (`copy_bytes` for a plain copy; pieces
    /// of 1 MiB, so a fill may work in elements of up to that size).
    pub fn upload_timed<T: crate::hostmem::PlainData>(
        &mut self,
        gpu: &Gpu,
        stream: &CudaStream,
        dst: u64,
        src: &[T],
        fill: &(dyn Fn(&mut [u8], &[u8]) + Sync),
        tl: &mut Timeline,
    ) -> Result<()> {
        self.upload_pieces(gpu, stream, dst, src, fill, Some(tl))
    }

    fn upload_pieces<T: crate::hostmem::PlainData>(
        &mut self,
        gpu: &Gpu,
        stream: &CudaStream,
        dst: u64,
        src: &[T],
        fill: &(dyn Fn(&mut [u8], &[u8]) + Sync),
        mut tl: Option<&mut Timeline>,
    ) -> Result<()> {
        use rayon::prelude::*;
        let bytes = crate::hostmem::as_bytes(src);
        for (i, piece) in bytes.chunks(STAGE_BYTES).enumerate() {
            let (buf, done) = &self.bufs[self.next];
            self.next = (self.next + 1) % self.bufs.len();
            // The copy that last read this buffer must have finished before we refill it.
            // SAFETY: `done` is an event of ours, created with the ring and destroyed on drop.
            unsafe { result::event::synchronize(*done) }.map_err(cuda)?;
            // SAFETY: within the buffer's bytes, which no copy reads any more (waited for
            // above) and nothing else references while `self` is borrowed mutably.
            let staged =
                unsafe { std::slice::from_raw_parts_mut(buf.ptr, buf.bytes.min(piece.len())) };
            staged
                .par_chunks_mut(1 << 20)
                .zip(piece.par_chunks(1 << 20))
                .for_each(|(d, s)| fill(d, s));
            gpu.counters.host_copied(piece.len() as u64);
            let before = tl.as_deref_mut().map(|t| t.mark(stream)).transpose()?;
            // SAFETY: `buf` is ours until `done`, recorded just after, has completed: the
            // next fill of it, and dropping the ring, wait on that event first.
            unsafe {
                gpu.h2d_pinned(stream, dst + (i * STAGE_BYTES) as u64, buf.ptr, piece.len())?
            };
            // SAFETY: our event, recorded on a live stream of the same context.
            unsafe { result::event::record(*done, stream.cu_stream()) }.map_err(cuda)?;
            if let (Some(t), Some(m0)) = (tl.as_deref_mut(), before) {
                let m1 = t.mark(stream)?;
                t.pieces.push((m0, m1, piece.len() as u64));
            }
        }
        Ok(())
    }
}

impl Staging {
    /// Copies `bytes` from the pinned buffers alone (no host copy): the link's own rate.
    pub fn upload_pinned_only(
        &mut self,
        gpu: &Gpu,
        stream: &CudaStream,
        dst: u64,
        bytes: usize,
    ) -> Result<()> {
        let mut done = 0;
        while done < bytes {
            let (buf, ready) = &self.bufs[self.next];
            self.next = (self.next + 1) % self.bufs.len();
            let n = (bytes - done).min(buf.bytes);
            // SAFETY: as in `upload_pieces`: `ready`, recorded after the copy, guards the
            // buffer until the copy has read it.
            unsafe {
                gpu.h2d_pinned(stream, dst + done as u64, buf.ptr, n)?;
                result::event::record(*ready, stream.cu_stream()).map_err(cuda)?;
            }
            done += n;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        for (pinned, e) in self.bufs.drain(..) {
            // SAFETY: our event: waited for (so no copy reads the buffer dropped next), then
            // destroyed once.
            let _ = unsafe { result::event::synchronize(e) };
            // SAFETY: as above.
            let _ = unsafe { result::event::destroy(e) };
            drop(pinned);
        }
    }
}
