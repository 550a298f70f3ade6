// NTT and H pipeline: known answers, host DFT spot checks, round trips, fused vs unfused,
// timings. The host sequences here are the ones cuda/README.md documents.
#include "gpu.h"
#include "harness.h"
#include "../ntt/ntt.cuh"
#include "../ntt/tables.cuh"

__global__ void tk_fr_random(fr_t* out, uint32_t n, uint64_t seed) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t z = seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
    fr_t r;
    for (int j = 0; j < 4; j++) {
        z += 0x9E3779B97F4A7C15ull;
        uint64_t x = z;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        x ^= x >> 31;
        r.v[2 * j] = (uint32_t)x;
        r.v[2 * j + 1] = (uint32_t)(x >> 32);
    }
    r.v[7] &= 0x7fffffff;
    fr_t s = r;
    // reduce below r (values < 2^255 < 3r)
    for (int t = 0; t < 2; t++) {
        uint32_t d[8];
        d[0] = sub_cc(s.v[0], PT_FR_MOD[0]);
        for (int j = 1; j < 8; j++) d[j] = subc_cc(s.v[j], PT_FR_MOD[j]);
        if (!subc(0, 0)) for (int j = 0; j < 8; j++) s.v[j] = d[j];
    }
    pt_store(out + i, s);
}

struct Dom {
    uint32_t k = 0, n = 0;
    fr_t *om = nullptr, *consts = nullptr, *gfwd = nullptr, *ginv = nullptr, *cpre = nullptr,
         *cpost = nullptr, *scratch = nullptr;
};

static void powers(fr_t* out, const fr_t* base, const fr_t* scale, uint32_t k) {
    const uint32_t n = 1u << k, per = PT_POW_RUN * 256;
    PT_LAUNCH(pt_fr_powers, dim3((n + per - 1) / per), dim3(256), 0, out, base, scale, k);
}

static void dom_init(Dom& d, uint32_t k, bool coset_tables) {
    d.k = k;
    d.n = 1u << k;
    d.om = dalloc<fr_t>(d.n);
    d.consts = dalloc<fr_t>(PT_NTT_C_COUNT);
    d.scratch = dalloc<fr_t>(d.n);
    PT_LAUNCH(pt_ntt_consts, dim3(1), dim3(1), 0, d.consts, k);
    powers(d.om, d.consts + PT_NTT_C_OMEGA, nullptr, k);
    if (coset_tables) {
        d.gfwd = dalloc<fr_t>(d.n);
        d.ginv = dalloc<fr_t>(d.n);
        d.cpre = dalloc<fr_t>(d.n);
        d.cpost = dalloc<fr_t>(d.n);
        powers(d.gfwd, d.consts + PT_NTT_C_G, d.consts + PT_NTT_C_N_INV, k);
        powers(d.ginv, d.consts + PT_NTT_C_G_INV, d.consts + PT_NTT_C_ZINV_NINV, k);
        powers(d.cpre, d.consts + PT_NTT_C_G, nullptr, k);
        powers(d.cpost, d.consts + PT_NTT_C_G_INV, d.consts + PT_NTT_C_N_INV, k);
    }
    dsync();
}
static void dom_free(Dom& d) {
    for (fr_t* p : {d.om, d.consts, d.gfwd, d.ginv, d.cpre, d.cpost, d.scratch})
        if (p) cudaFree(p);
    d = Dom();
}

