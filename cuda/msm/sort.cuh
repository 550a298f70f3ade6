// The sort phase of a Pippenger MSM, the same for every curve: signed c-bit digits and a
// counting sort of the (window, bucket) keys with integer atomics only. Afterwards each window's
// slice of `sorted` lists bucket b's point indices (bit 31 = negate the point) at
// [cursor[b] - counts[b], cursor[b]). The bucket phase (buckets.cuh) is per curve.
//
// Kernels, in launch order (cuda/README.md has the exact host sequence):
//   pt_msm_digits   scalar (Montgomery) -> canonical, negated when > (r-1)/2 (its point is
//                   then negated), signed digits; per window: key = bucket | sign << 31.
//   pt_msm_hist     bucket sizes, one window after another (counters stay in L2).
//   pt_msm_plan_sums, pt_msm_plan  per window: bucket starts (exclusive scan of the sizes),
//                   by blocks of PT_MSM_PLAN_PART buckets.
//   pt_msm_scatter  point index | sign -> its bucket's slot (counting sort); afterwards
//                   cursor[b] is the end of bucket b. Over shifted bases (one set of buckets
//                   for every window): pt_msm_bins, pt_msm_scatter_bins, pt_msm_bin_sort.
#pragma once
#include "../ff/bls12_381.cuh"
#include "config.cuh"

#define PT_MSM_SKIP 0xffffffffu

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

// grid = ceil(n / 256), 256 threads: keys[w * n + i] for every window w.
extern "C" __global__ void __launch_bounds__(PT_MSM_DIGIT_THREADS)
pt_msm_digits(const fr_t* scalars, uint32_t n, uint32_t c, uint32_t nwin, uint32_t* keys)
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
        // run-time word index: a small unrolled select keeps w9 in registers
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
    }
}

// grid = (ceil(n / 256), nwin), 256 threads. counts (nwin * nb words) must be zero on entry.
// SHARED (shifted bases): every window counts into one set of nb buckets.
template <bool SHARED>
PT_FI void pt_msm_hist_impl(const uint32_t* keys, uint32_t n, uint32_t nb, uint32_t* counts)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, w = blockIdx.y;
    if (i >= n) return;
    const uint32_t key = keys[(size_t)w * n + i];
    const size_t set = SHARED ? 0 : (size_t)w * nb;
    if (key != PT_MSM_SKIP) atomicAdd(&counts[set + (key & 0x7fffffffu)], 1u);
}
extern "C" __global__ void __launch_bounds__(256)
pt_msm_hist(const uint32_t* keys, uint32_t n, uint32_t nb, uint32_t* counts)
{
    pt_msm_hist_impl<false>(keys, n, nb, counts);
}
extern "C" __global__ void __launch_bounds__(256)
pt_msm_hist_shared(const uint32_t* keys, uint32_t n, uint32_t nb, uint32_t* counts)
{
    pt_msm_hist_impl<true>(keys, n, nb, counts);
}

// The plan: cursor[w][b] = start of bucket b in window w's slice of `sorted` (exclusive scan
// of counts), by blocks of PT_MSM_PLAN_PART buckets so that a set of 2^23 buckets (shifted
// bases) fills the GPU instead of one multiprocessor: pt_msm_plan_sums writes each block's
// total to parts[w][p], pt_msm_plan adds the totals before its block to its own scan.

