// Pippenger MSM over G1 with signed c-bit digits, counting-sort bucketing (integer atomics
// only; no atomics on points), bucket accumulation in XYZZ, and the bucket and window
// reductions on the device. Result: one blst_p1 (Jacobian).
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
//   pt_msm_chunks   one thread per `chunk` consecutive sorted entries of a window, so every
//                   thread of a warp runs the same number of mixed additions whatever the
//                   bucket sizes; buckets wholly inside a chunk go straight to bsum, a
//                   bucket cut by a chunk edge leaves partial sums in head/tail.
//   pt_msm_fixup    bsum of every bucket that crosses a chunk edge.
//   pt_msm_bucket_reduce  per run of bseg buckets: sum_b (b+1) * bsum[b] by running sums.
//   pt_msm_reduce   sums of XYZZ points by groups (twice: runs -> windows).
//   pt_msm_final    Horner over windows (c doublings each) -> Jacobian.
#pragma once
#include "../ec/curve.cuh"
#include "config.cuh"

#define PT_MSM_SKIP 0xffffffffu
#ifndef PT_MSM_ACC_BLOCKS
#define PT_MSM_ACC_BLOCKS 3  // blocks per SM the bucket kernel is register-capped for
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

#include "batch_affine.cuh"

__device__ __noinline__ void pt_add_ni(g1_xyzz_t& p, const g1_xyzz_t& q) { pt_add(p, q); }
__device__ __noinline__ void pt_add_ni(g2_xyzz_t& p, const g2_xyzz_t& q) { pt_add(p, q); }
__device__ __noinline__ g1_xyzz_t pt_mul_small_ni(const g1_xyzz_t& p, uint32_t k) { return pt_mul_small(p, k); }

// grid = ceil(nwin * nchunk / 128), 128 threads. Thread (w, ch) sums sorted entries
// [ch * chunk, min((ch + 1) * chunk, entries of w)) bucket by bucket. A bucket inside the
// range goes to bsum[w][b]; the piece of a bucket that starts before the range goes to
// head[w][ch], the piece of one that ends after it to tail[w][ch]; edge[w][ch] = that
// bucket when it also started in this chunk (this is the first chunk edge it crosses),
// else PT_MSM_SKIP.
// DIRECT (pt_msm_chunks_direct): the entries are window w's points themselves,
// points[w * n + p] (the last batch-affine level's outputs, signs applied), not indices.
template <bool DIRECT>
PT_FI void pt_msm_chunks_body(const g1_affine_t* points, const uint32_t* sorted, const uint32_t* counts,
                              const uint32_t* cursor, uint32_t n, uint32_t nb, uint32_t nwin, uint32_t chunk,
                              uint32_t nchunk, g1_xyzz_t* bsum, g1_xyzz_t* head, g1_xyzz_t* tail, uint32_t* edge,
                              uint32_t shift)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= nwin * nchunk) return;
    edge[g] = PT_MSM_SKIP;
    const uint32_t w = g / nchunk, ch = g % nchunk;
    const uint32_t* ends = cursor + (size_t)w * nb;
    const uint32_t* cnt = counts + (size_t)w * nb;
    const uint32_t* srt = DIRECT ? nullptr : sorted + (size_t)w * n;
    const g1_affine_t* pw = DIRECT ? points + (size_t)w * n : points;
    const uint32_t total = ends[nb - 1];
    const uint32_t p0 = ch * chunk;
    if (p0 >= total) return;
    const uint32_t p1 = min(p0 + chunk, total);
    // first bucket whose end is past p0 (ends are non-decreasing)
    uint32_t lo = 0, hi = nb - 1;
    while (lo < hi) {
        const uint32_t mid = (lo + hi) >> 1;
        if (ends[mid] > p0) hi = mid; else lo = mid + 1;
    }
    // bucket sizes: counts, or ceil(counts / 2^shift) after `shift` batch-affine levels
    const uint32_t round = (1u << shift) - 1;
    uint32_t b = lo, bend = ends[b], bstart = bend - ((cnt[b] + round) >> shift);
    g1_xyzz_t acc = pt_xyzz_inf();
    uint32_t e = DIRECT ? p0 : srt[p0];
    g1_affine_t q = pt_load(pw + (e & 0x7fffffffu));
    for (uint32_t p = p0; p < p1; p++) {
        const g1_affine_t cur = q;
        const uint32_t ce = e;
        if (p + 1 < p1) {  // prefetch the next point while this one is added
            e = DIRECT ? p + 1 : srt[p + 1];
            q = pt_load(pw + (e & 0x7fffffffu));
        }
        if (!pt_is_inf(cur)) {
            g1_affine_t a = cur;
            if (!DIRECT && (ce >> 31)) a.y = a.y.neg();
            pt_madd(acc, a);
        }
        if (p + 1 == bend || p + 1 == p1) {
            g1_xyzz_t* dst = bstart >= p0 && bend <= p1 ? bsum + (size_t)w * nb + b
                             : bstart < p0                ? head + g
                                                          : tail + g;
            pt_store(dst, acc);
            acc = pt_xyzz_inf();
            if (p + 1 < p1) {
                do { b++; } while (ends[b] <= p + 1);
                bend = ends[b];
                bstart = bend - ((cnt[b] + round) >> shift);
            }
        }
    }
    if (bend > p1 && bstart >= p0) edge[g] = b;
}

extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS, PT_MSM_ACC_BLOCKS)
pt_msm_chunks(const g1_affine_t* points, const uint32_t* sorted, const uint32_t* counts,
              const uint32_t* cursor, uint32_t n, uint32_t nb, uint32_t nwin, uint32_t chunk,
              uint32_t nchunk, g1_xyzz_t* bsum, g1_xyzz_t* head, g1_xyzz_t* tail, uint32_t* edge)
{
    pt_msm_chunks_body<false>(points, sorted, counts, cursor, n, nb, nwin, chunk, nchunk, bsum, head, tail, edge, 0);
}

// As pt_msm_chunks over dense per-window points (stride n): the batch-affine path's last
// level (levels = alv), whose bucket b holds ceil(counts[b] / 2^levels) points and ends at
// cursor[b] (aend of the last level). The direct entries need no index loads.
extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS, PT_MSM_ACC_BLOCKS)
pt_msm_chunks_direct(const g1_affine_t* points, const uint32_t* counts, const uint32_t* cursor,
                     uint32_t n, uint32_t nb, uint32_t nwin, uint32_t chunk, uint32_t nchunk,
                     g1_xyzz_t* bsum, g1_xyzz_t* head, g1_xyzz_t* tail, uint32_t* edge, uint32_t levels)
{
    pt_msm_chunks_body<true>(points, nullptr, counts, cursor, n, nb, nwin, chunk, nchunk, bsum, head, tail, edge,
                             levels);
}

// grid = ceil(nwin * nchunk / 32) blocks of 32 threads. Thread (w, c) takes chunk c: when a
// bucket b starts in it and runs past its end (edge[w][c] = b), b's sum is the tail of chunk
// c plus the heads of chunks c+1 .. (end - 1) / chunk. Short runs (the usual one or two
// chunks) are summed by the thread; longer ones (a bucket cut into thousands of chunks: the top
// window, many equal scalars) by all 32 threads of the block, then a tree.
#define PT_MSM_FIX_THREADS 32
#define PT_MSM_FIX_SERIAL 16
extern "C" __global__ void __launch_bounds__(PT_MSM_FIX_THREADS)
pt_msm_fixup(const uint32_t* cursor, const uint32_t* edge, uint32_t nb, uint32_t nwin,
             uint32_t chunk, uint32_t nchunk, const g1_xyzz_t* head, const g1_xyzz_t* tail,
             g1_xyzz_t* bsum)
{
    __shared__ g1_xyzz_t s[PT_MSM_FIX_THREADS];
    __shared__ uint32_t s_long[PT_MSM_FIX_THREADS];
    const uint32_t t = threadIdx.x;
    const uint32_t g = blockIdx.x * PT_MSM_FIX_THREADS + t;
    uint32_t span = 0;
    if (g < nwin * nchunk && edge[g] != PT_MSM_SKIP) {
        const uint32_t w = g / nchunk, b = edge[g], cs = g % nchunk;
        const uint32_t ce = (cursor[(size_t)w * nb + b] - 1) / chunk;
        span = ce - cs;
        if (span <= PT_MSM_FIX_SERIAL) {
            const size_t base = (size_t)w * nchunk;
            g1_xyzz_t acc = pt_load(tail + base + cs);
            for (uint32_t c = cs + 1; c <= ce; c++) pt_add_ni(acc, pt_load(head + base + c));
            pt_store(bsum + (size_t)w * nb + b, acc);
        }
    }
    s_long[t] = span > PT_MSM_FIX_SERIAL ? span : 0;
    __syncthreads();
    for (uint32_t j = 0; j < PT_MSM_FIX_THREADS; j++) {
        if (s_long[j] == 0) continue;  // block-uniform
        const uint32_t gj = blockIdx.x * PT_MSM_FIX_THREADS + j;
        const uint32_t w = gj / nchunk, b = edge[gj], cs = gj % nchunk, ce = cs + s_long[j];
        const size_t base = (size_t)w * nchunk;
        g1_xyzz_t acc = t == 0 ? pt_load(tail + base + cs) : pt_xyzz_inf();
        for (uint32_t c = cs + 1 + t; c <= ce; c += PT_MSM_FIX_THREADS) pt_add_ni(acc, pt_load(head + base + c));
        s[t] = acc;
        __syncthreads();
        for (uint32_t h = PT_MSM_FIX_THREADS / 2; h > 0; h >>= 1) {
            if (t < h) {
                g1_xyzz_t x = s[t];
                pt_add_ni(x, s[t + h]);
                s[t] = x;
            }
            __syncthreads();
        }
        if (t == 0) pt_store(bsum + (size_t)w * nb + b, s[0]);
        __syncthreads();
    }
}

