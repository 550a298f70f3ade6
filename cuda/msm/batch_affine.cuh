// Batch-affine bucket accumulation for the G1 Pippenger MSM (included by pippenger.cuh).
//
// After the counting sort, window w's slice of `sorted` lists its bucket b's s_b point indices
// (bit 31 = negate) at [cursor[b] - s_b, cursor[b]). Instead of summing every point into an
// XYZZ accumulator (10 multiplies per point), each bucket is halved `alv` times in affine
// coordinates: level l turns the ceil(s_b / 2^l) points of bucket b into ceil(s_b / 2^(l+1)),
// output j = input 2j + input 2j+1 (or a copy of the last, odd, input). Outputs are stored
// densely, bucket after bucket (aend[l] = inclusive scan of the output sizes), so a thread
// that takes K consecutive output positions does the same work whatever the bucket sizes
// (one huge bucket included), exactly like pt_msm_chunks. After the last level every bucket
// holds ceil(s_b / 2^alv) affine points, which pt_msm_chunks_direct + pt_msm_fixup sum into
// bsum as before (bucket_reduce, reduce and final are unchanged).
//
// An affine addition needs 1 / (x2 - x1). One Fp inversion costs ~570 multiplies of one
// lane, and a warp pays it as a whole, so the inversions are shared grid-wide, not per
// thread or per block:
//   pt_msm_aff_fwd   each thread: the denominators d_j of its K outputs, their exclusive prefix
//                    products pre_j (to global memory) and product tp; a product tree over the
//                    block's threads (shared memory) -> bp[block].
//   pt_msm_aff_inv   one thread per block product: bp = 1 / bp (every lane of a warp busy).
//   pt_msm_aff_bwd   the block rebuilds its tree from tp, walks it down from 1 / bp to each
//                    thread's 1 / tp, then each thread walks its outputs backwards:
//                    1/d_j = inv * pre_j, inv *= d_j, lambda = num_j / d_j, and writes x3, y3.
// Multiplies per addition: 1 (prefix) + 2 (back-propagation) + 1 (lambda) + 1 S (lambda^2) +
// 1 (y3) = 6, plus per block of K * THREADS = 1024 outputs the tree up twice and down once
// (3 * 127) and 1/32 of a warp's inversion (~570): ~0.9 per output in all.
//
// Special cases, decided identically by fwd and bwd (so the denominators stay non-zero):
//   odd last input                    copy it (no denominator)
//   either input infinity = (0, 0)     the other one (no denominator)
//   x1 != x2                          add: d = x2 - x1, num = y2 - y1
//   x1 == x2, y1 + y2 == 0            infinity (P + (-P), or a 2-torsion point doubled)
//   x1 == x2, y1 == y2 != 0           double: d = 2 y1, num = 3 x1^2 (same batch, no slow path)
// then x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1.
//
// Per group of agw windows (buffers sized in pt_msm_scratch_layout):
//   pt_msm_aff_plan <<<agw, 1024>>>   aend[l][y][b], l < alv
//   for l in 0..alv: fwd, inv, bwd     level 0 reads the bases through sorted, level l > 0
//                                      buffer (l-1)&1, level l writes buffer l&1 (A, B)
//   pt_msm_chunks_direct, pt_msm_fixup on buffer (alv-1)&1 with cursor = aend[alv-1]
#pragma once

#define PT_MSM_AFF_COPY1 0  // result = input 1 (also: no second input)
#define PT_MSM_AFF_COPY2 1  // result = input 2
#define PT_MSM_AFF_INF 2    // result = infinity
#define PT_MSM_AFF_ADD 3    // needs the inverse of d