// The pass sequence of one transform (see cuda/README.md).
static void ntt(const Dom& d, const fr_t* in, fr_t* out, uint32_t inverse, const fr_t* pre = nullptr,
                const fr_t* post = nullptr, const fr_t* post_c = nullptr, const fr_t* ea = nullptr,
                const fr_t* eb = nullptr) {
    const pt_ntt_plan pl = pt_make_ntt_plan(d.k);
    const uint32_t grid = d.n >> pl.log_e, smem = pt_ntt_smem_bytes(d.k);
    for (uint32_t p = 0; p < pl.passes; p++) {
        const fr_t* src = p == 0 ? in : d.scratch;
        fr_t* dst = p + 1 == pl.passes ? out : d.scratch;
        const bool last = p + 1 == pl.passes;
        PT_LAUNCH(pt_ntt_pass, dim3(grid), dim3(PT_NTT_THREADS), smem, src, dst, d.om, p == 0 ? pre : nullptr,
                  last ? post : nullptr, last ? post_c : nullptr, last ? ea : nullptr, last ? eb : nullptr, d.k, p,
                  inverse);
    }
}
static void ntt_forward(const Dom& d, const fr_t* x, fr_t* y) { ntt(d, x, y, 0); }
static void ntt_inverse(const Dom& d, const fr_t* x, fr_t* y) { ntt(d, x, y, 1, nullptr, nullptr, d.consts + PT_NTT_C_N_INV); }
static void ntt_coset_forward(const Dom& d, const fr_t* x, fr_t* y) { ntt(d, x, y, 0, d.cpre); }
static void ntt_coset_inverse(const Dom& d, const fr_t* x, fr_t* y) { ntt(d, x, y, 1, nullptr, d.cpost); }
// Groth16 H: a, b, c evaluations in; h coefficients out in c (a and b are overwritten).
static void h_pipeline(const Dom& d, fr_t* a, fr_t* b, fr_t* c) {
    ntt(d, a, a, 1, nullptr, d.gfwd);  // coefficients * g^j / n
    ntt(d, a, a, 0);                   // evaluations on the coset
    ntt(d, b, b, 1, nullptr, d.gfwd);
    ntt(d, b, b, 0);
    ntt(d, c, c, 1, nullptr, d.gfwd);
    ntt(d, c, c, 0, nullptr, nullptr, nullptr, a, b);  // c = a*b - c on the coset
    ntt(d, c, c, 1, nullptr, d.ginv);                  // * g^-j / ((g^n - 1) n)
}

static Fr host_omega(uint32_t k) {
    Fr root = H.fr.zero();
    const uint64_t rc[4] = {0x3829971f439f0d2bull, 0xb63683508c2280b9ull, 0xd09b681922c813b4ull, 0x16a2a19edfe81f20ull};
    memcpy(root.l, rc, 32);
    root = H.fr.to_mont(root);
    for (uint32_t i = k; i < 32; i++) root = H.fr.mul(root, root);
    return root;
}
// sum_j x_j * (scale_j) * w^(j*idx), scale_j = g^j when coset
static Fr host_dft_at(const std::vector<Fr>& x, const Fr& w, uint64_t idx, bool coset) {
    const size_t n = x.size();
    const Fr g = H.fr.from_u64(7);
    Fr step = H.fr.pow(w, &idx, 1);
    if (coset) step = H.fr.mul(step, g);
    unsigned nt = std::thread::hardware_concurrency();
    if (nt == 0) nt = 1;
    if (nt > 32) nt = 32;
    std::vector<Fr> part(nt, H.fr.zero());
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++)
        th.emplace_back([&, t]() {
            uint64_t a = n * t / nt, b = n * (t + 1) / nt;
            Fr pw = H.fr.pow(step, &a, 1), acc = H.fr.zero();
            for (uint64_t j = a; j < b; j++) {
                acc = H.fr.add(acc, H.fr.mul(x[j], pw));
                pw = H.fr.mul(pw, step);
            }
            part[t] = acc;
        });
    for (auto& t : th) t.join();
    Fr r = H.fr.zero();
    for (auto& p : part) r = H.fr.add(r, p);
    return r;
}

static std::vector<Fr> fetch(const fr_t* d, size_t n) {
    std::vector<Fr> h(n);
    d2h((fr_t*)h.data(), d, n);
    return h;
}
static bool same(const fr_t* a, const fr_t* b, size_t n) {
    auto x = fetch(a, n), y = fetch(b, n);
    return !memcmp(x.data(), y.data(), n * sizeof(Fr));
}
static void randomize(fr_t* d, uint32_t n) {
    PT_LAUNCH(tk_fr_random, dim3((n + 255) / 256), dim3(256), 0, d, n, (uint64_t)g_rng());
}

