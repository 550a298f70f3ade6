//! Sums of the bases whose scalar is one (the 0/1 split's batch additions), in G1 and G2 alike:
//! the points in parts of one serial chain of additions each, then sums of groups of parts. In
//! G1 the device adds the groups up into one Jacobian point; in G2 the groups' sums go back as
//! Jacobian points (at most 257) for the host to add.

use anyhow::Result;
use cudarc::driver::CudaStream;

use super::super::consts::PT_MSM_ACC_THREADS;
use super::super::gpu::{Arg, Gpu};
use super::curve::{Curve, G1, G1_XYZZ, G2, G2_XYZZ};

/// A sum of points runs one serial chain of additions a part: enough parts to fill the GPU
/// (`Curve::sum_threads_log2`), then sums of groups of parts.
const SUM_GROUP: usize = 256;

fn sum_chunk(count: usize, threads_log2: u32) -> usize {
    (count >> threads_log2).next_power_of_two().max(32)
}

/// Parts of `chunk` points, padded to whole groups (a part past the end is infinity).
fn sum_parts(count: usize, threads_log2: u32) -> usize {
    count
        .div_ceil(sum_chunk(count, threads_log2))
        .next_multiple_of(SUM_GROUP)
}

/// One G2 point as blst_p2 (Jacobian over Fp2).
pub const G2_JACOBIAN: usize = 288;

impl Curve {
    /// Scratch bytes of the parts and the groups' sums of `count` points.
    fn groups_bytes(&self, count: usize) -> usize {
        let parts = sum_parts(count, self.sum_threads_log2);
        (parts + parts / SUM_GROUP) * self.xyzz
    }

    /// Enqueues the parts' sums of points[idx[i]], i < count, into `scratch`, then the sums of
    /// their groups after them; returns where those are and how many.
    fn enqueue_groups(
        &self,
        gpu: &Gpu,
        s: &CudaStream,
        (points, idx, count): (u64, u64, usize),
        scratch: u64,
    ) -> Result<(u64, usize)> {
        use Arg::{Ptr, U32};
        let nparts = sum_parts(count, self.sum_threads_log2);
        let groups = nparts / SUM_GROUP;
        let group_sums = scratch + (nparts * self.xyzz) as u64;
        let chunk = sum_chunk(count, self.sum_threads_log2);
        gpu.launch(
            s,
            (self.sum_parts)(&gpu.f),
            ((nparts as u32).div_ceil(PT_MSM_ACC_THREADS), 1),
            PT_MSM_ACC_THREADS,
            0,
            &[
                Ptr(points),
                Ptr(idx),
                U32(count as u32),
                U32(chunk as u32),
                U32(nparts as u32),
                Ptr(scratch),
            ],
        )?;
        self.reduce(gpu, s, (scratch, SUM_GROUP), groups, group_sums)?;
        Ok((group_sums, groups))
    }

    /// out[g] = Σ input[g·count + j], j < count, for g < groups.
    fn reduce(
        &self,
        gpu: &Gpu,
        s: &CudaStream,
        (input, count): (u64, usize),
        groups: usize,
        out: u64,
    ) -> Result<()> {
        use Arg::{Ptr, U32};
        gpu.launch(
            s,
            (self.reduce)(&gpu.f),
            (groups as u32, 1),
            self.reduce_threads,
            0,
            &[Ptr(input), U32(count as u32), Ptr(out)],
        )
    }
}

/// Scratch bytes `sum_enqueue` needs for `count` points: parts, group sums, the total.
pub fn sum_scratch_bytes(count: usize) -> usize {
    G1.groups_bytes(count) + G1_XYZZ
}

/// Enqueues Σ points[idx[i]] for i < count (the bases whose scalar is one); the Jacobian
/// result lands at `result`.
pub fn sum_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    points: u64,
    idx: u64,
    count: usize,
    scratch: u64,
    result: u64,
) -> Result<()> {
    let (group_sums, groups) = G1.enqueue_groups(gpu, s, (points, idx, count), scratch)?;
    let total = group_sums + (groups * G1_XYZZ) as u64;
    G1.reduce(gpu, s, (group_sums, groups), 1, total)?;
    use Arg::{Ptr, U32};
    gpu.launch(
        s,
        &gpu.f.msm_final,
        (1, 1),
        1,
        0,
        &[Ptr(total), U32(1), U32(0), Ptr(result)],
    )
}

/// How many Jacobian sums `g2_sum_enqueue` leaves for the host to add: one a group of parts,
/// at most `G2_SUM_PARTS_MAX`.
pub fn g2_sum_parts(count: usize) -> usize {
    sum_parts(count, G2.sum_threads_log2) / SUM_GROUP
}

/// `g2_sum_parts` of any count: a chunk is at least count / 2^16, so at most 2^16 + 1 parts
/// before padding to a whole group.
pub const G2_SUM_PARTS_MAX: usize = (1 << 16) / SUM_GROUP + 1;

/// Scratch bytes `g2_sum_enqueue` needs for `count` points: the parts, then the group sums.
pub fn g2_sum_scratch_bytes(count: usize) -> usize {
    G2.groups_bytes(count)
}

/// `g2_sum_scratch_bytes` of any count.
pub const G2_SUM_SCRATCH_MAX: usize = ((1 << 16) + SUM_GROUP + G2_SUM_PARTS_MAX) * G2_XYZZ;

/// Enqueues the sums of G2 `points[idx[i]]`, i < count, in `g2_sum_parts(count)` group sums,
/// whose Jacobian forms (blst_p2) land at `out`; the host adds them.
pub fn g2_sum_enqueue(
    gpu: &Gpu,
    s: &CudaStream,
    (points, idx, count): (u64, u64, usize),
    scratch: u64,
    out: u64,
) -> Result<()> {
    let (group_sums, groups) = G2.enqueue_groups(gpu, s, (points, idx, count), scratch)?;
    super::g2::to_jacobian(gpu, s, group_sums, groups as u32, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_g2_scratch_fits_any_count() {
        let counts = (0..40).flat_map(|k| [(1usize << k) - 1, 1 << k, (1 << k) + 1]);
        assert!(counts
            .into_iter()
            .all(|c| g2_sum_scratch_bytes(c) <= G2_SUM_SCRATCH_MAX));
    }

    #[test]
    fn sums_cover_every_point_in_whole_groups_and_leave_the_host_a_few_hundred() {
        for n in [1usize, 31, 32, 33, 1 << 20, 2_100_000, 1 << 27] {
            for threads in [G1.sum_threads_log2, G2.sum_threads_log2] {
                let parts = sum_parts(n, threads);
                assert!(
                    parts * sum_chunk(n, threads) >= n,
                    "{n}: every point in a part"
                );
                assert_eq!(parts % SUM_GROUP, 0);
                assert!(parts <= (1 << threads) + SUM_GROUP, "{n}: {parts} parts");
            }
            assert!(g2_sum_parts(n) <= G2_SUM_PARTS_MAX, "{n}");
        }
    }
}
