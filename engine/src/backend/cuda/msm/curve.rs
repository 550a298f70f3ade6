//! What an MSM's launches differ in from G1 to G2: the size of an XYZZ point and the kernels of
//! the bucket phase and of the sums of scalar-one bases. The sort (digits .. scatter) is the
//! same for both (cuda/msm/sort.cuh).

use cudarc::driver::CudaFunction;

use super::super::consts::{PT_G2_RED_THREADS, PT_MSM_RED_THREADS};
use super::super::gpu::Functions;

pub(super) struct Curve {
    /// Bytes of one XYZZ point: the bucket phase's scratch scales with it.
    pub xyzz: usize,
    /// `pt_msm_chunks` / `pt_g2_msm_chunks`: bucket accumulation over sorted entries.
    pub chunks: fn(&Functions) -> &CudaFunction,
    /// `pt_msm_fixup` / `pt_g2_msm_fixup`: buckets cut by chunk edges.
    pub fixup: fn(&Functions) -> &CudaFunction,
    /// `pt_msm_bucket_reduce` / `pt_g2_msm_bucket_reduce`: runs of Σ (b+1)·bsum[b].
    pub bucket_reduce: fn(&Functions) -> &CudaFunction,
    /// `pt_msm_reduce` / `pt_g2_reduce`: sums of groups of XYZZ points, and its threads.
    pub reduce: fn(&Functions) -> &CudaFunction,
    pub reduce_threads: u32,
    /// `pt_g1_sum_parts` / `pt_g2_sum_parts`: sums of affine points in serial parts, and how
    /// many parts fill the GPU (log2; ~2^17 threads for G1, ~2^16 for G2's larger kernel).
    pub sum_parts: fn(&Functions) -> &CudaFunction,
    pub sum_threads_log2: u32,
}

/// One G1 point in XYZZ (four Fp), and one G2 point (four Fp2).
pub(super) const G1_XYZZ: usize = 192;
pub(super) const G2_XYZZ: usize = 384;

pub(super) const G1: Curve = Curve {
    xyzz: G1_XYZZ,
    chunks: |f| &f.msm_chunks,
    fixup: |f| &f.msm_fixup,
    bucket_reduce: |f| &f.msm_bucket_reduce,
    reduce: |f| &f.msm_reduce,
    reduce_threads: PT_MSM_RED_THREADS,
    sum_parts: |f| &f.g1_sum_parts,
    sum_threads_log2: 17,
};

pub(super) const G2: Curve = Curve {
    xyzz: G2_XYZZ,
    chunks: |f| &f.g2_msm_chunks,
    fixup: |f| &f.g2_msm_fixup,
    bucket_reduce: |f| &f.g2_msm_bucket_reduce,
    reduce: |f| &f.g2_reduce,
    reduce_threads: PT_G2_RED_THREADS,
    sum_parts: |f| &f.g2_sum_parts,
    sum_threads_log2: 16,
};
