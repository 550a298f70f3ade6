// G2: the MSM of B in G2's full-width scalars (G1's sort, then pt_g2_msm_*, then the host's
// Horner over the window sums) and sums of affine points (pt_g2_sum_parts). Known answers from
// Python (g2_msm.bin, g2_sum.bin, g2_fixed.bin's products k * G2), edge cases and random inputs
// against the host reference (ref.h), and timings at 2^16, 2^18, 2^20.
#include "gpu.h"
#include "harness.h"
#include "gen_points.h"
#include "../msm/g2.cuh"

// One G2 MSM of n terms: the sort (msm_sort, G1's kernels), then the G2 bucket phase.
struct G2Msm {
    pt_msm_config k;
    pt_msm_scratch lay;
    uint8_t* scratch = nullptr;
    g2_jac_t* wins_jac = nullptr;  // the window sums as blst_p2, for the host
    uint32_t n = 0;
    void init(uint32_t n_) {
        n = n_;
        k = pt_msm_make_config(n, g_opt.msm_c, g_opt.msm_chunk, 0);
        lay = pt_msm_scratch_layout(n, k, sizeof(g2_xyzz_t));
        scratch = dalloc<uint8_t>(lay.total);
        wins_jac = dalloc<g2_jac_t>(k.nwin);
    }
    void release() { cudaFree(scratch); cudaFree(wins_jac); }
    template <class T> T* at(size_t off) { return (T*)(scratch + off); }
    // The device's part of the host sequence of cuda/README.md. times: ms of the sort,
    // accumulation, fixup, bucket sums and window sums.
    void run(const g2_affine_t* pts, const fr_t* sc, std::vector<double>* times = nullptr) {
        const uint32_t *sorted = at<uint32_t>(lay.sorted), *counts = at<uint32_t>(lay.counts),
                       *cursor = at<uint32_t>(lay.cursor);
        uint32_t* edge = at<uint32_t>(lay.edge);
        g2_xyzz_t *bsum = at<g2_xyzz_t>(lay.bsum), *head = at<g2_xyzz_t>(lay.head), *tail = at<g2_xyzz_t>(lay.tail),
                  *segs = at<g2_xyzz_t>(lay.segs), *red = at<g2_xyzz_t>(lay.red), *wins = at<g2_xyzz_t>(lay.wins);
        GpuTimer tm;
        auto mark = [&]() {
            if (!times) return;
            times->push_back(tm.stop());
            tm.start();
        };
        if (times) tm.start();
        msm_sort(k, lay, scratch, sc, n, k.nwin, false, false, [] {});
        mark();
        const uint32_t nth = k.nwin * k.nchunk;
        PT_LAUNCH(pt_g2_msm_chunks, dim3((nth + PT_MSM_ACC_THREADS - 1) / PT_MSM_ACC_THREADS), dim3(PT_MSM_ACC_THREADS), 0,
                  pts, sorted, counts, cursor, n, k.nb, k.nwin, k.chunk, k.nchunk, bsum, head, tail, edge);
        mark();
        PT_LAUNCH(pt_g2_msm_fixup, dim3((nth + PT_FIX_THREADS - 1) / PT_FIX_THREADS), dim3(PT_FIX_THREADS), 0, cursor,
                  (const uint32_t*)edge, k.nb, k.nwin, k.chunk, k.nchunk, (const g2_xyzz_t*)head, (const g2_xyzz_t*)tail,
                  bsum);
        mark();
        PT_LAUNCH(pt_g2_msm_bucket_reduce, dim3((k.nwin * k.nbseg + PT_MSM_RED_THREADS - 1) / PT_MSM_RED_THREADS),
                  dim3(PT_MSM_RED_THREADS), 0, (const g2_xyzz_t*)bsum, counts, k.nb, k.nwin, k.bseg, segs);
        mark();
        PT_LAUNCH(pt_g2_reduce, dim3(k.nwin * k.nred), dim3(PT_G2_RED_THREADS), 0, (const g2_xyzz_t*)segs, k.rgrp, red);
        PT_LAUNCH(pt_g2_reduce, dim3(k.nwin), dim3(PT_G2_RED_THREADS), 0, (const g2_xyzz_t*)red, k.nred, wins);
        PT_LAUNCH(pt_g2_to_jac, dim3((k.nwin + 127) / 128), dim3(128), 0, (const g2_xyzz_t*)wins, k.nwin, wins_jac);
        mark();
    }
    // The host's part: sum_w 2^(c w) wins[w] by Horner (as the engine's host would with blst).
    HAff2 fetch() {
        std::vector<HJac2> w(k.nwin);
        d2h((g2_jac_t*)w.data(), wins_jac, k.nwin);
        HJac2 acc = w[k.nwin - 1];
        for (int i = (int)k.nwin - 2; i >= 0; i--) {
            for (uint32_t d = 0; d < k.c; d++) acc = h_dbl(acc);
            acc = h_add(acc, w[i]);
        }
        return h_to_aff(acc);
    }
};

