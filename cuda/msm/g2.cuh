// G2 (coordinates in Fp2) kernels: the Pippenger MSM's bucket phase (the sort is G1's own:
// pt_msm_digits .. pt_msm_scatter, sort.cuh) and sums of affine points. Same bodies as G1
// (buckets.cuh); the differences are sizes: a G2 XYZZ point is 384 bytes (96 registers), so
// the accumulation is capped at PT_G2_ACC_BLOCKS blocks a multiprocessor (255 registers) and
// loads each point when it adds it, the reductions run 64 threads a block, and the additions
// are out of line (pt_g2_steps). The MSM ends with its window sums, which the host combines
// (Horner, ~250 doublings with blst: ~0.3 ms of one core; on one GPU thread it would be a ~8 ms
// chain of dependent multiplies and another kernel for ptxas to compile the addition into).
//   pt_g2_msm_chunks          bucket accumulation, a thread per chunk of sorted entries
//   pt_g2_msm_fixup           bsum of every bucket that crosses a chunk edge
//   pt_g2_msm_bucket_reduce   per run of bseg buckets: sum_b (b+1) * bsum[b]
//   pt_g2_reduce              sums of XYZZ points by groups (runs -> windows; sums' parts)
//   pt_g2_sum_parts           sums of affine points (the bases whose scalar is 1)
//   pt_g2_to_jac              XYZZ -> blst_p2 (window sums or parts, for the host to add)
#pragma once
#include "buckets.cuh"

#ifndef PT_G2_ACC_BLOCKS
#define PT_G2_ACC_BLOCKS 2  // 2 x 128 threads x 255 registers fill a multiprocessor's file
#endif
#define PT_G2_RED_THREADS 64  // a G2 XYZZ point is 384 bytes of shared memory

// grid = ceil(nwin * nchunk / 128), 128 threads; as pt_msm_chunks over blst_p2_affine bases.
extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS, PT_G2_ACC_BLOCKS)
pt_g2_msm_chunks(const g2_affine_t* points, const uint32_t* sorted, const uint32_t* counts,
                 const uint32_t* cursor, uint32_t n, uint32_t nb, uint32_t nwin, uint32_t chunk,
                 uint32_t nchunk, g2_xyzz_t* bsum, g2_xyzz_t* head, g2_xyzz_t* tail, uint32_t* edge)
{
    pt_msm_chunks_body<fp2_t, false, false, pt_g2_steps>(points, sorted, counts, cursor, n, nb, nwin, chunk,
                                                         nchunk, bsum, head, tail, edge, 0);
}

// grid = ceil(nwin * nchunk / 32) blocks of 32 threads; as pt_msm_fixup.
extern "C" __global__ void __launch_bounds__(PT_FIX_THREADS)
pt_g2_msm_fixup(const uint32_t* cursor, const uint32_t* edge, uint32_t nb, uint32_t nwin,
                uint32_t chunk, uint32_t nchunk, const g2_xyzz_t* head, const g2_xyzz_t* tail,
                g2_xyzz_t* bsum)
{
    pt_chunk_fixup<g2_xyzz_t, pt_xyzz_sum<fp2_t>>(cursor, edge, nb, nwin, chunk, nchunk, head, tail, bsum);
}

// grid = ceil(nwin * nbseg / 128), 128 threads; as pt_msm_bucket_reduce.
extern "C" __global__ void __launch_bounds__(PT_MSM_RED_THREADS)
pt_g2_msm_bucket_reduce(const g2_xyzz_t* bsum, const uint32_t* counts, uint32_t nb, uint32_t nwin,
                        uint32_t bseg, g2_xyzz_t* segs)
{
    pt_bucket_reduce_body(bsum, counts, nb, nwin, bseg, segs);
}

// grid = groups, 64 threads: out[gi] = sum of in[gi * count + j], j < count.
extern "C" __global__ void __launch_bounds__(PT_G2_RED_THREADS)
pt_g2_reduce(const g2_xyzz_t* in, uint32_t count, g2_xyzz_t* out)
{
    pt_reduce_group<fp2_t, PT_G2_RED_THREADS>(in, count, out);
}

// grid = ceil(parts/128), 128 threads (pt_sum_part); then pt_g2_reduce and pt_g2_to_jac, and
// the host adds the few Jacobian sums.
extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS)
pt_g2_sum_parts(const g2_affine_t* points, const uint32_t* idx, uint32_t count, uint32_t chunk,
                uint32_t nparts, g2_xyzz_t* parts)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < nparts) pt_sum_part<fp2_t, pt_g2_steps>(points, idx, count, chunk, p, parts);
}

// grid = ceil(n/128), 128 threads: out[i] = parts[i] as blst_p2 (Jacobian over Fp2).
extern "C" __global__ void __launch_bounds__(128)
pt_g2_to_jac(const g2_xyzz_t* parts, uint32_t n, g2_jac_t* out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) pt_store(out + i, pt_to_jac(pt_load(parts + i)));
}