static void known_answers() {
    for (uint32_t k : {10u, 11u}) {
        auto w = load_words(g_opt.vectors + "/ntt_" + std::to_string(k) + ".bin");
        const uint32_t n = 1u << k;
        Dom d;
        dom_init(d, k, true);
        fr_t *x = dalloc<fr_t>(n), *y = dalloc<fr_t>(n);
        h2d(x, (const fr_t*)w.data(), n);
        const char* names[4] = {"forward", "inverse", "coset forward", "coset inverse"};
        for (int v = 0; v < 4; v++) {
            CK(cudaMemset(y, 0xff, n * 32));
            if (v == 0) ntt_forward(d, x, y);
            if (v == 1) ntt_inverse(d, x, y);
            if (v == 2) ntt_coset_forward(d, x, y);
            if (v == 3) ntt_coset_inverse(d, x, y);
            auto got = fetch(y, n);
            const bool ok = !memcmp(got.data(), w.data() + (size_t)(v + 1) * n * 8, (size_t)n * 32);
            report("NTT 2^" + std::to_string(k) + " " + names[v] + " known answer", ok, "");
        }
        cudaFree(x); cudaFree(y);
        dom_free(d);
    }
    {
        auto w = load_words(g_opt.vectors + "/hpoly_10.bin");
        const uint32_t n = 1024;
        Dom d;
        dom_init(d, 10, true);
        fr_t *a = dalloc<fr_t>(n), *b = dalloc<fr_t>(n), *c = dalloc<fr_t>(n);
        h2d(a, (const fr_t*)w.data(), n);
        h2d(b, (const fr_t*)w.data() + n, n);
        h2d(c, (const fr_t*)w.data() + 2 * n, n);
        h_pipeline(d, a, b, c);
        auto got = fetch(c, n);
        report("H pipeline 2^10 known answer", !memcmp(got.data(), w.data() + 3 * n * 8, n * 32), "");
        cudaFree(a); cudaFree(b); cudaFree(c);
        dom_free(d);
    }
}

static void random_checks(uint32_t k, int spots) {
    const uint32_t n = 1u << k;
    Dom d;
    dom_init(d, k, true);
    fr_t *x = dalloc<fr_t>(n), *y = dalloc<fr_t>(n), *z = dalloc<fr_t>(n);
    randomize(x, n);
    CK(cudaMemset(y, 0xff, (size_t)n * 32));
    ntt_forward(d, x, y);
    auto hx = fetch(x, n), hy = fetch(y, n);
    const Fr w = host_omega(k);
    bool ok = true;
    for (int s = 0; s < spots; s++) {
        const uint64_t idx = s == 0 ? n - 1 : g_rng() % n;
        ok &= H.fr.eq(host_dft_at(hx, w, idx, false), hy[idx]);
    }
    CK(cudaMemset(z, 0xff, (size_t)n * 32));
    ntt_inverse(d, y, z);
    ok &= same(x, z, n);
    report("NTT 2^" + std::to_string(k) + " forward vs host DFT (" + std::to_string(spots) + " points), inverse round trip",
           ok, "");
    // coset forward spot check and round trip
    ok = true;
    CK(cudaMemset(y, 0xff, (size_t)n * 32));
    ntt_coset_forward(d, x, y);
    hy = fetch(y, n);
    const uint64_t idx = g_rng() % n;
    ok &= H.fr.eq(host_dft_at(hx, w, idx, true), hy[idx]);
    CK(cudaMemset(z, 0xff, (size_t)n * 32));
    ntt_coset_inverse(d, y, z);
    ok &= same(x, z, n);
    report("NTT 2^" + std::to_string(k) + " coset forward vs host, coset round trip", ok, "");
    cudaFree(x); cudaFree(y); cudaFree(z);
    dom_free(d);
}

