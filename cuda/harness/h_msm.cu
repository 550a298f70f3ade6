// G1 MSM: known answers, edge cases, heavy buckets, large random sizes checked against the
// host reference through a structured base set, and timings.
#include "gpu.h"
#include "harness.h"
#include "../msm/pippenger.cuh"
#include "../msm/shifted.cuh"
#include "gen_points.h"

static PT_FI uint64_t tk_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static PT_FI g1_affine_t tk_affine(const g1_xyzz_t& p) {
    g1_affine_t a;
    if (pt_is_inf(p)) { a.x = fp_t::zero(); a.y = fp_t::zero(); return a; }
    a.x = p.x * p.zz.inverse();
    a.y = p.y * p.zzz.inverse();
    return a;
}
// out[i] = k_i * G for pseudo-random 253-bit k_i
__global__ void tk_gen_mul(g1_affine_t* out, uint32_t count, uint64_t seed, const g1_affine_t* G) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const g1_affine_t g = pt_load(G);
    uint64_t k[4];
    for (int j = 0; j < 4; j++) k[j] = tk_mix(seed + 4ull * i + j + 1);
    k[3] &= (1ull << 61) - 1;
    g1_xyzz_t acc = pt_xyzz_inf();
    for (int b = 252; b >= 0; b--) {
        pt_dbl(acc);
        if ((k[b >> 6] >> (b & 63)) & 1) pt_madd(acc, g);
    }
    pt_store(out + i, tk_affine(acc));
}
// Set: the binned scatter of shifted bases reads each key back instead of taking the bucket
// from bsum (the path a bsum too small for a byte an entry takes).
static bool g_bin_gather = false;

void msm_sort(const pt_msm_config& k, const pt_msm_scratch& lay, uint8_t* scratch, const fr_t* sc, uint32_t n,
              uint32_t W, bool shifted, bool bin_gather, const std::function<void()>& mark) {
    uint32_t *keys = (uint32_t*)(scratch + lay.keys), *sorted = (uint32_t*)(scratch + lay.sorted),
             *counts = (uint32_t*)(scratch + lay.counts), *cursor = (uint32_t*)(scratch + lay.cursor),
             *parts = (uint32_t*)(scratch + lay.parts);
    const dim3 grid_nw((n + 255) / 256, W);
    CK(cudaMemset(counts, 0, (size_t)k.nwin * k.nb * 4));
    PT_LAUNCH(pt_msm_digits, dim3((n + 255) / 256), dim3(PT_MSM_DIGIT_THREADS), 0, sc, n, k.c, W, keys);
    if (shifted) PT_LAUNCH(pt_msm_hist_shared, grid_nw, dim3(256), 0, (const uint32_t*)keys, n, k.nb, counts);
    else PT_LAUNCH(pt_msm_hist, grid_nw, dim3(256), 0, (const uint32_t*)keys, n, k.nb, counts);
    mark();
    const dim3 grid_plan(pt_msm_plan_parts(k.nb), k.nwin);
    PT_LAUNCH(pt_msm_plan_sums, grid_plan, dim3(PT_MSM_PLAN_THREADS), 0, (const uint32_t*)counts, k.nb, parts);
    PT_LAUNCH(pt_msm_plan, grid_plan, dim3(PT_MSM_PLAN_THREADS), 0, (const uint32_t*)counts, k.nb,
              (const uint32_t*)parts, cursor);
    if (shifted) {
        const uint32_t nbins = pt_msm_bin_count(k.nb);
        uint32_t* bins = (uint32_t*)(scratch + lay.bins);
        PT_LAUNCH(pt_msm_bins, dim3((nbins + 255) / 256), dim3(256), 0, (const uint32_t*)counts,
                  (const uint32_t*)cursor, k.nb, bins);
        uint8_t* fine = pt_msm_bin_fine_fits(k.nb, (size_t)n * W) && !bin_gather ? scratch + lay.bsum : nullptr;
        PT_LAUNCH(pt_msm_scatter_bins, grid_nw, dim3(256), 0, (const uint32_t*)keys, n, k.nb, bins, cursor, sorted,
                  fine);
        CK(cudaFuncSetAttribute(pt_msm_bin_sort, cudaFuncAttributeMaxDynamicSharedMemorySize, pt_msm_bin_smem()));
        PT_LAUNCH(pt_msm_bin_sort, dim3(nbins), dim3(PT_MSM_BIN_THREADS), pt_msm_bin_smem(), (const uint32_t*)keys,
                  (const uint8_t*)fine, (const uint32_t*)counts, k.nb, (const uint32_t*)bins, cursor, sorted);
    } else {
        PT_LAUNCH(pt_msm_scatter, grid_nw, dim3(256), 0, (const uint32_t*)keys, n, k.nb, cursor, sorted);
    }
    mark();
}

