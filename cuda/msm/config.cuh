// Pippenger configuration and scratch layout for an MSM of N points. The host mirrors
// pt_msm_make_config (cuda/README.md spells the same formulas out).
#pragma once
#include "../util/common.cuh"

#define PT_MSM_DIGIT_THREADS 256
#define PT_MSM_PLAN_THREADS 1024
#define PT_MSM_SEG_THREADS 128
#define PT_MSM_RED_THREADS 128

struct pt_msm_config {
    uint32_t c;      // window bits
    uint32_t nwin;   // windows = ceil(255 / c)
    uint32_t nb;     // buckets per window = 2^(c-1) (digit magnitudes 1..2^(c-1))
    uint32_t split;  // a bucket is cut into pieces of at most `split` points
    uint32_t vmax;   // bound on pieces per window = nb + ceil(N / split)
    uint32_t seg;    // pieces per accumulation thread
    uint32_t nseg;   // accumulation threads per window = ceil(vmax / seg) rounded up to 256
    uint32_t nred;   // first-stage reduction groups per window = nseg / 256
};

PT_HD uint32_t pt_log2_ceil(uint32_t n) {
    uint32_t l = 0;
    while ((1u << l) < n) l++;
    return l;
}

// c = 0 / seg = 0 pick the defaults.
PT_HD pt_msm_config pt_msm_make_config(uint32_t n, uint32_t c, uint32_t seg) {
    pt_msm_config k;
    if (c == 0) {
        const int lg = (int)pt_log2_ceil(n < 2 ? 2 : n);
        int cc = lg - 5;
        c = (uint32_t)(cc < 5 ? 5 : cc > 21 ? 21 : cc);
    }
    k.c = c;
    k.nwin = (255 + c - 1) / c;
    k.nb = 1u << (c - 1);
    const uint32_t mean = (n + k.nb - 1) / k.nb;
    k.split = 4 * mean < 64 ? 64 : 4 * mean;
    k.vmax = k.nb + (n + k.split - 1) / k.split;
    k.seg = seg ? seg : 8;
    k.nseg = ((k.vmax + k.seg - 1) / k.seg + 255) / 256 * 256;
    k.nred = k.nseg / 256;
    return k;
}

// Scratch layout: byte offsets of each array inside one device allocation (256-aligned).
struct pt_msm_scratch {
    size_t keys, sorted, counts, cursor, voff, vmap, segs, red, wins, total;
};
PT_HD size_t pt_align256(size_t x) { return (x + 255) & ~(size_t)255; }
PT_HD pt_msm_scratch pt_msm_scratch_layout(uint32_t n, const pt_msm_config& k) {
    pt_msm_scratch s;
    size_t o = 0;
    s.keys = o;   o = pt_align256(o + (size_t)k.nwin * n * 4);
    s.sorted = o; o = pt_align256(o + (size_t)k.nwin * n * 4);
    s.counts = o; o = pt_align256(o + (size_t)k.nwin * k.nb * 4);
    s.cursor = o; o = pt_align256(o + (size_t)k.nwin * k.nb * 4);
    s.voff = o;   o = pt_align256(o + (size_t)k.nwin * (k.nb + 1) * 4);
    s.vmap = o;   o = pt_align256(o + (size_t)k.nwin * k.vmax * 4);
    s.segs = o;   o = pt_align256(o + (size_t)k.nwin * k.nseg * 192);
    s.red = o;    o = pt_align256(o + (size_t)k.nwin * k.nred * 192);
    s.wins = o;   o = pt_align256(o + (size_t)k.nwin * 192);
    s.total = o;
    return s;
}