static HAff2 g_gen2;

// count points P_0 + j D on the host for random multiples P_0, D of G2 (affine, never infinity).
static std::vector<HAff2> host_points(uint32_t count) {
    const HJac2 p0 = h_msm({H.fr.random(g_rng)}, {g_gen2}), d = h_msm({H.fr.random(g_rng)}, {g_gen2});
    std::vector<HJac2> jac(count);
    jac[0] = p0;
    for (uint32_t j = 1; j < count; j++) jac[j] = h_add(jac[j - 1], d);
    std::vector<HAff2> out(count);
    parallel_for(count, [&](size_t a, size_t b) {
        for (size_t j = a; j < b; j++) out[j] = h_to_aff(jac[j]);
    });
    return out;
}

// n bases on the device: host-made points up to 4096, beyond that P_i = A[i mod 4096] +
// C[i >> 12] summed on the device, so that the host's answer is an MSM over A and C.
struct G2Bases {
    static constexpr uint32_t LA = 12;
    uint32_t n = 0;
    std::vector<HAff2> A, C;
    g2_affine_t* d = nullptr;
    void make(uint32_t n_) {
        n = n_;
        A = host_points(std::min(n, 1u << LA));
        d = dalloc<g2_affine_t>(n);
        if (n <= A.size()) {
            h2d(d, (const g2_affine_t*)A.data(), n);
            return;
        }
        C = host_points((n + (1u << LA) - 1) >> LA);
        g2_affine_t *dA = dalloc<g2_affine_t>(A.size()), *dC = dalloc<g2_affine_t>(C.size());
        h2d(dA, (const g2_affine_t*)A.data(), A.size());
        h2d(dC, (const g2_affine_t*)C.data(), C.size());
        PT_LAUNCH(tk_gen_sum<fp2_t>, dim3((n / 32 + 127) / 128), dim3(128), 0, d, (const g2_affine_t*)dA,
                  (const g2_affine_t*)dC, n, LA);
        dsync();
        cudaFree(dA);
        cudaFree(dC);
    }
    // sum s_i P_i on the host
    HAff2 msm(const std::vector<Fr>& s) const {
        if (C.empty()) return h_to_aff(h_msm(s, std::vector<HAff2>(A.begin(), A.begin() + n)));
        std::vector<Fr> sa(A.size(), H.fr.zero()), sc(C.size(), H.fr.zero());
        for (uint32_t i = 0; i < n; i++) {
            sa[i & (A.size() - 1)] = H.fr.add(sa[i & (A.size() - 1)], s[i]);
            sc[i >> LA] = H.fr.add(sc[i >> LA], s[i]);
        }
        return h_to_aff(h_add(h_msm(sa, A), h_msm(sc, C)));
    }
    void release() { cudaFree(d); }
};

static bool check_g2(const std::string& name, const std::vector<HAff2>& pts, const std::vector<Fr>& s) {
    const uint32_t n = pts.size();
    g2_affine_t* dp = dalloc<g2_affine_t>(n);
    h2d(dp, (const g2_affine_t*)pts.data(), n);
    fr_t* ds = upload_scalars(s);
    G2Msm m;
    m.init(n);
    CK(cudaMemset(m.wins_jac, 0xff, m.k.nwin * sizeof(g2_jac_t)));
    m.run(dp, ds);
    const bool ok = h_aff_eq(m.fetch(), h_to_aff(h_msm(s, pts)));
    report("G2 MSM " + name, ok, "n=" + std::to_string(n) + " c=" + std::to_string(m.k.c));
    m.release();
    cudaFree(dp); cudaFree(ds);
    return ok;
}