struct Msm {
    pt_msm_config k;
    pt_msm_scratch lay;
    uint8_t* scratch = nullptr;
    g1_jac_t* result = nullptr;
    uint32_t n = 0;
    // Shifted bases (msm/shifted.cuh): W windows into one bucket set over Q (W * n points).
    bool shifted = false;
    uint32_t W = 0;
    g1_affine_t* Q = nullptr;
    // levels: 0 = XYZZ accumulation, PT_MSM_AFF_AUTO = the default batch-affine levels. Over
    // shifted bases the accumulation is XYZZ: the affine levels of one window of n * W
    // entries would take tens of GB at 2^26.
    void init(uint32_t n_, uint32_t levels, bool shifted_ = false) {
        n = n_;
        shifted = shifted_;
        if (shifted) {
            k = pt_msm_make_config_shifted(n, g_opt.msm_c, g_opt.msm_chunk, 0);
            W = pt_msm_shifted_windows(k.c);
            lay = pt_msm_scratch_layout(n * W, k);
        } else {
            k = pt_msm_make_config(n, g_opt.msm_c, g_opt.msm_chunk, levels);
            W = k.nwin;
            lay = pt_msm_scratch_layout(n, k);
        }
        scratch = dalloc<uint8_t>(lay.total);
        result = dalloc<g1_jac_t>(1);
    }
    // Q from the bases, in slices of 2^20 (the XYZZ temporaries take W * 192 bytes a base).
    void shift(const g1_affine_t* pts) {
        Q = dalloc<g1_affine_t>((size_t)n * W);
        const uint32_t slice = std::min(n, 1u << 20);
        g1_xyzz_t* tmp = dalloc<g1_xyzz_t>((size_t)slice * W);
        for (uint32_t i0 = 0; i0 < n; i0 += slice) {
            const uint32_t cnt = std::min(slice, n - i0);
            PT_LAUNCH(pt_msm_shift, dim3((cnt + 127) / 128), dim3(128), 0, pts + i0, cnt, k.c, W, tmp);
            PT_LAUNCH(pt_msm_shift_affine, dim3((cnt + 127) / 128), dim3(128), 0, (const g1_xyzz_t*)tmp, cnt, W, n, Q + i0);
        }
        cudaFree(tmp);
    }
    void release() { cudaFree(scratch); cudaFree(result); if (Q) cudaFree(Q); }
    std::string path() const {
        const std::string acc = k.alv ? "batch-affine, " + std::to_string(k.alv) + " levels" : std::string("XYZZ");
        return shifted ? "shifted bases, " + acc : acc;
    }
    template <class T> T* at(size_t off) { return (T*)(scratch + off); }
    // The host sequence of one MSM (cuda/README.md). times: per-phase ms when non-null.
    void run(const g1_affine_t* pts, const fr_t* sc, std::vector<double>* times = nullptr) {
        uint32_t *sorted = at<uint32_t>(lay.sorted), *counts = at<uint32_t>(lay.counts), *cursor = at<uint32_t>(lay.cursor),
                 *edge = at<uint32_t>(lay.edge);
        g1_xyzz_t *bsum = at<g1_xyzz_t>(lay.bsum), *head = at<g1_xyzz_t>(lay.head), *tail = at<g1_xyzz_t>(lay.tail),
                  *segs = at<g1_xyzz_t>(lay.segs), *red = at<g1_xyzz_t>(lay.red), *wins = at<g1_xyzz_t>(lay.wins);
        GpuTimer tm;
        auto mark = [&](bool first) {
            if (!times) return;
            if (!first) times->push_back(tm.stop());
            tm.start();
        };
        // The bucket phase runs over `entries` sorted entries of Q (shifted) or the bases.
        const uint32_t entries = shifted ? n * W : n;
        const g1_affine_t* points = shifted ? Q : pts;
        mark(true);
        msm_sort(k, lay, scratch, sc, n, W, shifted, g_bin_gather, [&]() { mark(false); });
        if (k.alv) {
            affine(pts, times);
            tm.start();
        } else {
            PT_LAUNCH(pt_msm_chunks, dim3((k.nwin * k.nchunk + PT_MSM_ACC_THREADS - 1) / PT_MSM_ACC_THREADS),
                      dim3(PT_MSM_ACC_THREADS), 0, points, (const uint32_t*)sorted, (const uint32_t*)counts,
                      (const uint32_t*)cursor, entries, k.nb, k.nwin, k.chunk, k.nchunk, bsum, head, tail, edge);
            mark(false);
            PT_LAUNCH(pt_msm_fixup, dim3((k.nwin * k.nchunk + PT_MSM_FIX_THREADS - 1) / PT_MSM_FIX_THREADS),
                      dim3(PT_MSM_FIX_THREADS), 0, (const uint32_t*)cursor, (const uint32_t*)edge, k.nb, k.nwin,
                      k.chunk, k.nchunk, (const g1_xyzz_t*)head, (const g1_xyzz_t*)tail, bsum);
            mark(false);
        }
        PT_LAUNCH(pt_msm_bucket_reduce, dim3((k.nwin * k.nbseg + PT_MSM_RED_THREADS - 1) / PT_MSM_RED_THREADS),
                  dim3(PT_MSM_RED_THREADS), 0, (const g1_xyzz_t*)bsum, (const uint32_t*)counts, k.nb, k.nwin, k.bseg, segs);
        mark(false);
        PT_LAUNCH(pt_msm_reduce, dim3(k.nwin * k.nred), dim3(PT_MSM_RED_THREADS), 0, (const g1_xyzz_t*)segs, k.rgrp, red);
        PT_LAUNCH(pt_msm_reduce, dim3(k.nwin), dim3(PT_MSM_RED_THREADS), 0, (const g1_xyzz_t*)red, k.nred, wins);
        mark(false);
        PT_LAUNCH(pt_msm_final, dim3(1), dim3(1), 0, (const g1_xyzz_t*)wins, k.nwin, k.c, result);
        mark(false);
    }
    // Batch-affine accumulation, a group of agw windows at a time (cuda/README.md); with
    // times: pushes the levels' and the final XYZZ pass's ms (summed over the groups).
    void affine(const g1_affine_t* pts, std::vector<double>* times) {
        const uint32_t *sorted = at<uint32_t>(lay.sorted), *counts = at<uint32_t>(lay.counts),
                       *cursor = at<uint32_t>(lay.cursor);
        uint32_t* aend = at<uint32_t>(lay.aend);
        g1_affine_t* buf[2] = {at<g1_affine_t>(lay.abuf), at<g1_affine_t>(lay.bbuf)};
        const uint32_t str[2] = {k.astr_a, k.astr_b};
        fp_t *pre = at<fp_t>(lay.pre), *tp = at<fp_t>(lay.tp), *bp = at<fp_t>(lay.bp);
        g1_xyzz_t *ahead = at<g1_xyzz_t>(lay.ahead), *atail = at<g1_xyzz_t>(lay.atail),
                  *bsum = at<g1_xyzz_t>(lay.bsum);
        uint32_t* aedge = at<uint32_t>(lay.aedge);
        const uint32_t per_blk = PT_MSM_AFF_K * PT_MSM_AFF_THREADS, nb = k.nb;
        double t_lv = 0, t_fin = 0;
        GpuTimer tm;
        for (uint32_t w0 = 0; w0 < k.nwin; w0 += k.agw) {
            const uint32_t gw = std::min(k.agw, k.nwin - w0);
            if (times) tm.start();
            PT_LAUNCH(pt_msm_aff_plan, dim3(gw), dim3(PT_MSM_PLAN_THREADS), 0, counts + (size_t)w0 * nb, nb, gw,
                      k.alv, aend);
            for (uint32_t l = 0; l < k.alv; l++) {
                const uint32_t blocks = (pt_msm_aff_omax(n, nb, l) + per_blk - 1) / per_blk;
                const g1_affine_t* in = l ? buf[(l - 1) & 1] : nullptr;
                const uint32_t istr = l ? str[(l - 1) & 1] : 0;
                PT_LAUNCH(pt_msm_aff_fwd, dim3(blocks, gw), dim3(PT_MSM_AFF_THREADS), 0, pts,
                          sorted + (size_t)w0 * n, counts + (size_t)w0 * nb, cursor + (size_t)w0 * nb,
                          (const uint32_t*)aend, in, istr, n, nb, gw, l, pre, k.astr_a, tp,
                          blocks * PT_MSM_AFF_THREADS, bp, blocks);
                PT_LAUNCH(pt_msm_aff_inv, dim3((blocks * gw + 127) / 128), dim3(128), 0, bp, blocks * gw);
                PT_LAUNCH(pt_msm_aff_bwd, dim3(blocks, gw), dim3(PT_MSM_AFF_THREADS), 0, pts,
                          sorted + (size_t)w0 * n, counts + (size_t)w0 * nb, cursor + (size_t)w0 * nb,
                          (const uint32_t*)aend, in, istr, n, nb, gw, l, (const fp_t*)pre, k.astr_a,
                          (const fp_t*)tp, blocks * PT_MSM_AFF_THREADS, (const fp_t*)bp, blocks, buf[l & 1],
                          str[l & 1]);
            }
            if (times) { t_lv += tm.stop(); tm.start(); }
            const uint32_t last = (k.alv - 1) & 1;
            const uint32_t* fend = aend + (size_t)(k.alv - 1) * gw * nb;
            PT_LAUNCH(pt_msm_chunks_direct, dim3((gw * k.anchunk + PT_MSM_ACC_THREADS - 1) / PT_MSM_ACC_THREADS),
                      dim3(PT_MSM_ACC_THREADS), 0, (const g1_affine_t*)buf[last], counts + (size_t)w0 * nb, fend,
                      str[last], nb, gw, k.achunk, k.anchunk, bsum + (size_t)w0 * nb, ahead, atail, aedge, k.alv);
            PT_LAUNCH(pt_msm_fixup, dim3((gw * k.anchunk + PT_MSM_FIX_THREADS - 1) / PT_MSM_FIX_THREADS),
                      dim3(PT_MSM_FIX_THREADS), 0, fend, (const uint32_t*)aedge, nb, gw, k.achunk, k.anchunk,
                      (const g1_xyzz_t*)ahead, (const g1_xyzz_t*)atail, bsum + (size_t)w0 * nb);
            if (times) t_fin += tm.stop();
        }
        if (times) {
            times->push_back(t_lv);
            times->push_back(t_fin);
        }
    }
    HAff fetch() {
        HJac j;
        d2h((g1_jac_t*)&j, result, 1);
        return h_to_aff(j);
    }
};

