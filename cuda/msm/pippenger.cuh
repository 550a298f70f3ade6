// Pippenger MSM over G1 with signed c-bit digits, counting-sort bucketing (integer atomics
// only; no atomics on points), bucket accumulation in XYZZ, and the bucket and window
// reductions on the device. Result: one blst_p1 (Jacobian).
//
// Kernels, in launch order (cuda/README.md has the exact host sequence):
//   pt_msm_digits   scalar (Montgomery) -> canonical, negated when > (r-1)/2 (the point is
//                   then negated), split into signed digits; per window: key = bucket | sign,
//                   and a histogram of bucket sizes.
//   pt_msm_plan     per window: bucket starts (exclusive scan of sizes), and the scan of
//                   pieces per bucket (ceil(size / split)), which bounds every thread's work
//                   even when one bucket holds most points (e.g. all scalars equal).
//   pt_msm_vmap     piece -> bucket map.
//   pt_msm_scatter  point index | sign -> its bucket's slot (counting sort).
//   pt_msm_segments one thread per `seg` consecutive pieces of a window: sums each piece
//                   (mixed adds) and folds the pieces into sum_v weight(v) * S_v with a
//                   running sum; the weights' common offset is one small scalar multiple.
//   pt_msm_reduce   sum of XYZZ points per group (one block per group): windows' totals.
//   pt_msm_final    Horner over windows (c doublings each) -> Jacobian.
#pragma once
#include "../ec/g1.cuh"
#include "config.cuh"

#define PT_MSM_SKIP 0xffffffffu
#ifndef PT_MSM_SEG_BLOCKS
#define PT_MSM_SEG_BLOCKS 3
#endif

// (r - 1) / 2, canonical limbs
PT_CONST uint32_t PT_FR_HALF[8] = {0x80000000, 0x7fffffff, 0x7fff2dff, 0xa9ded201,
                                   0x04d0ec02, 0x199cec04, 0x94cebea4, 0x39f6d3a9};

PT_FI bool pt_fr_gt_half(const fr_t& s) {
    // s > (r-1)/2  <=>  (r-1)/2 - s borrows
    uint32_t t = sub_cc(PT_FR_HALF[0], s.v[0]);
    for (int i = 1; i < 8; i++) t = subc_cc(PT_FR_HALF[i], s.v[i]);
    (void)t;
    return subc(0, 0) != 0;
}

// grid = ceil(n / 256), 256 threads. counts (nwin * nb words) must be zero on entry.
extern "C" __global__ void __launch_bounds__(PT_MSM_DIGIT_THREADS)
pt_msm_digits(const fr_t* scalars, uint32_t n, uint32_t c, uint32_t nwin, uint32_t* keys,
              uint32_t* counts)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t s = pt_load(scalars + i).from_mont();
    uint32_t flip = 0;
    if (pt_fr_gt_half(s)) {
        s = fr_t::zero() - s;  // r - s < 2^254
        flip = 1;
    }
    uint32_t w9[9];
    for (int j = 0; j < 8; j++) w9[j] = s.v[j];
    w9[8] = 0;
    const uint32_t nb = 1u << (c - 1), mask = (1u << c) - 1;
    uint32_t carry = 0;
    for (uint32_t w = 0; w < nwin; w++) {
        const uint32_t bit = w * c, wi = bit >> 5, sh = bit & 31;
        uint32_t lo = 0, hi = 0;
        // run-time word index: read through a small unrolled select to stay in registers
#pragma unroll
        for (int j = 0; j < 8; j++) {
            if ((uint32_t)j == wi) { lo = w9[j]; hi = w9[j + 1]; }
        }
        uint32_t d = (uint32_t)((((uint64_t)hi << 32) | lo) >> sh) & mask;
        d += carry;
        uint32_t key = PT_MSM_SKIP;
        if (d > nb) {
            d = (1u << c) - d;  // digit = -(2^c - d)
            carry = 1;
            if (d) key = (d - 1) | ((flip ^ 1u) << 31);
        } else {
            carry = 0;
            if (d) key = (d - 1) | (flip << 31);
        }
        keys[(size_t)w * n + i] = key;
        if (key != PT_MSM_SKIP) atomicAdd(&counts[w * nb + (key & 0x7fffffffu)], 1u);
    }
}

