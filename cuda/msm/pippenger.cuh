// Pippenger MSM over G1 with signed c-bit digits, counting-sort bucketing (integer atomics
// only; no atomics on points), bucket accumulation in XYZZ (or batch-affine), and the bucket
// and window reductions on the device. Result: one blst_p1 (Jacobian).
//
// The sort (pt_msm_digits .. pt_msm_scatter, sort.cuh) is shared with G2; the bucket phase's
// bodies (buckets.cuh) too. G1's kernels, after the sort (cuda/README.md has the host sequence):
//   pt_msm_chunks         bucket accumulation, a thread per chunk of sorted entries
//   pt_msm_chunks_direct  the same over the batch-affine path's last level (batch_affine.cuh)
//   pt_msm_fixup          bsum of every bucket that crosses a chunk edge
//   pt_msm_bucket_reduce  per run of bseg buckets: sum_b (b+1) * bsum[b] by running sums
//   pt_msm_reduce         sums of XYZZ points by groups (twice: runs -> windows)
//   pt_msm_final          Horner over windows (c doublings each) -> Jacobian
//   pt_g1_sum_parts       sums of affine points (the bases whose scalar is 1)
#pragma once
#include "sort.cuh"
#include "buckets.cuh"

#ifndef PT_MSM_ACC_BLOCKS
#define PT_MSM_ACC_BLOCKS 3  // blocks per SM the bucket kernel is register-capped for
#endif

#include "batch_affine.cuh"

// grid = ceil(nwin * nchunk / 128), 128 threads (pt_msm_chunks_body).
extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS, PT_MSM_ACC_BLOCKS)
pt_msm_chunks(const g1_affine_t* points, const uint32_t* sorted, const uint32_t* counts,
              const uint32_t* cursor, uint32_t n, uint32_t nb, uint32_t nwin, uint32_t chunk,
              uint32_t nchunk, g1_xyzz_t* bsum, g1_xyzz_t* head, g1_xyzz_t* tail, uint32_t* edge)
{
    pt_msm_chunks_body<fp_t, false, true, pt_inline_steps>(points, sorted, counts, cursor, n, nb, nwin, chunk,
                                                           nchunk, bsum, head, tail, edge, 0);
}

// As pt_msm_chunks over dense per-window points (stride n): the batch-affine path's last
// level (levels = alv), whose bucket b holds ceil(counts[b] / 2^levels) points and ends at
// cursor[b] (aend of the last level). The direct entries need no index loads.
extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS, PT_MSM_ACC_BLOCKS)
pt_msm_chunks_direct(const g1_affine_t* points, const uint32_t* counts, const uint32_t* cursor,
                     uint32_t n, uint32_t nb, uint32_t nwin, uint32_t chunk, uint32_t nchunk,
                     g1_xyzz_t* bsum, g1_xyzz_t* head, g1_xyzz_t* tail, uint32_t* edge, uint32_t levels)
{
    pt_msm_chunks_body<fp_t, true, true, pt_inline_steps>(points, nullptr, counts, cursor, n, nb, nwin, chunk,
                                                          nchunk, bsum, head, tail, edge, levels);
}

// grid = ceil(nwin * nchunk / 32) blocks of 32 threads (pt_chunk_fixup with ends = cursor).
#define PT_MSM_FIX_THREADS PT_FIX_THREADS
extern "C" __global__ void __launch_bounds__(PT_MSM_FIX_THREADS)
pt_msm_fixup(const uint32_t* cursor, const uint32_t* edge, uint32_t nb, uint32_t nwin,
             uint32_t chunk, uint32_t nchunk, const g1_xyzz_t* head, const g1_xyzz_t* tail,
             g1_xyzz_t* bsum)
{
    pt_chunk_fixup<g1_xyzz_t, pt_xyzz_sum<fp_t>>(cursor, edge, nb, nwin, chunk, nchunk, head, tail, bsum);
}

// grid = ceil(nwin * nbseg / 128), 128 threads.
extern "C" __global__ void __launch_bounds__(PT_MSM_RED_THREADS)
pt_msm_bucket_reduce(const g1_xyzz_t* bsum, const uint32_t* counts, uint32_t nb, uint32_t nwin,
                     uint32_t bseg, g1_xyzz_t* segs)
{
    pt_bucket_reduce_body(bsum, counts, nb, nwin, bseg, segs);
}