static HAff g_gen;

// The accumulation paths the MSM checks and timings run: XYZZ (levels 0) and batch-affine
// (--msm-levels, or the default levels), as --msm-affine selects (both unless 0 or 1).
static std::vector<uint32_t> msm_paths() {
    const uint32_t aff = g_opt.msm_levels > 0 ? (uint32_t)g_opt.msm_levels : PT_MSM_AFF_AUTO;
    if (g_opt.msm_affine == 0) return {0};
    if (g_opt.msm_affine == 1) return {aff};
    return {0, aff};
}

// (levels, shifted) of every run: the given levels, or msm_paths() and then shifted bases
// (--msm-shifted 0 leaves them out).
static std::vector<std::pair<uint32_t, bool>> msm_runs(std::vector<uint32_t> levels) {
    const bool defaults = levels.empty();
    if (defaults) levels = msm_paths();
    std::vector<std::pair<uint32_t, bool>> runs;
    for (uint32_t lv : levels) runs.push_back({lv, false});
    if (defaults && g_opt.msm_shifted) runs.push_back({0, true});
    return runs;
}

static Fr fr_canon_random() { return H.fr.random(g_rng); }

// bases: n points, A-part (2^la random multiples of G) plus C-part when n > 2^la
struct Bases {
    uint32_t n, la;
    g1_affine_t *d = nullptr, *dA = nullptr, *dC = nullptr;
    std::vector<HAff> A, C;
    void make(uint32_t n_) {
        n = n_;
        la = g_opt.quick ? 8 : 12;
        const uint32_t na = 1u << la, nc = n > na ? (n + na - 1) >> la : 1;
        g1_affine_t* dg = dalloc<g1_affine_t>(1);
        h2d(dg, (const g1_affine_t*)&g_gen, 1);
        dA = dalloc<g1_affine_t>(na);
        dC = dalloc<g1_affine_t>(nc);
        PT_LAUNCH(tk_gen_mul, dim3(na / 128), dim3(128), 0, dA, na, (uint64_t)g_rng(), (const g1_affine_t*)dg);
        PT_LAUNCH(tk_gen_mul, dim3((nc + 127) / 128), dim3(128), 0, dC, nc, (uint64_t)g_rng(), (const g1_affine_t*)dg);
        A.resize(na);
        C.resize(nc);
        d2h((g1_affine_t*)A.data(), dA, na);
        d2h((g1_affine_t*)C.data(), dC, nc);
        if (n <= na) {
            d = dA;
        } else {
            d = dalloc<g1_affine_t>(n);
            PT_LAUNCH(tk_gen_sum<fp_t>, dim3((n / 32 + 127) / 128), dim3(128), 0, d, (const g1_affine_t*)dA,
                      (const g1_affine_t*)dC, n, la);
        }
        cudaFree(dg);
        dsync();
    }
    std::vector<HAff> host_all() const {
        std::vector<HAff> h(n);
        d2h((g1_affine_t*)h.data(), d, n);
        return h;
    }
    void release() {
        if (d != dA) cudaFree(d);
        cudaFree(dA);
        cudaFree(dC);
    }
};