// grid = gw blocks of 1024 threads: for every level l < levels, aend[(l * gw + y) * nb + b] =
// sum over b' <= b of ceil(counts[y][b'] / 2^(l+1)) (counts offset to the group's first window).
extern "C" __global__ void __launch_bounds__(PT_MSM_PLAN_THREADS)
pt_msm_aff_plan(const uint32_t* counts, uint32_t nb, uint32_t gw, uint32_t levels, uint32_t* aend)
{
    __shared__ uint32_t s_cnt[PT_MSM_AFF_MAXLV][PT_MSM_PLAN_THREADS];
    const uint32_t y = blockIdx.x, t = threadIdx.x;
    const uint32_t per = (nb + PT_MSM_PLAN_THREADS - 1) / PT_MSM_PLAN_THREADS;
    const uint32_t b0 = min(nb, t * per), b1 = min(nb, b0 + per);
    const uint32_t* cnt = counts + (size_t)y * nb;
    uint32_t sc[PT_MSM_AFF_MAXLV];
#pragma unroll
    for (int l = 0; l < PT_MSM_AFF_MAXLV; l++) sc[l] = 0;
    for (uint32_t b = b0; b < b1; b++) {
        const uint32_t s = cnt[b];
#pragma unroll
        for (int l = 0; l < PT_MSM_AFF_MAXLV; l++) sc[l] += (s + (2u << l) - 1) >> (l + 1);
    }
#pragma unroll
    for (int l = 0; l < PT_MSM_AFF_MAXLV; l++) s_cnt[l][t] = sc[l];
    __syncthreads();
    for (uint32_t off = 1; off < PT_MSM_PLAN_THREADS; off <<= 1) {  // inclusive scans
        uint32_t a[PT_MSM_AFF_MAXLV];
#pragma unroll
        for (int l = 0; l < PT_MSM_AFF_MAXLV; l++) a[l] = t >= off ? s_cnt[l][t - off] : 0;
        __syncthreads();
#pragma unroll
        for (int l = 0; l < PT_MSM_AFF_MAXLV; l++) s_cnt[l][t] += a[l];
        __syncthreads();
    }
#pragma unroll
    for (int l = 0; l < PT_MSM_AFF_MAXLV; l++) {
        if ((uint32_t)l >= levels) break;
        uint32_t rc = s_cnt[l][t] - sc[l];
        uint32_t* e = aend + ((size_t)l * gw + y) * nb;
        for (uint32_t b = b0; b < b1; b++) {
            rc += (cnt[b] + (2u << l) - 1) >> (l + 1);
            e[b] = rc;
        }
    }
}

// One window's view of level l: where output position p's inputs are.
struct pt_aff_level {
    const g1_affine_t* points;  // level 0: the bases
    const uint32_t* srt;        // level 0: this window's sorted entries
    const g1_affine_t* in;      // level > 0: the previous level's outputs
    const uint32_t* cnt;        // original bucket sizes
    const uint32_t* iend;       // input ends (level 0: cursor)
    const uint32_t* oend;       // output ends
    uint32_t nb, l;
};

PT_FI pt_aff_level pt_aff_view(const g1_affine_t* points, const uint32_t* sorted, const uint32_t* counts,
                               const uint32_t* cursor, const uint32_t* aend, const g1_affine_t* in,
                               uint32_t istride, uint32_t n, uint32_t nb, uint32_t gw, uint32_t l, uint32_t y)
{
    pt_aff_level v;
    v.points = points;
    v.srt = sorted + (size_t)y * n;
    v.in = l ? in + (size_t)y * istride : nullptr;
    v.cnt = counts + (size_t)y * nb;
    v.iend = l ? aend + ((size_t)(l - 1) * gw + y) * nb : cursor + (size_t)y * nb;
    v.oend = aend + ((size_t)l * gw + y) * nb;
    v.nb = nb;
    v.l = l;
    return v;
}

// Walks the output positions [p0, p1) bucket by bucket: for each, the first input's index and
// whether a second one exists.
struct pt_aff_walk {
    uint32_t b, ostart, oend, istart, isz;
    PT_FI void seek(const pt_aff_level& v, uint32_t p0) {
        uint32_t lo = 0, hi = v.nb - 1;  // first bucket whose output end is past p0
        while (lo < hi) {
            const uint32_t mid = (lo + hi) >> 1;
            if (v.oend[mid] > p0) hi = mid; else lo = mid + 1;
        }
        b = lo;
        load(v);
    }
    PT_FI void load(const pt_aff_level& v) {
        const uint32_t s = v.cnt[b];
        isz = (s + (1u << v.l) - 1) >> v.l;
        oend = v.oend[b];
        ostart = oend - ((isz + 1) >> 1);
        istart = v.iend[b] - isz;
    }
    // input index of position p (in this bucket) and whether it has a partner
    PT_FI uint32_t input(uint32_t p, bool& two) const {
        const uint32_t r = p - ostart;
        two = 2 * r + 1 < isz;
        return istart + 2 * r;
    }
    PT_FI void next(const pt_aff_level& v, uint32_t p) {  // after position p
        if (p + 1 < oend) return;
        do { b++; } while (b < v.nb && v.oend[b] <= p + 1);
        if (b < v.nb) load(v);
    }
};