// g2_msm.bin (40 terms with edge scalars, an infinity, a repeat and a negation) and the
// products k * G2 of g2_fixed.bin summed by one MSM (scalars 0, 1, carry edges, r-1, random).
static void known_answers() {
    auto w = load_words(g_opt.vectors + "/g2_msm.bin");
    const uint32_t n = w[0];
    const uint32_t* bases = w.data() + 1 + n * 8;
    g2_affine_t* dp = dalloc<g2_affine_t>(n);
    h2d(dp, (const g2_affine_t*)bases, n);
    fr_t* ds = dalloc<fr_t>(n);
    h2d(ds, (const fr_t*)(w.data() + 1), n);
    HAff2 want;
    memcpy(&want, bases + n * 48, sizeof want);
    G2Msm m;
    m.init(n);
    m.run(dp, ds);
    report("G2 MSM 40 known answer (0, 1, 2, r-1, (r+-1)/2, 2^254-1, a repeated scalar; infinity, repeated and "
           "negated bases)", h_aff_eq(m.fetch(), want), "c=" + std::to_string(m.k.c));
    m.release();
    cudaFree(dp); cudaFree(ds);

    auto f = load_words(g_opt.vectors + "/g2_fixed.bin");
    const uint32_t bits = f[0], nwin = f[1], cnt = f[2];
    const uint32_t* cases = f.data() + 3 + (nwin << (bits - 1)) * 48;
    memcpy(&g_gen2, f.data() + 3, sizeof g_gen2);  // table[0] = 1 * G2
    report("G2 generator on curve (host reference)", h_on_curve(g_gen2), "");
    // every product in one MSM over cnt copies of G2 (equal points in every bucket)
    std::vector<Fr> k(cnt);
    HJac2 sum = h_jac_inf<HFp2>();
    for (uint32_t i = 0; i < cnt; i++) {
        memcpy(k[i].l, cases + i * 56, 32);
        HAff2 e;
        memcpy(&e, cases + i * 56 + 8, sizeof e);
        sum = h_add(sum, h_from_aff(e));
    }
    const std::vector<HAff2> gens(cnt, g_gen2);
    dp = dalloc<g2_affine_t>(cnt);
    h2d(dp, (const g2_affine_t*)gens.data(), cnt);
    ds = upload_scalars(k);
    m.init(cnt);
    m.run(dp, ds);
    report("G2 MSM of " + std::to_string(cnt) + " terms over one base: sum of k*G2 known answers", h_aff_eq(m.fetch(), h_to_aff(sum)),
           "");
    m.release();
    cudaFree(dp); cudaFree(ds);
}

// (Under the emulator each MSM costs seconds, mostly the plan's 1024-thread blocks a window.)
static void edge_cases(uint32_t n) {
    G2Bases b;
    b.make(n);
    std::vector<HAff2> pts = b.A;
    b.release();
    const Fr r1 = H.fr.sub(H.fr.zero(), H.fr.from_mont(H.fr.onem()));  // r - 1 (canonical)
    Fr half = r1, halfp;                                                // (r-1)/2, (r+1)/2
    for (int i = 0; i < 4; i++) half.l[i] = (r1.l[i] >> 1) | (i < 3 ? r1.l[i + 1] << 63 : 0);
    halfp = half;
    halfp.l[0] += 1;
    std::vector<Fr> s(n);
    for (uint32_t i = 0; i < n; i++) {
        const Fr edge[5] = {H.fr.zero(), H.fr.from_mont(H.fr.onem()), r1, half, halfp};
        s[i] = i % 7 < 5 ? edge[i % 7] : H.fr.random(g_rng);
        if (i % 11 == 0) memset(&pts[i], 0, sizeof(HAff2));
        if (i % 13 == 0 && i) pts[i] = pts[1];
        if (i % 17 == 0 && i) pts[i] = h_neg(pts[2]);
    }
    const std::string sz = "2^" + std::to_string(pt_log2_ceil(n)) + " ";
    check_g2(sz + "edge cases (0, 1, r-1, (r+-1)/2; infinity, repeated and negated bases)", pts, s);
    for (auto& v : s) v = H.fr.from_mont(H.fr.onem());
    check_g2(sz + "all scalars 1 (one bucket over many chunks)", pts, s);
    if (g_opt.quick) return;
    const Fr rep = H.fr.random(g_rng);
    for (auto& v : s) v = rep;
    check_g2(sz + "one repeated scalar", pts, s);
}