// Checks the MSM of (pts, s) against the host on every path (levels: msm_paths(), or these;
// with the default paths also over shifted bases).
static bool check_small(const std::string& name, const std::vector<HAff>& pts, const std::vector<Fr>& s,
                        std::vector<uint32_t> levels = {}) {
    const uint32_t n = pts.size();
    g1_affine_t* dp = dalloc<g1_affine_t>(n);
    h2d(dp, (const g1_affine_t*)pts.data(), n);
    fr_t* ds = upload_scalars(s);
    const HAff want = h_to_aff(h_msm(s, pts));
    bool all = true;
    for (auto [lv, shifted] : msm_runs(levels)) {
        Msm m;
        m.init(n, lv, shifted);
        if (shifted) m.shift(dp);
        CK(cudaMemset(m.result, 0xff, sizeof(g1_jac_t)));
        m.run(dp, ds);
        const bool ok = h_aff_eq(m.fetch(), want);
        report(name + " [" + m.path() + "]", ok, "c=" + std::to_string(m.k.c));
        all &= ok;
        m.release();
    }
    cudaFree(dp); cudaFree(ds);
    return all;
}

// The plan's exclusive scan over several blocks a window (nb not a multiple of a block, two
// windows, sizes up to 2^20 so that a window's total needs more than 16 bits) against the host.
static void plan_blocks() {
    const uint32_t nb = 3 * PT_MSM_PLAN_PART + 5, nwin = 2, P = pt_msm_plan_parts(nb);
    std::vector<uint32_t> cnt((size_t)nwin * nb), want(cnt.size()), got(cnt.size());
    for (auto& c : cnt) c = g_rng() % 3 == 0 ? (uint32_t)(g_rng() % (1u << 20)) : (uint32_t)(g_rng() % 4);
    for (uint32_t w = 0; w < nwin; w++) {
        uint32_t run = 0;
        for (uint32_t b = 0; b < nb; b++) { want[(size_t)w * nb + b] = run; run += cnt[(size_t)w * nb + b]; }
    }
    uint32_t *dc = dalloc<uint32_t>(cnt.size()), *dp = dalloc<uint32_t>((size_t)nwin * P),
             *dcur = dalloc<uint32_t>(cnt.size());
    h2d(dc, cnt.data(), cnt.size());
    PT_LAUNCH(pt_msm_plan_sums, dim3(P, nwin), dim3(PT_MSM_PLAN_THREADS), 0, (const uint32_t*)dc, nb, dp);
    PT_LAUNCH(pt_msm_plan, dim3(P, nwin), dim3(PT_MSM_PLAN_THREADS), 0, (const uint32_t*)dc, nb, (const uint32_t*)dp, dcur);
    d2h(got.data(), dcur, got.size());
    report("MSM plan: bucket starts over " + std::to_string(P) + " blocks x " + std::to_string(nwin) + " windows",
           got == want, "nb=" + std::to_string(nb));
    cudaFree(dc); cudaFree(dp); cudaFree(dcur);
}