// grid = nwin blocks of 1024 threads. cursor[w][b] = start of bucket b inside window w's
// slice of `sorted`; voff[w][b] = first piece of bucket b, voff[w][nb] = pieces in window w.
extern "C" __global__ void __launch_bounds__(PT_MSM_PLAN_THREADS)
pt_msm_plan(const uint32_t* counts, uint32_t nb, uint32_t split, uint32_t* cursor, uint32_t* voff)
{
    __shared__ uint32_t s_cnt[PT_MSM_PLAN_THREADS], s_pcs[PT_MSM_PLAN_THREADS];
    const uint32_t w = blockIdx.x, t = threadIdx.x;
    const uint32_t per = (nb + PT_MSM_PLAN_THREADS - 1) / PT_MSM_PLAN_THREADS;
    const uint32_t b0 = min(nb, t * per), b1 = min(nb, b0 + per);
    const uint32_t* cnt = counts + (size_t)w * nb;
    uint32_t sc = 0, sp = 0;
    for (uint32_t b = b0; b < b1; b++) {
        const uint32_t x = cnt[b];
        sc += x;
        sp += (x + split - 1) / split;
    }
    s_cnt[t] = sc;
    s_pcs[t] = sp;
    __syncthreads();
    // inclusive Hillis-Steele scan over the 1024 thread totals
    for (uint32_t off = 1; off < PT_MSM_PLAN_THREADS; off <<= 1) {
        const uint32_t a = t >= off ? s_cnt[t - off] : 0, p = t >= off ? s_pcs[t - off] : 0;
        __syncthreads();
        s_cnt[t] += a;
        s_pcs[t] += p;
        __syncthreads();
    }
    uint32_t rc = s_cnt[t] - sc, rp = s_pcs[t] - sp;
    uint32_t* cur = cursor + (size_t)w * nb;
    uint32_t* vo = voff + (size_t)w * (nb + 1);
    for (uint32_t b = b0; b < b1; b++) {
        const uint32_t x = cnt[b];
        cur[b] = rc;
        vo[b] = rp;
        rc += x;
        rp += (x + split - 1) / split;
    }
    if (t == PT_MSM_PLAN_THREADS - 1) vo[nb] = s_pcs[t];
}

// grid = ceil(nwin * nb / 256), 256 threads: vmap[w][piece] = bucket.
extern "C" __global__ void __launch_bounds__(256)
pt_msm_vmap(const uint32_t* voff, uint32_t nb, uint32_t nwin, uint32_t vmax, uint32_t* vmap)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= nwin * nb) return;
    const uint32_t w = g / nb, b = g % nb;
    const uint32_t* vo = voff + (size_t)w * (nb + 1);
    for (uint32_t v = vo[b]; v < vo[b + 1]; v++) vmap[(size_t)w * vmax + v] = b;
}

// grid = (ceil(n / 256), nwin), 256 threads. Advances cursor[w][b] to the bucket's end.
extern "C" __global__ void __launch_bounds__(256)
pt_msm_scatter(const uint32_t* keys, uint32_t n, uint32_t nb, uint32_t* cursor, uint32_t* sorted)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, w = blockIdx.y;
    if (i >= n) return;
    const uint32_t key = keys[(size_t)w * n + i];
    if (key == PT_MSM_SKIP) return;
    const uint32_t pos = atomicAdd(&cursor[(size_t)w * nb + (key & 0x7fffffffu)], 1u);
    sorted[(size_t)w * n + pos] = i | (key & 0x80000000u);
}

// Sum of one piece: entries [start, start + len) of a window's sorted slice. Not inlined:
// the caller's running sums then live in local memory across the call instead of
// crowding the registers of this hot loop.
__device__ __noinline__ g1_xyzz_t pt_msm_piece(const g1_affine_t* points, const uint32_t* srt, uint32_t start, uint32_t len)
{
    g1_xyzz_t acc = pt_xyzz_inf();
    if (len == 0) return acc;
    uint32_t e = srt[start];
    g1_affine_t q = pt_load(points + (e & 0x7fffffffu));
    for (uint32_t j = 0; j < len; j++) {
        const g1_affine_t cur = q;
        const uint32_t ce = e;
        if (j + 1 < len) {  // prefetch the next point while this one is added
            e = srt[start + j + 1];
            q = pt_load(points + (e & 0x7fffffffu));
        }
        if (!pt_is_inf(cur)) {
            g1_affine_t a = cur;
            if (ce >> 31) a.y = a.y.neg();
            pt_madd(acc, a);
        }
    }
    return acc;
}

__device__ __noinline__ void pt_add_ni(g1_xyzz_t& p, const g1_xyzz_t& q) { pt_add(p, q); }
__device__ __noinline__ g1_xyzz_t pt_mul_small_ni(const g1_xyzz_t& p, uint32_t k) { return pt_mul_small(p, k); }