// grid = ceil(nwin * nbseg / 128), 128 threads: segs[w][s] = sum over buckets b in
// [s * bseg, (s + 1) * bseg) of (b + 1) * bsum[w][b] (empty buckets count as zero).
extern "C" __global__ void __launch_bounds__(PT_MSM_RED_THREADS)
pt_msm_bucket_reduce(const g1_xyzz_t* bsum, const uint32_t* counts, uint32_t nb, uint32_t nwin,
                     uint32_t bseg, g1_xyzz_t* segs)
{
    const uint32_t nbseg = nb / bseg;
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= nwin * nbseg) return;
    const uint32_t w = g / nbseg, s = g % nbseg;
    const size_t base = (size_t)w * nb;
    const uint32_t b0 = s * bseg;
    g1_xyzz_t running = pt_xyzz_inf(), total = pt_xyzz_inf();
    for (uint32_t b = b0 + bseg; b-- > b0;) {
        if (counts[base + b]) pt_add_ni(running, pt_load(bsum + base + b));
        pt_add_ni(total, running);
    }
    // weights b + 1 = (b - b0 + 1) + b0
    if (b0) pt_add_ni(total, pt_mul_small_ni(running, b0));
    pt_store(segs + g, total);
}

// out[gi] = sum of in[gi * count + j], j < count, by one block of THREADS threads: strided
// sums, then a tree in shared memory.
template <class F, uint32_t THREADS>
PT_FI void pt_reduce_group(const xyzz_of<F>* in, uint32_t count, xyzz_of<F>* out)
{
    __shared__ xyzz_of<F> s[THREADS];
    const uint32_t gi = blockIdx.x, t = threadIdx.x;
    const xyzz_of<F>* p = in + (size_t)gi * count;
    xyzz_of<F> acc = pt_xyzz_inf<F>();
    for (uint32_t j = t; j < count; j += THREADS) pt_add_ni(acc, pt_load(p + j));
    s[t] = acc;
    __syncthreads();
    for (uint32_t h = THREADS / 2; h > 0; h >>= 1) {
        if (t < h) {
            xyzz_of<F> a = s[t];
            pt_add_ni(a, s[t + h]);
            s[t] = a;
        }
        __syncthreads();
    }
    if (t == 0) pt_store(out + gi, s[0]);
}

// grid = groups, 128 threads: out[gi] = sum of in[gi * count + j], j < count.
extern "C" __global__ void __launch_bounds__(PT_MSM_RED_THREADS)
pt_msm_reduce(const g1_xyzz_t* in, uint32_t count, g1_xyzz_t* out)
{
    pt_reduce_group<fp_t, PT_MSM_RED_THREADS>(in, count, out);
}

// The same over G2, 64 threads (a G2 XYZZ point is 384 bytes of shared memory).
#define PT_G2_RED_THREADS 64
extern "C" __global__ void __launch_bounds__(PT_G2_RED_THREADS)
pt_g2_reduce(const g2_xyzz_t* in, uint32_t count, g2_xyzz_t* out)
{
    pt_reduce_group<fp2_t, PT_G2_RED_THREADS>(in, count, out);
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

// Sum of a list of affine points (e.g. the bases whose scalar is 1), in G1 or G2.
// grid = ceil(parts/128), 128 threads; part p sums points[idx[j]] (or points[j] when idx is
// null) for j in [p * chunk, min(count, (p + 1) * chunk)) (a part past the end is infinity).
// Enough parts to fill the GPU (each is a serial chain of additions), then reductions in
// groups: G1 pt_msm_reduce twice and pt_msm_final(tmp, 1, 0, result); G2 pt_g2_reduce, then
// pt_g2_to_jac(groups, ngroups, out) and the host adds the few Jacobian sums.
template <class F>
PT_FI void pt_sum_part(const affine_of<F>* points, const uint32_t* idx, uint32_t count,
                       uint32_t chunk, uint32_t p, xyzz_of<F>* parts)
{
    xyzz_of<F> acc = pt_xyzz_inf<F>();
    const uint32_t j1 = min(count, (p + 1) * chunk);
    for (uint32_t j = p * chunk; j < j1; j++) {
        const affine_of<F> a = pt_load(points + (idx ? idx[j] : j));
        if (!pt_is_inf(a)) pt_madd(acc, a);
    }
    pt_store(parts + p, acc);
}

extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS)
pt_g1_sum_parts(const g1_affine_t* points, const uint32_t* idx, uint32_t count, uint32_t chunk,
                uint32_t nparts, g1_xyzz_t* parts)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < nparts) pt_sum_part(points, idx, count, chunk, p, parts);
}

extern "C" __global__ void __launch_bounds__(PT_MSM_ACC_THREADS)
pt_g2_sum_parts(const g2_affine_t* points, const uint32_t* idx, uint32_t count, uint32_t chunk,
                uint32_t nparts, g2_xyzz_t* parts)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < nparts) pt_sum_part(points, idx, count, chunk, p, parts);
}

// grid = ceil(n/128), 128 threads: out[i] = parts[i] as blst_p2 (Jacobian over Fp2).
extern "C" __global__ void __launch_bounds__(128)
pt_g2_to_jac(const g2_xyzz_t* parts, uint32_t n, g2_jac_t* out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) pt_store(out + i, pt_to_jac(pt_load(parts + i)));
}