static void known_answers() {
    auto w = load_words(g_opt.vectors + "/msm_64.bin");
    const uint32_t n = 64;
    std::vector<Fr> sm(n);
    std::vector<HAff> pts(n);
    memcpy(sm.data(), w.data(), n * 32);
    memcpy(pts.data(), w.data() + n * 8, n * 96);
    HAff want;
    memcpy(&want, w.data() + n * 8 + n * 24, 96);
    g1_affine_t* dp = dalloc<g1_affine_t>(n);
    h2d(dp, (const g1_affine_t*)pts.data(), n);
    fr_t* ds = dalloc<fr_t>(n);
    h2d((Fr*)ds, sm.data(), n);
    std::vector<uint32_t> lvs = msm_paths();
    if (g_opt.msm_affine != 0) lvs.push_back(1);  // one affine level, then XYZZ
    for (uint32_t lv : lvs) {
        Msm m;
        m.init(n, lv);
        m.run(dp, ds);
        report("MSM 64 known answer (zero, one, r-1, (r-1)/2 scalars, an infinity base) [" + m.path() + "]",
               h_aff_eq(m.fetch(), want), "");
        m.release();
    }
    cudaFree(dp); cudaFree(ds);
    Msm m;

    // k*G for the 32 vectors in g1_mul.bin, each as an MSM of one term
    auto g = load_words(g_opt.vectors + "/g1_mul.bin");
    memcpy(&g_gen, g.data(), 96);
    int bad = 0, cnt = (g.size() - 24) / 32;
    dp = dalloc<g1_affine_t>(1);
    ds = dalloc<fr_t>(1);
    h2d(dp, (const g1_affine_t*)&g_gen, 1);
    m.init(1, 0);
    for (int i = 0; i < cnt; i++) {
        Fr k;
        memcpy(k.l, g.data() + 24 + i * 32, 32);
        HAff e;
        memcpy(&e, g.data() + 24 + i * 32 + 8, 96);
        Fr km = H.fr.to_mont(k);
        h2d((Fr*)ds, &km, 1);
        m.run(dp, ds);
        bad += !h_aff_eq(m.fetch(), e);
    }
    report("MSM of one term: k*G known answers (" + std::to_string(cnt) + ")", bad == 0, "");
    m.release();
    cudaFree(dp); cudaFree(ds);
    report("generator on curve (host reference)", h_on_curve(g_gen), "");
}