// grid = ceil(nwin * nseg / 128), 128 threads. segs[w * nseg + s] = sum over pieces v of
// thread s of weight(v) * S_v, weight = bucket index + 1.
extern "C" __global__ void __launch_bounds__(PT_MSM_SEG_THREADS, PT_MSM_SEG_BLOCKS)
pt_msm_segments(const g1_affine_t* points, const uint32_t* sorted, const uint32_t* counts,
                const uint32_t* cursor, const uint32_t* voff, const uint32_t* vmap, uint32_t n,
                uint32_t nb, uint32_t nwin, uint32_t split, uint32_t vmax, uint32_t seg,
                uint32_t nseg, g1_xyzz_t* segs)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= nwin * nseg) return;
    const uint32_t w = g / nseg, sidx = g % nseg;
    const uint32_t* vo = voff + (size_t)w * (nb + 1);
    const uint32_t* vm = vmap + (size_t)w * vmax;
    const uint32_t* cnt = counts + (size_t)w * nb;
    const uint32_t* cur = cursor + (size_t)w * nb;
    const uint32_t* srt = sorted + (size_t)w * n;
    const uint32_t vtot = vo[nb];
    const uint32_t v0 = sidx * seg, v1 = min(vtot, v0 + seg);
    g1_xyzz_t running = pt_xyzz_inf(), total = pt_xyzz_inf();
    if (v0 < v1) {
        const uint32_t lo = vm[v0] + 1;
        for (uint32_t v = v1; v-- > v0;) {
            const uint32_t b = vm[v];
            const uint32_t j = v - vo[b];
            const uint32_t size = cnt[b], start = cur[b] - size + j * split;
            const uint32_t len = min(split, size - j * split);
            const g1_xyzz_t sv = pt_msm_piece(points, srt, start, len);
            pt_add_ni(running, sv);
            const uint32_t wv = b + 1, wn = v > v0 ? vm[v - 1] + 1 : lo - 1;
            const uint32_t gap = wv - wn;
            if (gap == 1) pt_add_ni(total, running);
            else if (gap > 1) pt_add_ni(total, pt_mul_small_ni(running, gap));
        }
        if (lo > 1) pt_add_ni(total, pt_mul_small_ni(running, lo - 1));
    }
    pt_store(segs + g, total);
}

// grid = groups, 128 threads: out[gi] = sum of in[gi * count + j], j < count.
extern "C" __global__ void __launch_bounds__(PT_MSM_RED_THREADS)
pt_msm_reduce(const g1_xyzz_t* in, uint32_t count, g1_xyzz_t* out)
{
    __shared__ g1_xyzz_t s[PT_MSM_RED_THREADS];
    const uint32_t gi = blockIdx.x, t = threadIdx.x;
    const g1_xyzz_t* p = in + (size_t)gi * count;
    g1_xyzz_t acc = pt_xyzz_inf();
    for (uint32_t j = t; j < count; j += PT_MSM_RED_THREADS) pt_add_ni(acc, pt_load(p + j));
    s[t] = acc;
    __syncthreads();
    for (uint32_t h = PT_MSM_RED_THREADS / 2; h > 0; h >>= 1) {
        if (t < h) {
            g1_xyzz_t a = s[t];
            pt_add_ni(a, s[t + h]);
            s[t] = a;
        }
        __syncthreads();
    }
    if (t == 0) pt_store(out + gi, s[0]);
}

// <<<1, 1>>>: result = sum_w 2^(c w) wins[w], as Jacobian (blst_p1).
extern "C" __global__ void pt_msm_final(const g1_xyzz_t* wins, uint32_t nwin, uint32_t c, g1_jac_t* result)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    g1_xyzz_t acc = pt_load(wins + nwin - 1);
    for (int w = (int)nwin - 2; w >= 0; w--) {
        for (uint32_t i = 0; i < c; i++) pt_dbl(acc);
        pt_add_ni(acc, pt_load(wins + w));
    }
    pt_store(result, pt_to_jac(acc));
}

// Sum of a list of affine points (e.g. the bases whose scalar is 1). grid = ceil(parts/128),
// 128 threads; part p sums points[idx[j]] (or points[j] when idx is null) for
// j in [p * chunk, min(count, (p + 1) * chunk)). Then pt_msm_reduce(parts, nparts, tmp) and
// pt_msm_final(tmp, 1, 0, result).
extern "C" __global__ void __launch_bounds__(PT_MSM_SEG_THREADS)
pt_g1_sum_parts(const g1_affine_t* points, const uint32_t* idx, uint32_t count, uint32_t chunk,
                uint32_t nparts, g1_xyzz_t* parts)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= nparts) return;
    g1_xyzz_t acc = pt_xyzz_inf();
    const uint32_t j1 = min(count, (p + 1) * chunk);
    for (uint32_t j = p * chunk; j < j1; j++) {
        const g1_affine_t a = pt_load(points + (idx ? idx[j] : j));
        if (!pt_is_inf(a)) pt_madd(acc, a);
    }
    pt_store(parts + p, acc);
}
