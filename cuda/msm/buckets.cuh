// The bucket phase of a Pippenger MSM over either curve of curve.cuh (G1: F = fp_t, G2:
// F = fp2_t), after the sort (sort.cuh). These are the bodies; pippenger.cuh (G1) and g2.cuh
// (G2) make them kernels, so the curves share one implementation:
//   pt_msm_chunks_body     one thread per `chunk` consecutive sorted entries of a window, so
//                          every thread of a warp runs the same number of mixed additions
//                          whatever the bucket sizes; buckets wholly inside a chunk go straight
//                          to bsum, a bucket cut by a chunk edge leaves partial sums in head/tail
//                          (util/chunked_runs.cuh)
//   pt_chunk_fixup         bsum of every bucket that crosses a chunk edge (pt_xyzz_sum<F>)
//   pt_bucket_reduce_body  per run of bseg buckets: sum_b (b+1) * bsum[b] by running sums
//   pt_reduce_group        sums of XYZZ points by groups (twice: runs -> windows)
//   pt_sum_part            a serial sum of affine points (the bases whose scalar is 1)
#pragma once
#include "../ec/curve.cuh"
#include "../util/chunked_runs.cuh"
#include "config.cuh"

PT_NI void pt_add_ni(g1_xyzz_t& p, const g1_xyzz_t& q) { pt_add(p, q); }
PT_NI void pt_add_ni(g2_xyzz_t& p, const g2_xyzz_t& q) { pt_add(p, q); }
PT_NI void pt_madd_ni(g2_xyzz_t& p, const g2_affine_t& q) { pt_madd(p, q); }
// G2's steps, out of line: a G2 addition with its doubling case is 50-70 Fp multiplies of
// straight code, which cicc takes ~40 s over in every kernel that inlines one (most of ten
// minutes for a loop that inlined several), and ptxas compiles a kernel's callees with each
// kernel (~30 s for pt_add_ni), so G2's kernels call just these two; a doubling is an addition
// of the point to itself (12 multiplies more than pt_dbl, in the few bucket-sum doublings).
struct pt_g2_steps {
    PT_FI static void dbl(g2_xyzz_t& p) { const g2_xyzz_t q = p; pt_add_ni(p, q); }
    PT_FI static void add(g2_xyzz_t& p, const g2_xyzz_t& q) { pt_add_ni(p, q); }
    PT_FI static void madd(g2_xyzz_t& p, const g2_affine_t& q) { pt_madd_ni(p, q); }
};
PT_NI g1_xyzz_t pt_mul_small_ni(const g1_xyzz_t& p, uint32_t k) { return pt_mul_small(p, k); }
PT_NI g2_xyzz_t pt_mul_small_ni(const g2_xyzz_t& p, uint32_t k) { return pt_mul_small<fp2_t, pt_g2_steps>(p, k); }

// XYZZ points as the values of pt_chunk_fixup.
template <class F> struct pt_xyzz_sum {
    PT_FI static void add(xyzz_of<F>& acc, const xyzz_of<F>& x) { pt_add_ni(acc, x); }
    PT_FI static xyzz_of<F> zero() { return pt_xyzz_inf<F>(); }
};