static void edge_cases(uint32_t n) {
    Bases b;
    b.make(n);
    auto pts = b.host_all();
    bool oncurve = true;
    for (uint32_t i = 0; i < n; i += 97) oncurve &= h_on_curve(pts[i]);
    report("generated bases on curve", oncurve, "");
    const Fr r1 = H.fr.sub(H.fr.zero(), H.fr.from_mont(H.fr.onem()));  // r - 1 (canonical)
    Fr half = r1;                                                       // (r-1)/2
    for (int i = 0; i < 4; i++) half.l[i] = (r1.l[i] >> 1) | (i < 3 ? r1.l[i + 1] << 63 : 0);
    Fr halfp = half;
    halfp.l[0] += 1;  // (r+1)/2
    std::vector<Fr> s(n);
    for (uint32_t i = 0; i < n; i++) {
        Fr v = fr_canon_random();
        switch (i % 7) {
            case 0: v = H.fr.zero(); break;
            case 1: v = H.fr.zero(); v.l[0] = 1; break;
            case 2: v = r1; break;
            case 3: v = half; break;
            case 4: v = halfp; break;
        }
        s[i] = v;
        if (i % 11 == 0) memset(&pts[i], 0, sizeof(HAff));
        if (i % 13 == 0 && i) pts[i] = pts[1];
    }
    check_small("MSM 2^" + std::to_string(pt_log2_ceil(n)) + " edge cases (0, 1, r-1, (r+-1)/2, infinity and repeated bases)", pts, s);
    // random scalars, same bases
    for (auto& v : s) v = fr_canon_random();
    check_small("MSM 2^" + std::to_string(pt_log2_ceil(n)) + " random vs host", pts, s);
    // heavy buckets: all ones, and one repeated random scalar
    for (auto& v : s) { v = H.fr.zero(); v.l[0] = 1; }
    check_small("MSM 2^" + std::to_string(pt_log2_ceil(n)) + " all scalars 1 (one bucket)", pts, s);
    const Fr rep = fr_canon_random();
    for (auto& v : s) v = rep;
    check_small("MSM 2^" + std::to_string(pt_log2_ceil(n)) + " one repeated scalar", pts, s);
    b.release();

    // sum of points
    g1_affine_t* dp = dalloc<g1_affine_t>(n);
    h2d(dp, (const g1_affine_t*)pts.data(), n);
    const uint32_t chunk = 64, nparts = (n + chunk - 1) / chunk;
    g1_xyzz_t* parts = dalloc<g1_xyzz_t>(nparts + 1);
    g1_jac_t* res = dalloc<g1_jac_t>(1);
    PT_LAUNCH(pt_g1_sum_parts, dim3((nparts + 127) / 128), dim3(PT_MSM_ACC_THREADS), 0, (const g1_affine_t*)dp,
              (const uint32_t*)nullptr, n, chunk, nparts, parts);
    PT_LAUNCH(pt_msm_reduce, dim3(1), dim3(PT_MSM_RED_THREADS), 0, (const g1_xyzz_t*)parts, nparts, parts + nparts);
    PT_LAUNCH(pt_msm_final, dim3(1), dim3(1), 0, (const g1_xyzz_t*)(parts + nparts), 1u, 0u, res);
    HJac j, want = h_jac_inf();
    d2h((g1_jac_t*)&j, res, 1);
    for (auto& p : pts) want = h_add(want, h_from_aff(p));
    report("sum of 2^" + std::to_string(pt_log2_ceil(n)) + " affine points", h_aff_eq(h_to_aff(j), h_to_aff(want)), "");
    cudaFree(dp); cudaFree(parts); cudaFree(res);
}

