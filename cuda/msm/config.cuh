// Pippenger configuration and scratch layout for an MSM of N points. The host mirrors
// pt_msm_make_config and pt_msm_scratch_layout (cuda/README.md spells the formulas out).
#pragma once
#include "../util/common.cuh"

#define PT_MSM_DIGIT_THREADS 256
#define PT_MSM_PLAN_THREADS 1024
#define PT_MSM_PLAN_PER 8                                      // buckets per thread of the plan
#define PT_MSM_PLAN_PART (PT_MSM_PLAN_THREADS * PT_MSM_PLAN_PER)  // buckets per block of the plan
#define PT_MSM_ACC_THREADS 128
#define PT_MSM_RED_THREADS 128

// Batch-affine accumulation (cuda/msm/batch_affine.cuh).
#define PT_MSM_AFF_THREADS 128          // threads per block of pt_msm_aff_fwd / _bwd
#define PT_MSM_AFF_K 8                  // outputs per thread: one inversion per 1024 outputs
#define PT_MSM_AFF_MAXLV 8              // most pairwise levels
#define PT_MSM_AFF_AUTO 0xffffffffu     // levels argument: choose from n / nb
#define PT_MSM_AFF_GROUP (1u << 21)     // level-0 outputs held at once (windows per group)
#define PT_MSM_AFF_FINAL (1u << 17)     // most XYZZ threads of one group's final pass

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
    // batch-affine accumulation (alv = 0: XYZZ accumulation only)
    uint32_t alv;     // pairwise affine levels: bucket of s points -> ceil(s / 2^alv) points
    uint32_t astr_a;  // level-0 outputs per window, at most: n/2 + min(n, nb) (buffer A stride)
    uint32_t astr_b;  // level-1 outputs per window, at most: n/4 + min(n, nb) (buffer B stride)
    uint32_t fstr;    // outputs of the last level per window, at most: n/2^alv + min(n, nb)
    uint32_t aent;    // entries of buffer A (and of pre): max(astr_a, min(GROUP, nwin * astr_a))
    uint32_t aentb;   // entries of buffer B: max(astr_b, min(GROUP, nwin * astr_b))
    uint32_t agw;     // windows per group = clamp(aent / astr_a, 1, nwin)
    uint32_t ablk;    // level-0 blocks per window = ceil(astr_a / (K * THREADS))
    uint32_t achunk;  // final-pass entries per thread: power of two >= 8, agw * anchunk <= FINAL
    uint32_t anchunk; // final-pass threads per window = ceil(fstr / achunk)
};

// Most outputs of affine level l in one window: sum_b ceil(s_b / 2^(l+1)) over sum_b s_b <= n.
PT_HD uint32_t pt_msm_aff_omax(uint32_t n, uint32_t nb, uint32_t l) {
    return (n >> (l + 1)) + (n < nb ? n : nb);
}

PT_HD uint32_t pt_log2_ceil(uint32_t n) {
    uint32_t l = 0;
    while ((1u << l) < n) l++;
    return l;
}