// Thread (w, ch) sums sorted entries [ch * chunk, min((ch + 1) * chunk, entries of w)) bucket
// by bucket. A bucket inside the range goes to bsum[w][b]; the piece of a bucket that starts
// before the range goes to head[w][ch], the piece of one that ends after it to tail[w][ch];
// edge[w][ch] = that bucket when it also started in this chunk (this is the first chunk edge
// it crosses), else PT_NO_EDGE.
// DIRECT (pt_msm_chunks_direct): the entries are window w's points themselves,
// points[w * n + p] (the last batch-affine level's outputs, signs applied), not indices.
// PREFETCH: load the next point while this one is added (G1); G2's affine point is 48 more
// registers on top of a 96-register accumulator, so it is loaded when it is added. S: the
// mixed addition (pt_inline_steps, or G2's pt_g2_steps).
template <class F, bool DIRECT, bool PREFETCH, class S>
PT_FI void pt_msm_chunks_body(const affine_of<F>* points, const uint32_t* sorted, const uint32_t* counts,
                              const uint32_t* cursor, uint32_t n, uint32_t nb, uint32_t nwin, uint32_t chunk,
                              uint32_t nchunk, xyzz_of<F>* bsum, xyzz_of<F>* head, xyzz_of<F>* tail,
                              uint32_t* edge, uint32_t shift)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= nwin * nchunk) return;
    edge[g] = PT_NO_EDGE;
    const uint32_t w = g / nchunk, ch = g % nchunk;
    const uint32_t* ends = cursor + (size_t)w * nb;
    const uint32_t* cnt = counts + (size_t)w * nb;
    const uint32_t* srt = DIRECT ? nullptr : sorted + (size_t)w * n;
    const affine_of<F>* pw = DIRECT ? points + (size_t)w * n : points;
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
    xyzz_of<F> acc = pt_xyzz_inf<F>();
    uint32_t e = DIRECT ? p0 : srt[p0];
    affine_of<F> q;
    if (PREFETCH) q = pt_load(pw + (e & 0x7fffffffu));
    for (uint32_t p = p0; p < p1; p++) {
        const uint32_t ce = e;
        if (!PREFETCH) q = pt_load(pw + (ce & 0x7fffffffu));
        const affine_of<F> cur = q;
        if (p + 1 < p1) {  // the next entry (and with PREFETCH its point) while this one is added
            e = DIRECT ? p + 1 : srt[p + 1];
            if (PREFETCH) q = pt_load(pw + (e & 0x7fffffffu));
        }
        if (!pt_is_inf(cur)) {
            affine_of<F> a = cur;
            if (!DIRECT && (ce >> 31)) a.y = a.y.neg();
            S::madd(acc, a);
        }
        if (p + 1 == bend || p + 1 == p1) {
            xyzz_of<F>* dst = bstart >= p0 && bend <= p1 ? bsum + (size_t)w * nb + b
                              : bstart < p0                ? head + g
                                                           : tail + g;
            pt_store(dst, acc);
            acc = pt_xyzz_inf<F>();
            if (p + 1 < p1) {
                do { b++; } while (ends[b] <= p + 1);
                bend = ends[b];
                bstart = bend - ((cnt[b] + round) >> shift);
            }
        }
    }
    if (bend > p1 && bstart >= p0) edge[g] = b;
}

// Thread g of nwin * (nb / bseg): segs[w][s] = sum over buckets b in [s * bseg, (s + 1) * bseg)
// of (b + 1) * bsum[w][b] (empty buckets count as zero).
template <class F>
PT_FI void pt_bucket_reduce_body(const xyzz_of<F>* bsum, const uint32_t* counts, uint32_t nb, uint32_t nwin,
                                 uint32_t bseg, xyzz_of<F>* segs)
{
    const uint32_t nbseg = nb / bseg;
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= nwin * nbseg) return;
    const uint32_t w = g / nbseg, s = g % nbseg;
    const size_t base = (size_t)w * nb;
    const uint32_t b0 = s * bseg;
    xyzz_of<F> running = pt_xyzz_inf<F>(), total = pt_xyzz_inf<F>();
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

// Sum of a list of affine points (e.g. the bases whose scalar is 1), in G1 or G2: part p sums
// points[idx[j]] (or points[j] when idx is null) for j in [p * chunk, min(count, (p + 1) *
// chunk)) (a part past the end is infinity). Enough parts fill the GPU (each is a serial chain
// of additions), then reductions in groups (cuda/README.md).
template <class F, class S>
PT_FI void pt_sum_part(const affine_of<F>* points, const uint32_t* idx, uint32_t count,
                       uint32_t chunk, uint32_t p, xyzz_of<F>* parts)
{
    xyzz_of<F> acc = pt_xyzz_inf<F>();
    const uint32_t j1 = min(count, (p + 1) * chunk);
    for (uint32_t j = p * chunk; j < j1; j++) {
        const affine_of<F> a = pt_load(points + (idx ? idx[j] : j));
        if (!pt_is_inf(a)) S::madd(acc, a);
    }
    pt_store(parts + p, acc);
}