// Inputs that force every special case of the batch-affine additions (equal points: doubling;
// P and -P, through the points or the digit signs: infinity; infinity inputs; one huge bucket),
// on both paths, and the pattern mix at several level counts.
static void special_cases(uint32_t n) {
    Bases b;
    b.make(64);
    const auto pool = b.host_all();
    b.release();
    HAff inf;
    memset(&inf, 0, sizeof inf);
    auto neg = [](HAff a) {
        if (!h_inf(a)) a.y = H.fp.sub(H.fp.zero(), a.y);
        return a;
    };
    auto small = [](uint64_t v) {
        Fr f = H.fr.zero();
        f.l[0] = v;
        return f;
    };
    auto minus = [&](uint64_t v) { return H.fr.sub(H.fr.zero(), small(v)); };  // r - v
    const HAff P = pool[0], Q = pool[1], R = pool[2];
    const HAff P2 = h_to_aff(h_dbl(h_from_aff(P)));
    const std::string sz = "MSM 2^" + std::to_string(pt_log2_ceil(n)) + " ";
    std::vector<HAff> pts(n);
    std::vector<Fr> s(n);

    for (uint32_t i = 0; i < n; i++) { pts[i] = P; s[i] = small(1); }
    check_small(sz + "all bases P, scalars 1 (every pair of every level doubles)", pts, s);
    for (uint32_t i = 0; i < n; i++) s[i] = i & 1 ? minus(1) : small(1);
    check_small(sz + "all bases P, scalars 1 and r-1 alternating (P + -P by the digit sign)", pts, s);
    for (uint32_t i = 0; i < n; i++) { pts[i] = i & 1 ? neg(P) : P; s[i] = small(1); }
    check_small(sz + "bases P and -P alternating, scalars 1 (sums to infinity)", pts, s);
    for (uint32_t i = 0; i < n; i++) { pts[i] = inf; s[i] = fr_canon_random(); }
    check_small(sz + "all bases infinity", pts, s);
    std::mt19937_64 g(g_rng());
    const HAff mix[9] = {P, P, Q, neg(Q), inf, P2, neg(P), R, inf};
    for (uint32_t i = 0; i < n; i++) {
        pts[i] = mix[(i + i / 9) % 9];
        const uint64_t v = 1 + g() % 4;
        s[i] = g() & 1 ? small(v) : minus(v);
    }
    check_small(sz + "bases from {P, -P, 2P, Q, -Q, R, infinity}, scalars +-1..4 (collisions at every level)", pts, s,
                g_opt.msm_affine == 0 ? std::vector<uint32_t>{0} : std::vector<uint32_t>{0, PT_MSM_AFF_AUTO, 1, 2, 3, 8});
    {
        // digit 1 in every window of 7 scalars in 8: over shifted bases bucket 0 takes ~n W 7/8
        // entries, more than a bin sorts in shared memory (PT_MSM_BIN_CAP at n = 2^10), so they
        // go straight to their bucket while the random eighth takes the binned path
        const uint32_t c = pt_msm_make_config_shifted(n, g_opt.msm_c, 0, 0).c;
        Fr ones = H.fr.zero();
        for (uint32_t bit = 0; bit < 254; bit += c) ones.l[bit / 64] |= 1ull << (bit % 64);
        for (uint32_t i = 0; i < n; i++) {
            pts[i] = pool[i % pool.size()];
            s[i] = i % 8 ? ones : fr_canon_random();
        }
        check_small(sz + "digit 1 in every window of 7 scalars in 8 (a bin too big for shared memory)", pts, s);
        for (uint32_t i = 0; i < n; i++) s[i] = fr_canon_random();
        g_bin_gather = true;
        check_small(sz + "random scalars, shifted bases' bins sorted by keys read back", pts, s, {});
        g_bin_gather = false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t r = g() % 6;
        pts[i] = r < 2 ? P : r < 3 ? neg(P) : r < 4 ? Q : r < 5 ? P2 : inf;
        s[i] = fr_canon_random();
    }
    check_small(sz + "bases from {P, -P, 2P, Q, infinity}, random scalars", pts, s);
}