// Random scalars over n bases against the host; when timed, the median and its phases.
static void random_msm(uint32_t n, bool time_it, const std::string& target) {
    G2Bases b;
    b.make(n);
    std::vector<Fr> s(n);
    for (auto& v : s) v = H.fr.random(g_rng);
    fr_t* ds = upload_scalars(s);
    G2Msm m;
    m.init(n);
    m.run(b.d, ds);
    const HAff2 want = b.msm(s);
    const std::string name = "G2 MSM " + std::to_string(n) + " random" + (n > 4096 ? " (structured bases)" : "");
    report(name + " vs host", h_aff_eq(m.fetch(), want), "c=" + std::to_string(m.k.c));
    if (time_it) {
        const double ms = time_median([&]() { m.run(b.d, ds); });
        std::vector<double> t;
        m.run(b.d, ds, &t);
        const auto h0 = std::chrono::steady_clock::now();
        m.fetch();
        const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count();
        char buf[320];
        snprintf(buf, sizeof buf,
                 "c=%u windows=%u chunk=%u; sort %.2f, buckets %.2f, fixup %.2f, bucket sums %.2f, window sums "
                 "%.2f ms; then the host's copy and Horner (harness reference code, not blst) %.2f ms",
                 m.k.c, m.k.nwin, m.k.chunk, t[0], t[1], t[2], t[3], t[4], host_ms);
        timing("G2 MSM 2^" + std::to_string(pt_log2_ceil(n)) + " (device part)", ms, target, buf);
    }
    m.release();
    b.release();
    cudaFree(ds);
}

// G2 sums of affine points (B in G2's scalar-one bases): pt_g2_sum_parts then pt_g2_to_jac,
// against g2_sum.bin (Python big integers).
static void sums() {
    auto w = load_words(g_opt.vectors + "/g2_sum.bin");
    const uint32_t n = w[0], m = w[1];
    const uint32_t* pts = w.data() + 2;
    const uint32_t* idx = pts + n * 48;
    HAff2 want_all, want_idx;
    memcpy(&want_all, idx + m, sizeof(HAff2));
    memcpy(&want_idx, idx + m + 48, sizeof(HAff2));
    g2_affine_t* dp = dalloc<g2_affine_t>(n);
    h2d(dp, (const g2_affine_t*)pts, n);
    uint32_t* di = dalloc<uint32_t>(m);
    h2d(di, idx, m);
    g2_xyzz_t* parts = dalloc<g2_xyzz_t>(1);
    g2_jac_t* out = dalloc<g2_jac_t>(1);
    // One part over all points (an infinity, a repeat and a negation among them), then one
    // over the index list (with repeats).
    for (int with_idx = 0; with_idx < 2; with_idx++) {
        const uint32_t count = with_idx ? m : n;
        PT_LAUNCH(pt_g2_sum_parts, dim3(1), dim3(PT_MSM_ACC_THREADS), 0, (const g2_affine_t*)dp,
                  (const uint32_t*)(with_idx ? di : nullptr), count, count, 1u, parts);
        PT_LAUNCH(pt_g2_to_jac, dim3(1), dim3(128), 0, (const g2_xyzz_t*)parts, 1u, out);
        HJac2 got;
        d2h((g2_jac_t*)&got, out, 1);
        report(with_idx ? "G2 sum of 19 indexed affine points (repeats), known answer"
                        : "G2 sum of 48 affine points (infinity, P + P, P - P), known answer",
               h_aff_eq(h_to_aff(got), with_idx ? want_idx : want_all), "");
    }
    // The device's path: many parts (chunk 5; the last two past the end), summed by
    // pt_g2_reduce in two groups, then the groups' Jacobian forms added here.
    const uint32_t chunk = 5, nparts = 12, groups = 2;
    g2_xyzz_t* many = dalloc<g2_xyzz_t>(nparts + groups);
    g2_jac_t* outs = dalloc<g2_jac_t>(groups);
    PT_LAUNCH(pt_g2_sum_parts, dim3(1), dim3(PT_MSM_ACC_THREADS), 0, (const g2_affine_t*)dp,
              (const uint32_t*)nullptr, n, chunk, nparts, many);
    PT_LAUNCH(pt_g2_reduce, dim3(groups), dim3(PT_G2_RED_THREADS), 0, (const g2_xyzz_t*)many,
              nparts / groups, many + nparts);
    PT_LAUNCH(pt_g2_to_jac, dim3(1), dim3(128), 0, (const g2_xyzz_t*)(many + nparts), groups, outs);
    HJac2 got[2];
    d2h((g2_jac_t*)got, outs, groups);
    report("G2 sum of 48 affine points in 12 parts and 2 groups (pt_g2_reduce), known answer",
           h_aff_eq(h_to_aff(h_add(got[0], got[1])), want_all), "");
    cudaFree(dp); cudaFree(di); cudaFree(parts); cudaFree(out); cudaFree(many); cudaFree(outs);
}

void run_g2_tests() {
    sums();
    known_answers();
    if (g_opt.quick) {
        edge_cases(1u << 10);
        random_msm(1500, false, "");
        return;
    }
    edge_cases(1u << 12);
    random_msm(1u << 14, false, "");
    for (int lg : {16, 18, 20})
        if (lg <= g_opt.g2_max_log) random_msm(1u << lg, true, "");
}
