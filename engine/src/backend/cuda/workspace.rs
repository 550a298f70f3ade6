//! A worker's device buffers (`Workspace`) and what they are sized by: a partition's domain, its
//! witness MSMs' lengths and the MSM scratch of the largest. Kept between partitions of the
//! same size; the room another worker's take is what H's shifted bases must leave.

use anyhow::Result;
use cudarc::driver::CudaStream;
use std::sync::Arc;

use super::executor::CudaExecutor;
use super::gpu::DevBuf;
use super::msm;
use super::pinned::Staging;
use crate::config::Budget;
use crate::telemetry::accounting::VramPurpose;

pub(super) const FR: usize = 32;

/// The results buffer, read back in one copy: H, then each witness MSM's tail and ones
/// (blst_p1), then B in G2's sums of scalar-one bases and its tail MSM's window sums (blst_p2).
pub(super) const G1_RESULTS: usize = 7;
pub(super) const G2_PARTS_AT: usize = align(G1_RESULTS * msm::JACOBIAN);
pub(super) const G2_WINDOWS_AT: usize =
    G2_PARTS_AT + align(msm::G2_SUM_PARTS_MAX * msm::G2_JACOBIAN);
const RESULTS_BYTES: usize = G2_WINDOWS_AT + msm::WINDOWS_MAX * msm::G2_JACOBIAN;

const fn align(bytes: usize) -> usize {
    bytes.next_multiple_of(256)
}

/// Scratch of H's MSM over `n` bases, plain or shifted.
pub(super) fn h_scratch_bytes(n: usize) -> usize {
    let shifted = msm::shifted_scratch_bytes(n, msm::Shifted::for_points(n));
    msm::scratch_bytes(n, n).max(shifted)
}

/// The sizes of a worker's buffers (`Workspace`) for a domain of 2^log2, witness MSMs of up to
/// `msm_n` scalars and MSM scratch of `msm` bytes.
struct WorkspaceSizes {
    abc: usize,
    scalars: usize,
    idx: usize,
    msm: usize,
    sum: usize,
    results: usize,
    g2: usize,
}

impl WorkspaceSizes {
    fn new(log2: u32, msm_n: usize, msm: usize) -> WorkspaceSizes {
        WorkspaceSizes {
            abc: 4 * (1usize << log2) * FR,
            scalars: 3 * msm_n * FR,
            idx: 3 * msm_n * 4,
            msm,
            sum: msm::sum_scratch_bytes(msm_n),
            results: RESULTS_BYTES,
            g2: msm::G2_SUM_SCRATCH_MAX,
        }
    }

    fn total(&self) -> usize {
        self.abc + self.scalars + self.idx + self.msm + self.sum + self.results + self.g2
    }
}

/// Another worker's buffers at this size, for the room H's shifted bases must leave: its MSM
/// scratch the most that H or an MSM of all `msm_n` scalars takes, in G2 too when B in G2 runs
/// on the device (`b_g2`).
pub(super) fn another_workers_bytes(log2: u32, msm_n: usize, b_g2: bool) -> usize {
    let n = 1usize << log2;
    let g2 = if b_g2 {
        msm::g2_scratch_bytes(msm_n, msm_n)
    } else {
        0
    };
    let msm = h_scratch_bytes(n - 1)
        .max(msm::scratch_bytes(msm_n, msm_n))
        .max(g2);
    WorkspaceSizes::new(log2, msm_n, msm).total()
}

/// Device buffers of one worker, kept between partitions of the same size.
pub(super) struct Workspace {
    log2: u32,
    msm_n: usize,
    /// a, b, c, then NTT scratch: 4n Fr.
    pub abc: DevBuf,
    /// The L, A and B tail scalars (Montgomery) and one-indices, msm_n each.
    pub scalars: DevBuf,
    pub idx: DevBuf,
    /// One MSM's scratch at a time: H's, each witness MSM's, B in G2's.
    pub msm: DevBuf,
    pub sum: DevBuf,
    /// B in G2's sums of scalar-one bases.
    pub g2: DevBuf,
    /// The MSMs' results (`G1_RESULTS`, `G2_PARTS_AT`, `G2_WINDOWS_AT`).
    pub results: DevBuf,
}

/// What one worker runs a region with: its streams, its staging ring, its buffers.
pub(super) struct StreamSet {
    /// Whether its streams are of the highest priority (for CRITICAL partitions).
    pub urgent: bool,
    pub compute: Arc<CudaStream>,
    pub copy: Arc<CudaStream>,
    pub staging: Staging,
    pub ws: Option<Workspace>,
}

impl CudaExecutor {
    /// The worker's buffers for a domain of 2^log2 and MSMs of up to `msm_n` points whose
    /// scratch takes `msm_bytes`; kept while they fit. Returns the bytes it allocated (0 when
    /// it kept them): what an `alloc` span reports.
    pub(super) fn workspace(
        &self,
        set: &mut StreamSet,
        log2: u32,
        (msm_n, msm_bytes): (usize, usize),
        budget: Budget,
    ) -> Result<u64> {
        if set
            .ws
            .as_ref()
            .is_some_and(|w| w.log2 == log2 && w.msm_n >= msm_n && w.msm.bytes >= msm_bytes)
        {
            return Ok(0);
        }
        set.ws = None;
        let a = |bytes, purpose| self.alloc(bytes, purpose, budget);
        let z = WorkspaceSizes::new(log2, msm_n, msm_bytes);
        set.ws = Some(Workspace {
            log2,
            msm_n,
            abc: a(z.abc, VramPurpose::Abc)?,
            scalars: a(z.scalars, VramPurpose::Scratch)?,
            idx: a(z.idx, VramPurpose::Scratch)?,
            msm: a(z.msm, VramPurpose::Buckets)?,
            sum: a(z.sum, VramPurpose::Buckets)?,
            results: a(z.results, VramPurpose::Scratch)?,
            // Kept, not allocated per partition: freeing device memory waits for the whole
            // device, the other worker's kernels included.
            g2: a(z.g2, VramPurpose::Buckets)?,
        });
        Ok(z.total() as u64)
    }

    /// An idle worker's streams and buffers, or new ones; `urgent`: of the highest priority,
    /// kept apart so a CRITICAL partition's smaller buffers never resize another's (freeing
    /// device memory waits for the whole device).
    pub(super) fn take_set(&self, urgent: bool) -> Result<StreamSet> {
        let mut idle = self.idle.lock();
        if let Some(i) = idle.iter().rposition(|s| s.urgent == urgent) {
            return Ok(idle.swap_remove(i));
        }
        drop(idle);
        let stream = || match urgent {
            true => self.gpu.urgent_stream(),
            false => self.gpu.stream(),
        };
        Ok(StreamSet {
            urgent,
            compute: stream()?,
            copy: stream()?,
            staging: Staging::new(&self.gpu)?,
            ws: None,
        })
    }
}