// The configuration of nwin bucket sets of 2^(c-1) buckets over n entries each; chunk = 0 the
// default chunk (about 2^18 accumulation threads in all, 32..2048 entries each); levels =
// PT_MSM_AFF_AUTO the default batch-affine levels (floor(log2(n / nb)), at most MAXLV), 0 XYZZ
// accumulation only.
PT_HD pt_msm_config pt_msm_config_for(uint32_t n, uint32_t c, uint32_t chunk, uint32_t nwin,
                                      uint32_t levels) {
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
    if (levels == PT_MSM_AFF_AUTO) {
        levels = 0;
        while (levels < PT_MSM_AFF_MAXLV && ((uint64_t)k.nb << (levels + 1)) <= n) levels++;
    }
    if (levels > PT_MSM_AFF_MAXLV) levels = PT_MSM_AFF_MAXLV;
    k.alv = levels;
    k.astr_a = k.astr_b = k.fstr = k.aent = k.aentb = k.agw = k.ablk = k.achunk = k.anchunk = 0;
    if (levels) {
        k.astr_a = pt_msm_aff_omax(n, k.nb, 0);
        k.astr_b = pt_msm_aff_omax(n, k.nb, 1);
        k.fstr = pt_msm_aff_omax(n, k.nb, levels - 1);
        const uint64_t ga = (uint64_t)k.nwin * k.astr_a, gb = (uint64_t)k.nwin * k.astr_b;
        k.aent = (uint32_t)(ga < PT_MSM_AFF_GROUP ? ga : PT_MSM_AFF_GROUP);
        if (k.aent < k.astr_a) k.aent = k.astr_a;
        k.aentb = (uint32_t)(gb < PT_MSM_AFF_GROUP ? gb : PT_MSM_AFF_GROUP);
        if (k.aentb < k.astr_b) k.aentb = k.astr_b;
        k.agw = k.aent / k.astr_a;
        if (k.agw > k.nwin) k.agw = k.nwin;
        const uint32_t per_blk = PT_MSM_AFF_K * PT_MSM_AFF_THREADS;
        k.ablk = (k.astr_a + per_blk - 1) / per_blk;
        k.achunk = 8;
        while ((uint64_t)k.agw * ((k.fstr + k.achunk - 1) / k.achunk) > PT_MSM_AFF_FINAL) k.achunk *= 2;
        k.anchunk = (k.fstr + k.achunk - 1) / k.achunk;
    }
    return k;
}