// the fused H pipeline against the public transforms composed one by one
static void h_fused_vs_unfused(uint32_t k) {
    const uint32_t n = 1u << k;
    Dom d;
    dom_init(d, k, true);
    fr_t* v[6];
    for (auto& p : v) p = dalloc<fr_t>(n);
    for (int i = 0; i < 3; i++) { randomize(v[i], n); d2d(v[i + 3], v[i], n); }
    h_pipeline(d, v[0], v[1], v[2]);
    for (int i = 3; i < 6; i++) {
        ntt_inverse(d, v[i], v[i]);
        ntt_coset_forward(d, v[i], v[i]);
    }
    PT_LAUNCH(pt_fr_mul_sub, dim3((n + 255) / 256), dim3(256), 0, v[3], v[4], v[5], n);
    PT_LAUNCH(pt_fr_scale, dim3((n + 255) / 256), dim3(256), 0, v[3], (const fr_t*)nullptr, d.consts + PT_NTT_C_ZINV, n);
    ntt_coset_inverse(d, v[3], v[3]);
    report("H pipeline 2^" + std::to_string(k) + " fused vs composed transforms", same(v[2], v[3], n), "");
    for (auto& p : v) cudaFree(p);
    dom_free(d);
}

static void time_ntt(uint32_t k, const char* target_fwd) {
    const uint32_t n = 1u << k;
    Dom d;
    dom_init(d, k, true);
    fr_t *x = dalloc<fr_t>(n), *y = dalloc<fr_t>(n);
    randomize(x, n);
    auto run = [&](const char* what, const char* target, const std::function<void()>& f) {
        timing(std::string("NTT 2^") + std::to_string(k) + " " + what, time_median(f, true), target, "");
    };
    run("forward", target_fwd, [&]() { ntt_forward(d, x, y); });
    if (k == 24 || k == 27) {
        run("inverse", "", [&]() { ntt_inverse(d, x, y); });
        run("coset forward", "", [&]() { ntt_coset_forward(d, x, y); });
    }
    cudaFree(x); cudaFree(y);
    if (k == 24 || k == 27 || k == 20) {
        fr_t *a = dalloc<fr_t>(n), *b = dalloc<fr_t>(n), *c = dalloc<fr_t>(n);
        randomize(a, n); randomize(b, n); randomize(c, n);
        run("H pipeline (7 NTTs)", "", [&]() { h_pipeline(d, a, b, c); });
        cudaFree(a); cudaFree(b); cudaFree(c);
    }
    dom_free(d);
}

void run_ntt_tests() {
    CK(cudaFuncSetAttribute(pt_ntt_pass, cudaFuncAttributeMaxDynamicSharedMemorySize, pt_ntt_smem_bytes(27)));
    known_answers();
    if (g_opt.quick) {
        for (uint32_t k : {10u, 11u, 12u, 13u, 14u}) random_checks(k, 2);
        h_fused_vs_unfused(12);
        return;
    }
    for (uint32_t k = 10; k <= 20; k++) random_checks(k, 2);
    for (uint32_t k : {22u, 24u, 26u, 27u})
        if ((int)k <= g_opt.ntt_max_log) random_checks(k, 1);
    h_fused_vs_unfused(16);
    h_fused_vs_unfused(21);
    for (uint32_t k : {20u, 22u, 24u, 26u, 27u}) {
        if ((int)k > g_opt.ntt_max_log) continue;
        time_ntt(k, k == 24 ? "<= 4.6 (stretch 3.5)" : k == 27 ? "<= 43 (stretch 32)" : "");
    }
}

void profile_ntt(int k) {
    CK(cudaFuncSetAttribute(pt_ntt_pass, cudaFuncAttributeMaxDynamicSharedMemorySize, pt_ntt_smem_bytes(27)));
    const uint32_t n = 1u << k;
    Dom d;
    dom_init(d, k, false);
    fr_t *x = dalloc<fr_t>(n), *y = dalloc<fr_t>(n);
    randomize(x, n);
    ntt_forward(d, x, y);
    dsync();
    printf("profiled NTT 2^%d\n", k);
    cudaFree(x); cudaFree(y);
    dom_free(d);
}