// Sum of v over the block (every thread gets it); sh: PT_MSM_PLAN_THREADS words.
PT_FI uint32_t pt_plan_block_sum(uint32_t* sh, uint32_t v) {
    const uint32_t t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (uint32_t s = PT_MSM_PLAN_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    const uint32_t r = sh[0];
    __syncthreads();
    return r;
}

// This thread's PT_MSM_PLAN_PER buckets of block (p, w): [b0, b1).
PT_FI void pt_plan_range(uint32_t nb, uint32_t& b0, uint32_t& b1) {
    b0 = min(nb, blockIdx.x * PT_MSM_PLAN_PART + threadIdx.x * PT_MSM_PLAN_PER);
    b1 = min(nb, b0 + PT_MSM_PLAN_PER);
}

// grid = (pt_msm_plan_parts(nb), nwin), PT_MSM_PLAN_THREADS threads.
extern "C" __global__ void __launch_bounds__(PT_MSM_PLAN_THREADS)
pt_msm_plan_sums(const uint32_t* counts, uint32_t nb, uint32_t* parts)
{
    __shared__ uint32_t sh[PT_MSM_PLAN_THREADS];
    const uint32_t* cnt = counts + (size_t)blockIdx.y * nb;
    uint32_t b0, b1, sc = 0;
    pt_plan_range(nb, b0, b1);
    for (uint32_t b = b0; b < b1; b++) sc += cnt[b];
    const uint32_t total = pt_plan_block_sum(sh, sc);
    if (threadIdx.x == 0) parts[(size_t)blockIdx.y * gridDim.x + blockIdx.x] = total;
}

// grid and threads as pt_msm_plan_sums, after it.
extern "C" __global__ void __launch_bounds__(PT_MSM_PLAN_THREADS)
pt_msm_plan(const uint32_t* counts, uint32_t nb, const uint32_t* parts, uint32_t* cursor)
{
    __shared__ uint32_t s_cnt[PT_MSM_PLAN_THREADS];
    const uint32_t w = blockIdx.y, p = blockIdx.x, t = threadIdx.x;
    // the blocks before this one
    const uint32_t* pw = parts + (size_t)w * gridDim.x;
    uint32_t before = 0;
    for (uint32_t q = t; q < p; q += PT_MSM_PLAN_THREADS) before += pw[q];
    before = pt_plan_block_sum(s_cnt, before);
    const uint32_t* cnt = counts + (size_t)w * nb;
    uint32_t b0, b1, sc = 0;
    pt_plan_range(nb, b0, b1);
    for (uint32_t b = b0; b < b1; b++) sc += cnt[b];
    s_cnt[t] = sc;
    __syncthreads();
    for (uint32_t off = 1; off < PT_MSM_PLAN_THREADS; off <<= 1) {  // inclusive scan
        const uint32_t a = t >= off ? s_cnt[t - off] : 0;
        __syncthreads();
        s_cnt[t] += a;
        __syncthreads();
    }
    uint32_t rc = before + s_cnt[t] - sc;
    uint32_t* cur = cursor + (size_t)w * nb;
    for (uint32_t b = b0; b < b1; b++) {
        cur[b] = rc;
        rc += cnt[b];
    }
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

// Shifted bases: one set of nb buckets (up to 2^23) over the n * W entries, whose entry names
// the shifted base w * n + i. Scattering them straight into their buckets writes 4 bytes at a
// time into nb streams, far more open lines than L2 holds (65.9 ms at 2^26). Instead, in bins
// of PT_MSM_BIN buckets:
//   pt_msm_bins          bins[g] = start of bin g, bins[nbins + g] = 1 when it holds more
//                        than PT_MSM_BIN_CAP entries (a big bin)
//   pt_msm_scatter_bins  each entry to the next slot of its bin: few enough streams for L2 to
//                        fill whole lines; a big bin's entries go straight to their bucket
//   pt_msm_bin_sort      a block a bin: its entries into shared memory, then each to its
//                        bucket's slot inside the bin (from `fine`, written beside the entries;
//                        the host lends it bsum, which only the accumulation writes, later;
//                        without it the key is read back from `keys` at random, 2x slower)
// after which cursor[b] is the end of bucket b, as after pt_msm_scatter.

// grid = ceil(nbins / 256), 256 threads; cursor: the bucket starts (pt_msm_plan).
extern "C" __global__ void __launch_bounds__(256)
pt_msm_bins(const uint32_t* counts, const uint32_t* cursor, uint32_t nb, uint32_t* bins)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x, nbins = pt_msm_bin_count(nb);
    if (g >= nbins) return;
    const uint32_t b0 = g * PT_MSM_BIN, b1 = min(nb, b0 + PT_MSM_BIN);
    uint32_t size = 0;
    for (uint32_t b = b0; b < b1; b++) size += counts[b];
    bins[g] = cursor[b0];
    bins[nbins + g] = size > PT_MSM_BIN_CAP;
}

// grid = (ceil(n / 256), W), 256 threads. fine (n * W bytes, may be null): each entry's bucket
// inside its bin, beside it, so that pt_msm_bin_sort need not read its key back at random.
extern "C" __global__ void __launch_bounds__(256)
pt_msm_scatter_bins(const uint32_t* keys, uint32_t n, uint32_t nb, uint32_t* bins, uint32_t* cursor,
                    uint32_t* sorted, uint8_t* fine)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, w = blockIdx.y;
    if (i >= n) return;
    const uint32_t key = keys[(size_t)w * n + i];
    if (key == PT_MSM_SKIP) return;
    const uint32_t b = key & 0x7fffffffu, g = b / PT_MSM_BIN;
    const bool big = bins[pt_msm_bin_count(nb) + g];
    const uint32_t pos = big ? atomicAdd(&cursor[b], 1u) : atomicAdd(&bins[g], 1u);
    sorted[pos] = (w * n + i) | (key & 0x80000000u);
    if (fine && !big) fine[pos] = (uint8_t)(b % PT_MSM_BIN);
}

// grid = nbins, PT_MSM_BIN_THREADS threads, pt_msm_bin_smem() bytes of dynamic shared memory.
extern "C" __global__ void __launch_bounds__(PT_MSM_BIN_THREADS)
pt_msm_bin_sort(const uint32_t* keys, const uint8_t* fine, const uint32_t* counts, uint32_t nb,
                const uint32_t* bins, uint32_t* cursor, uint32_t* sorted)
{
    PT_DYN_SMEM(uint32_t, sm);
    uint32_t* lcur = sm + PT_MSM_BIN_CAP;  // PT_MSM_BIN bucket cursors inside the bin
    const uint32_t g = blockIdx.x, t = threadIdx.x, nbins = pt_msm_bin_count(nb);
    if (bins[nbins + g]) return;  // big: its entries went straight to their buckets
    const uint32_t b0 = g * PT_MSM_BIN, nbk = min((uint32_t)PT_MSM_BIN, nb - b0);
    const uint32_t start = cursor[b0], size = bins[g] - start;  // bins[g]: now the bin's end
    if (t == 0) {
        uint32_t run = 0;
        for (uint32_t j = 0; j < nbk; j++) {
            lcur[j] = run;
            run += counts[b0 + j];
        }
    }
    for (uint32_t e = t; e < size; e += PT_MSM_BIN_THREADS) sm[e] = sorted[start + e];
    __syncthreads();
    for (uint32_t e = t; e < size; e += PT_MSM_BIN_THREADS) {
        const uint32_t entry = sm[e];
        const uint32_t j = fine ? fine[start + e] : (keys[entry & 0x7fffffffu] & 0x7fffffffu) - b0;
        sorted[start + atomicAdd(&lcur[j], 1u)] = entry;
    }
    __syncthreads();
    for (uint32_t j = t; j < nbk; j += PT_MSM_BIN_THREADS) cursor[b0 + j] = start + lcur[j];
}