// c = 0 picks the default window; chunk, levels as pt_msm_config_for.
PT_HD pt_msm_config pt_msm_make_config(uint32_t n, uint32_t c, uint32_t chunk, uint32_t levels) {
    if (n < 1) n = 1;
    if (c == 0) {
        const int lg = (int)pt_log2_ceil(n < 2 ? 2 : n);
        const int cc = lg - 4;
        c = (uint32_t)(cc < 5 ? 5 : cc > 22 ? 22 : cc);
    }
    return pt_msm_config_for(n, c, chunk, (255 + c - 1) / c, levels);
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
PT_HD pt_msm_config pt_msm_make_config_shifted(uint32_t n, uint32_t c, uint32_t chunk,
                                               uint32_t levels) {
    if (c == 0) c = pt_msm_shifted_c(n);
    if (c < 8) c = 8;  // W <= PT_MSM_SHIFT_MAX_WINDOWS
    return pt_msm_config_for(n * pt_msm_shifted_windows(c), c, chunk, 1, levels);
}

// Scratch layout: byte offsets of each array inside one device allocation (256-aligned).
PT_HD uint32_t pt_msm_plan_parts(uint32_t nb) { return (nb + PT_MSM_PLAN_PART - 1) / PT_MSM_PLAN_PART; }

// The binned scatter of shifted bases (pippenger.cuh): bins of PT_MSM_BIN buckets, sorted in
// shared memory when they hold at most PT_MSM_BIN_CAP entries (about 12,000 at the shifted
// windows pt_msm_shifted_c picks, whatever n).
#define PT_MSM_BIN 128
#define PT_MSM_BIN_CAP 16384
#define PT_MSM_BIN_THREADS 256
PT_HD uint32_t pt_msm_bin_count(uint32_t nb) { return (nb + PT_MSM_BIN - 1) / PT_MSM_BIN; }
PT_HD uint32_t pt_msm_bin_smem() { return (PT_MSM_BIN_CAP + PT_MSM_BIN) * 4; }
// Whether bsum (192 bytes a bucket) holds the binned scatter's byte an entry.
PT_HD bool pt_msm_bin_fine_fits(uint32_t nb, size_t entries) { return (size_t)nb * 192 >= entries; }

struct pt_msm_scratch {
    // parts: the plan's per-block sums of bucket sizes, pt_msm_plan_parts(nb) a window;
    // bins: the binned scatter's bin cursors and big-bin flags, 2 * pt_msm_bin_count(nb) a window
    size_t keys, sorted, counts, cursor, parts, bins, edge, bsum, head, tail, segs, red, wins;
    // batch-affine (empty when alv = 0); every size grows with n at the default window, so
    // the scratch of n points serves any smaller MSM:
    //   aend  4 * alv * max(agw * nb, aent / 8)   ends of every level's buckets (one group)
    //   abuf  96 * aent, bbuf 96 * aentb (alv >= 2)  affine levels, ping-pong
    //   pre   48 * aent                          prefix products of the denominators
    //   tp    48 * (aent / K + 256 * THREADS)    per-thread products
    //   bp    48 * (aent / (K * THREADS) + 256)  per-block products, then their inverses
    //   ahead, atail 192 * FINAL, aedge 4 * FINAL  the final XYZZ pass's chunk edges
    size_t aend, abuf, bbuf, pre, tp, bp, ahead, atail, aedge;
    size_t total;
};
PT_HD size_t pt_align256(size_t x) { return (x + 255) & ~(size_t)255; }
// P: bytes of one XYZZ point, 192 in G1 (the default), 384 in G2 (which has no batch-affine path)
PT_HD pt_msm_scratch pt_msm_scratch_layout(uint32_t n, const pt_msm_config& k, size_t P = 192) {
    pt_msm_scratch s;
    size_t o = 0;
    s.keys = o;   o = pt_align256(o + (size_t)k.nwin * n * 4);
    s.sorted = o; o = pt_align256(o + (size_t)k.nwin * n * 4);
    s.counts = o; o = pt_align256(o + (size_t)k.nwin * k.nb * 4);
    s.cursor = o; o = pt_align256(o + (size_t)k.nwin * k.nb * 4);
    s.parts = o;  o = pt_align256(o + (size_t)k.nwin * pt_msm_plan_parts(k.nb) * 4);
    s.bins = o;   o = pt_align256(o + (size_t)k.nwin * 2 * pt_msm_bin_count(k.nb) * 4);
    s.edge = o;   o = pt_align256(o + (size_t)k.nwin * k.nchunk * 4);
    s.bsum = o;   o = pt_align256(o + (size_t)k.nwin * k.nb * P);
    s.head = o;   o = pt_align256(o + (size_t)k.nwin * k.nchunk * P);
    s.tail = o;   o = pt_align256(o + (size_t)k.nwin * k.nchunk * P);
    s.segs = o;   o = pt_align256(o + (size_t)k.nwin * k.nbseg * P);
    s.red = o;    o = pt_align256(o + (size_t)k.nwin * k.nred * P);
    s.wins = o;   o = pt_align256(o + (size_t)k.nwin * P);
    const bool aff = k.alv != 0;
    size_t ends = (size_t)k.agw * k.nb, e8 = k.aent / 8;
    if (ends < e8) ends = e8;
    s.aend = o;   o = pt_align256(o + (aff ? 4 * (size_t)k.alv * ends : 0));
    s.abuf = o;   o = pt_align256(o + (aff ? 96 * (size_t)k.aent : 0));
    s.bbuf = o;   o = pt_align256(o + (k.alv >= 2 ? 96 * (size_t)k.aentb : 0));
    s.pre = o;    o = pt_align256(o + (aff ? 48 * (size_t)k.aent : 0));
    s.tp = o;     o = pt_align256(o + (aff ? 48 * ((size_t)k.aent / PT_MSM_AFF_K + 256 * PT_MSM_AFF_THREADS) : 0));
    s.bp = o;     o = pt_align256(o + (aff ? 48 * ((size_t)k.aent / (PT_MSM_AFF_K * PT_MSM_AFF_THREADS) + 256) : 0));
    s.ahead = o;  o = pt_align256(o + (aff ? P * (size_t)PT_MSM_AFF_FINAL : 0));
    s.atail = o;  o = pt_align256(o + (aff ? P * (size_t)PT_MSM_AFF_FINAL : 0));
    s.aedge = o;  o = pt_align256(o + (aff ? 4 * (size_t)PT_MSM_AFF_FINAL : 0));
    s.total = o;
    return s;
}