PT_FI fp_t pt_aff_x(const pt_aff_level& v, uint32_t i) {
    return v.l ? pt_load(&v.in[i].x) : pt_load(&v.points[v.srt[i] & 0x7fffffffu].x);
}
PT_FI fp_t pt_aff_y(const pt_aff_level& v, uint32_t i) {
    if (v.l) return pt_load(&v.in[i].y);
    const uint32_t e = v.srt[i];
    const fp_t y = pt_load(&v.points[e & 0x7fffffffu].y);
    return e >> 31 ? y.neg() : y;
}
PT_FI g1_affine_t pt_aff_point(const pt_aff_level& v, uint32_t i) {
    if (v.l) return pt_load(v.in + i);
    const uint32_t e = v.srt[i];
    g1_affine_t a = pt_load(v.points + (e & 0x7fffffffu));
    if (e >> 31) a.y = a.y.neg();
    return a;
}

// The case of a pair of full points and, for ADD, its denominator.
PT_FI uint32_t pt_aff_case(const g1_affine_t& a, const g1_affine_t& c, bool two, fp_t& d) {
    if (!two) return PT_MSM_AFF_COPY1;
    if (pt_is_inf(a)) return PT_MSM_AFF_COPY2;
    if (pt_is_inf(c)) return PT_MSM_AFF_COPY1;
    if (a.x != c.x) {
        d = c.x - a.x;
        return PT_MSM_AFF_ADD;
    }
    d = a.y + c.y;  // = 2 y1 when doubling
    return d.is_zero() ? PT_MSM_AFF_INF : PT_MSM_AFF_ADD;
}

// Product tree over the block's threads in sh[1 .. 2 * THREADS): leaves at THREADS + t.
PT_FI fp_t pt_aff_tree_up(fp_t* sh, const fp_t& v) {
    const uint32_t t = threadIdx.x;
    sh[PT_MSM_AFF_THREADS + t] = v;
    __syncthreads();
    for (uint32_t s = PT_MSM_AFF_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) sh[s + t] = sh[2 * (s + t)] * sh[2 * (s + t) + 1];
        __syncthreads();
    }
    return sh[1];
}
// After pt_aff_tree_up: given 1 / sh[1], every node becomes its inverse; returns 1 / leaf t.
PT_FI fp_t pt_aff_tree_down(fp_t* sh, const fp_t& inv) {
    const uint32_t t = threadIdx.x;
    if (t == 0) sh[1] = inv;
    __syncthreads();
    for (uint32_t s = 1; s < PT_MSM_AFF_THREADS; s <<= 1) {
        if (t < s) {
            const uint32_t nd = s + t;
            const fp_t i = sh[nd], a = sh[2 * nd], b = sh[2 * nd + 1];
            sh[2 * nd] = i * b;
            sh[2 * nd + 1] = i * a;
        }
        __syncthreads();
    }
    return sh[PT_MSM_AFF_THREADS + t];
}

// grid = (blocks of level l per window, gw), THREADS threads. Pointers offset to the group's
// first window (sorted by w0 * n, counts and cursor by w0 * nb); `in`: level l-1's buffer.
extern "C" __global__ void __launch_bounds__(PT_MSM_AFF_THREADS)
pt_msm_aff_fwd(const g1_affine_t* points, const uint32_t* sorted, const uint32_t* counts,
               const uint32_t* cursor, const uint32_t* aend, const g1_affine_t* in, uint32_t istride,
               uint32_t n, uint32_t nb, uint32_t gw, uint32_t l, fp_t* pre, uint32_t pstride, fp_t* tp,
               uint32_t tstride, fp_t* bp, uint32_t bstride)
{
    __shared__ fp_t sh[2 * PT_MSM_AFF_THREADS];
    const uint32_t y = blockIdx.y, t = threadIdx.x;
    const pt_aff_level v = pt_aff_view(points, sorted, counts, cursor, aend, in, istride, n, nb, gw, l, y);
    const uint32_t total = v.oend[nb - 1];
    if (blockIdx.x * PT_MSM_AFF_THREADS * PT_MSM_AFF_K >= total) {  // block-uniform
        if (t == 0) pt_store(bp + (size_t)y * bstride + blockIdx.x, fp_t::one());
        return;
    }
    const uint32_t g = blockIdx.x * PT_MSM_AFF_THREADS + t;
    const uint32_t p0 = g * PT_MSM_AFF_K, p1 = min(p0 + PT_MSM_AFF_K, total);
    fp_t acc = fp_t::one();
    if (p0 < p1) {
        fp_t* pw = pre + (size_t)y * pstride;
        pt_aff_walk wk;
        wk.seek(v, p0);
        for (uint32_t p = p0; p < p1; p++) {
            bool two;
            const uint32_t i = wk.input(p, two);
            if (two) {
                const fp_t x1 = pt_aff_x(v, i), x2 = pt_aff_x(v, i + 1);
                fp_t d;
                uint32_t cs = PT_MSM_AFF_ADD;
                if (x1.is_zero() || x2.is_zero() || x1 == x2) {  // rare: look at y too
                    g1_affine_t a, c;
                    a.x = x1; a.y = pt_aff_y(v, i);
                    c.x = x2; c.y = pt_aff_y(v, i + 1);
                    cs = pt_aff_case(a, c, true, d);
                } else {
                    d = x2 - x1;
                }
                if (cs == PT_MSM_AFF_ADD) {
                    pt_store(pw + p, acc);
                    acc = acc * d;
                }
            }
            wk.next(v, p);
        }
    }
    pt_store(tp + (size_t)y * tstride + g, acc);
    const fp_t prod = pt_aff_tree_up(sh, acc);
    if (t == 0) pt_store(bp + (size_t)y * bstride + blockIdx.x, prod);
}