// grid = groups, 128 threads: out[gi] = sum of in[gi * count + j], j < count.
extern "C" __global__ void __launch_bounds__(PT_MSM_RED_THREADS)
pt_msm_reduce(const g1_xyzz_t* in, uint32_t count, g1_xyzz_t* out)
{
    pt_reduce_group<fp_t, PT_MSM_RED_THREADS>(in, count, out);
}

// <<<1, 1>>>: result = sum_w 2^(c w) wins[w], as Jacobian (blst_p1). One thread runs ~250
// doublings back to back, so this uses Jacobian doubling (7 multiplies instead of XYZZ's 10)
// with an inlined multiplier (no call latency).
struct pt_fp_inline_params : pt_fp_params { static constexpr bool CALL = false; };
typedef mont_t<pt_fp_inline_params> fpi_t;
struct pt_jac_i { fpi_t x, y, z; };

PT_FI pt_jac_i pt_jac_from_xyzz(const g1_xyzz_t& p) {
    const g1_jac_t j = pt_to_jac(p);
    pt_jac_i r;
    for (int i = 0; i < 12; i++) { r.x.v[i] = j.x.v[i]; r.y.v[i] = j.y.v[i]; r.z.v[i] = j.z.v[i]; }
    return r;
}
// dbl-2009-l (a = 0): 2M + 5S
PT_FI void pt_jac_dbl(pt_jac_i& p) {
    if (p.z.is_zero()) return;
    const fpi_t A = p.x.sqr(), B = p.y.sqr(), C = B.sqr();
    const fpi_t t = p.x + B;
    fpi_t D = t.sqr() - A - C;
    D = D.dbl();
    const fpi_t E = A.dbl() + A, F = E.sqr();
    const fpi_t x3 = F - D.dbl();
    const fpi_t c8 = C.dbl().dbl().dbl();
    const fpi_t z3 = (p.y * p.z).dbl();
    p.y = E * (D - x3) - c8;
    p.x = x3;
    p.z = z3;
}
// add-2007-bl: 11M + 5S
PT_FI void pt_jac_add(pt_jac_i& p, const pt_jac_i& q) {
    if (q.z.is_zero()) return;
    if (p.z.is_zero()) { p = q; return; }
    const fpi_t z1z1 = p.z.sqr(), z2z2 = q.z.sqr();
    const fpi_t u1 = p.x * z2z2, u2 = q.x * z1z1;
    const fpi_t s1 = p.y * q.z * z2z2, s2 = q.y * p.z * z1z1;
    const fpi_t h = u2 - u1, rr = (s2 - s1).dbl();
    if (h.is_zero()) {
        if (rr.is_zero()) pt_jac_dbl(p);
        else p.z = fpi_t::zero();
        return;
    }
    const fpi_t i = h.dbl().sqr(), j = h * i, v = u1 * i;
    const fpi_t x3 = rr.sqr() - j - v.dbl();
    const fpi_t y3 = rr * (v - x3) - (s1 * j).dbl();
    const fpi_t z3 = ((p.z + q.z).sqr() - z1z1 - z2z2) * h;
    p.x = x3; p.y = y3; p.z = z3;
}

extern "C" __global__ void pt_msm_final(const g1_xyzz_t* wins, uint32_t nwin, uint32_t c, g1_jac_t* result)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    pt_jac_i acc = pt_jac_from_xyzz(pt_load(wins + nwin - 1));
    for (int w = (int)nwin - 2; w >= 0; w--) {
        for (uint32_t i = 0; i < c; i++) pt_jac_dbl(acc);
        pt_jac_add(acc, pt_jac_from_xyzz(pt_load(wins + w)));
    }
    g1_jac_t r;
    if (acc.z.is_zero()) {
        r.x = fp_t::one(); r.y = fp_t::one(); r.z = fp_t::zero();
    } else {
        for (int i = 0; i < 12; i++) { r.x.v[i] = acc.x.v[i]; r.y.v[i] = acc.y.v[i]; r.z.v[i] = acc.z.v[i]; }
    }
    pt_store(result, r);
}

// grid = ceil(parts/128), 128 threads (pt_sum_part); then pt_msm_reduce twice and
// pt_msm_final(tmp, 1, 0, result).
extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS)
pt_g1_sum_parts(const g1_affine_t* points, const uint32_t* idx, uint32_t count, uint32_t chunk,
                uint32_t nparts, g1_xyzz_t* parts)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < nparts) pt_sum_part<fp_t, pt_inline_steps>(points, idx, count, chunk, p, parts);
}