// Large random MSM, checked through the base structure P_i = A[i mod 2^12] + C[i >> 12]:
// sum s_i P_i = sum_a (sum_{i = a mod 2^12} s_i) A_a + sum_c (sum_{i >> 12 = c} s_i) C_c.
static void large(uint32_t lg, bool time_it, const char* target) {
    const uint32_t n = 1u << lg;
    Bases b;
    b.make(n);
    std::vector<Fr> s(n);
    {
        std::vector<uint64_t> seeds(64);
        for (auto& x : seeds) x = g_rng();
        parallel_for(n, [&](size_t a, size_t e) {
            std::mt19937_64 g(seeds[(a * 64) / n] ^ a);
            for (size_t i = a; i < e; i++) s[i] = H.fr.random(g);
        });
    }
    fr_t* ds = upload_scalars(s);
    const uint32_t na = 1u << b.la, nc = b.C.size();
    std::vector<Fr> sa(na, H.fr.zero()), sc(nc, H.fr.zero());
    parallel_for(na, [&](size_t a0, size_t a1) {
        for (size_t a = a0; a < a1; a++)
            for (size_t i = a; i < n; i += na) sa[a] = H.fr.add(sa[a], s[i]);
    });
    parallel_for(nc, [&](size_t c0, size_t c1) {
        for (size_t c = c0; c < c1; c++)
            for (size_t i = c * na; i < std::min<size_t>(n, (c + 1) * na); i++) sc[c] = H.fr.add(sc[c], s[i]);
    });
    const HAff want = h_to_aff(h_add(h_msm(sa, b.A), h_msm(sc, b.C)));
    for (auto [lv, shifted] : msm_runs({})) {
        Msm m;
        m.init(n, lv, shifted);
        GpuTimer ts;
        ts.start();
        if (shifted) m.shift(b.d);
        const double shift_ms = ts.stop();
        CK(cudaMemset(m.result, 0xff, sizeof(g1_jac_t)));
        m.run(b.d, ds);
        report("MSM 2^" + std::to_string(lg) + " random (structured bases) vs host [" + m.path() + "]",
               h_aff_eq(m.fetch(), want), "c=" + std::to_string(m.k.c) + " windows=" + std::to_string(m.W));
        if (time_it) {
            const double ms = time_median([&]() { m.run(b.d, ds); });
            std::vector<double> parts;
            m.run(b.d, ds, &parts);
            char buf[320];
            if (m.k.alv)
                snprintf(buf, sizeof buf,
                         "c=%u levels=%u windows/group=%u final chunk=%u; digits+hist %.2f, scan+scatter %.2f, "
                         "affine levels %.2f, final XYZZ pass %.2f, bucket sums %.2f, window sums %.2f, final %.2f ms",
                         m.k.c, m.k.alv, m.k.agw, m.k.achunk, parts[0], parts[1], parts[2], parts[3], parts[4],
                         parts[5], parts[6]);
            else
                snprintf(buf, sizeof buf,
                         "c=%u chunk=%u; digits+hist %.2f, scan+scatter %.2f, buckets %.2f, fixup %.2f, bucket sums "
                         "%.2f, window sums %.2f, final %.2f ms; shifted bases built in %.0f ms",
                         m.k.c, m.k.chunk, parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6],
                         shift_ms);
            timing("MSM 2^" + std::to_string(lg) + " [" + m.path() + "]", ms, target, buf);
        }
        m.release();
    }
    cudaFree(ds);
    b.release();
}

void run_msm_tests() {
    known_answers();
    plan_blocks();
    run_fixed_base_tests();
    if (g_opt.msm_large) {
        large(g_opt.msm_large, true, "");
        return;
    }
    if (g_opt.quick) {
        edge_cases(1u << 10);
        special_cases(1u << 10);
        large(13, false, "");
        return;
    }
    edge_cases(1u << 12);
    special_cases(1u << 12);
    large(16, false, "");
    for (uint32_t lg : {20u, 22u, 24u, 26u}) {
        if ((int)lg > g_opt.msm_max_log) continue;
        large(lg, true, lg == 20 ? "<= 22 (stretch 12)" : lg == 24 ? "<= 155 (stretch 80)" : lg == 26 ? "<= 559 (stretch 300)" : "");
    }
}

void profile_msm(int lg) {
    auto g = load_words(g_opt.vectors + "/g1_mul.bin");
    memcpy(&g_gen, g.data(), 96);
    const uint32_t n = 1u << lg;
    Bases b;
    b.make(n);
    std::vector<Fr> s(n);
    for (auto& v : s) v = fr_canon_random();
    fr_t* ds = upload_scalars(s);
    for (auto [lv, shifted] : msm_runs({})) {
        Msm m;
        m.init(n, lv, shifted);
        if (shifted) m.shift(b.d);
        m.run(b.d, ds);
        dsync();
        printf("profiled MSM 2^%d (c=%u, %s)\n", lg, m.k.c, m.path().c_str());
        m.release();
    }
    cudaFree(ds);
    b.release();
}
