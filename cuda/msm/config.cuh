// Pippenger configuration and scratch layout for an MSM of N points. The host mirrors
// pt_msm_make_config and pt_msm_scratch_layout (cuda/README.md spells the formulas out).
#pragma once
#include "../util/common.cuh"

#define PT_MSM_DIGIT_THREADS 256
#define PT_MSM_PLAN_THREADS 1024
#define PT_MSM_ACC_THREADS 128
#define PT_MSM_RED_THREADS 128

struct pt_msm_config {
    uint32_t c;      // window bits
    uint32_t nwin;   // windows = ceil(255 / c)
    uint32_t nb;     // buckets per window = 2^(c-1) (digit magnitudes 1..2^(c-1))
    uint32_t chunk;  // sorted entries per accumulation thread (a power of two)
    uint32_t nchunk; // accumulation threads per window = ceil(N / chunk)
    uint32_t bseg;   // buckets per bucket-reduction thread (4..64, about 2^16 threads in all)
    uint32_t nbseg;  // bucket-reduction threads per window = nb / bseg
    uint32_t rgrp;   // first-stage reduction group = min(256, nbseg)
    uint32_t nred;   // first-stage groups per window = nbseg / rgrp
};

PT_HD uint32_t pt_log2_ceil(uint32_t n) {
    uint32_t l = 0;
    while ((1u << l) < n) l++;
    return l;
}

// The configuration of nwin bucket sets of 2^(c-1) buckets over n entries each; chunk = 0 the
// default chunk (about 2^18 accumulation threads in all, 32..2048 entries each).
PT_HD pt_msm_config pt_msm_config_for(uint32_t n, uint32_t c, uint32_t chunk, uint32_t nwin) {
    pt_msm_config k;
    if (n < 1) n = 1;
    k.c = c;
    k.nwin = nwin;
    k.nb = 1u << (c - 1);
    if (chunk == 0) {
        const uint64_t per = ((uint64_t)k.nwin * n) >> 18;
        chunk = 32;
        while (chunk < 2048 && (uint64_t)chunk * 2 <= per) chunk *= 2;
    }
    k.chunk = chunk;
    k.nchunk = (n + chunk - 1) / chunk;
    k.bseg = 4;
    while (k.bseg < 64 && (uint64_t)k.nwin * k.nb / (k.bseg * 2) >= 65536) k.bseg *= 2;
    if (k.bseg > k.nb) k.bseg = k.nb;
    k.nbseg = k.nb / k.bseg;
    k.rgrp = k.nbseg < 256 ? k.nbseg : 256;
    k.nred = k.nbseg / k.rgrp;
    return k;
}

// c = 0 picks the default window; chunk = 0 the default chunk.
PT_HD pt_msm_config pt_msm_make_config(uint32_t n, uint32_t c, uint32_t chunk) {
    if (n < 1) n = 1;
    if (c == 0) {
        const int lg = (int)pt_log2_ceil(n < 2 ? 2 : n);
        const int cc = lg - 4;
        c = (uint32_t)(cc < 5 ? 5 : cc > 22 ? 22 : cc);
    }
    return pt_msm_config_for(n, c, chunk, (255 + c - 1) / c);
}

// Shifted bases (msm/shifted.cuh): W = ceil(255 / c) copies of every base, 2^(c w) P, and
// one set of buckets for all windows. c minimises the additions: n W into buckets plus about
// 1.4 * 2^c for the running sums (full additions cost 1.4 mixed ones), from 8 to 24 bits.
PT_HD uint32_t pt_msm_shifted_c(uint32_t n) {
    uint32_t best = 8;
    double best_cost = 1e300;
    for (uint32_t c = 8; c <= 24; c++) {
        const double cost = (double)n * ((255 + c - 1) / c) + 1.4 * (double)(1u << c);
        if (cost < best_cost) { best_cost = cost; best = c; }
    }
    return best;
}
PT_HD uint32_t pt_msm_shifted_windows(uint32_t c) { return (255 + c - 1) / c; }

// The bucket phase of a shifted MSM: one set over the n * W (window, base) entries.
PT_HD pt_msm_config pt_msm_make_config_shifted(uint32_t n, uint32_t c, uint32_t chunk) {
    if (c == 0) c = pt_msm_shifted_c(n);
    if (c < 8) c = 8;  // W <= PT_MSM_SHIFT_MAX_WINDOWS
    return pt_msm_config_for(n * pt_msm_shifted_windows(c), c, chunk, 1);
}

// Scratch layout: byte offsets of each array inside one device allocation (256-aligned).
struct pt_msm_scratch {
    size_t keys, sorted, counts, cursor, edge, bsum, head, tail, segs, red, wins, total;
};
PT_HD size_t pt_align256(size_t x) { return (x + 255) & ~(size_t)255; }
PT_HD pt_msm_scratch pt_msm_scratch_layout(uint32_t n, const pt_msm_config& k) {
    pt_msm_scratch s;
    const size_t P = 192;  // one XYZZ point
    size_t o = 0;
    s.keys = o;   o = pt_align256(o + (size_t)k.nwin * n * 4);
    s.sorted = o; o = pt_align256(o + (size_t)k.nwin * n * 4);
    s.counts = o; o = pt_align256(o + (size_t)k.nwin * k.nb * 4);
    s.cursor = o; o = pt_align256(o + (size_t)k.nwin * k.nb * 4);
    s.edge = o;   o = pt_align256(o + (size_t)k.nwin * k.nchunk * 4);
    s.bsum = o;   o = pt_align256(o + (size_t)k.nwin * k.nb * P);
    s.head = o;   o = pt_align256(o + (size_t)k.nwin * k.nchunk * P);
    s.tail = o;   o = pt_align256(o + (size_t)k.nwin * k.nchunk * P);
    s.segs = o;   o = pt_align256(o + (size_t)k.nwin * k.nbseg * P);
    s.red = o;    o = pt_align256(o + (size_t)k.nwin * k.nred * P);
    s.wins = o;   o = pt_align256(o + (size_t)k.nwin * P);
    s.total = o;
    return s;
}