// grid = ceil(count / 128), 128 threads: bp[i] = 1 / bp[i] (the products are never zero).
extern "C" __global__ void __launch_bounds__(128)
pt_msm_aff_inv(fp_t* bp, uint32_t count)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) pt_store(bp + i, pt_load(bp + i).inverse());
}

// grid and arguments as pt_msm_aff_fwd, plus the output buffer (stride ostride).
extern "C" __global__ void __launch_bounds__(PT_MSM_AFF_THREADS)
pt_msm_aff_bwd(const g1_affine_t* points, const uint32_t* sorted, const uint32_t* counts,
               const uint32_t* cursor, const uint32_t* aend, const g1_affine_t* in, uint32_t istride,
               uint32_t n, uint32_t nb, uint32_t gw, uint32_t l, const fp_t* pre, uint32_t pstride,
               const fp_t* tp, uint32_t tstride, const fp_t* bp, uint32_t bstride, g1_affine_t* out,
               uint32_t ostride)
{
    __shared__ fp_t sh[2 * PT_MSM_AFF_THREADS];
    const uint32_t y = blockIdx.y, t = threadIdx.x;
    const pt_aff_level v = pt_aff_view(points, sorted, counts, cursor, aend, in, istride, n, nb, gw, l, y);
    const uint32_t total = v.oend[nb - 1];
    if (blockIdx.x * PT_MSM_AFF_THREADS * PT_MSM_AFF_K >= total) return;  // block-uniform
    const uint32_t g = blockIdx.x * PT_MSM_AFF_THREADS + t;
    pt_aff_tree_up(sh, pt_load(tp + (size_t)y * tstride + g));
    fp_t inv = pt_aff_tree_down(sh, pt_load(bp + (size_t)y * bstride + blockIdx.x));
    const uint32_t p0 = g * PT_MSM_AFF_K, p1 = min(p0 + PT_MSM_AFF_K, total);
    if (p0 >= p1) return;
    const fp_t* pr = pre + (size_t)y * pstride;
    g1_affine_t* ow = out + (size_t)y * ostride;
    // the bucket of every position, walking forwards once (K is small)
    uint32_t idx[PT_MSM_AFF_K];
    uint32_t twos = 0;
    {
        pt_aff_walk wk;
        wk.seek(v, p0);
#pragma unroll
        for (uint32_t j = 0; j < PT_MSM_AFF_K; j++) {
            const uint32_t p = p0 + j;
            if (p < p1) {
                bool two;
                idx[j] = wk.input(p, two);
                twos |= (uint32_t)two << j;
                wk.next(v, p);
            }
        }
    }
#pragma unroll 1
    for (uint32_t j = p1 - p0; j-- > 0;) {
        const uint32_t p = p0 + j, i = idx[j];
        const bool two = (twos >> j) & 1;
        const g1_affine_t a = pt_aff_point(v, i);
        g1_affine_t c;
        if (two) c = pt_aff_point(v, i + 1);
        fp_t d;
        const uint32_t cs = pt_aff_case(a, c, two, d);
        g1_affine_t r;
        if (cs == PT_MSM_AFF_ADD) {
            const fp_t dinv = inv * pt_load(pr + p);
            inv = inv * d;
            fp_t num;
            if (a.x != c.x) {
                num = c.y - a.y;
            } else {
                const fp_t x2 = a.x.sqr();
                num = x2.dbl() + x2;
            }
            const fp_t lam = num * dinv;
            r.x = lam.sqr() - a.x - c.x;
            r.y = lam * (a.x - r.x) - a.y;
        } else if (cs == PT_MSM_AFF_INF) {
            r.x = fp_t::zero();
            r.y = fp_t::zero();
        } else {
            r = cs == PT_MSM_AFF_COPY2 ? c : a;
        }
        pt_store(ow + p, r);
    }
}
