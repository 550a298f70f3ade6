// Field arithmetic: known answers, random inputs against the host reference, throughput.
#include "gpu.h"
#include "harness.h"
#include "../ff/bls12_381.cuh"
#include "../util/common.cuh"

template <class F>
__global__ void tk_field_ops(const F* a, const F* b, F* out, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const F x = pt_load(a + i), y = pt_load(b + i);
    pt_store(out + 6 * i + 0, x * y);
    pt_store(out + 6 * i + 1, x + y);
    pt_store(out + 6 * i + 2, x - y);
    pt_store(out + 6 * i + 3, x.sqr());
    pt_store(out + 6 * i + 4, x.from_mont());
    pt_store(out + 6 * i + 5, F::to_mont(y));  // y read as a canonical integer (< p)
}
template <class F>
__global__ void tk_field_inv(const F* a, F* out, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    pt_store(out + i, pt_load(a + i).inverse());
}
// 4 independent multiply chains per thread, reps rounds
template <class F>
__global__ void __launch_bounds__(256) tk_field_bench(F* a, uint32_t reps) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    F x0 = pt_load(a + 4 * i), x1 = pt_load(a + 4 * i + 1), x2 = pt_load(a + 4 * i + 2), x3 = pt_load(a + 4 * i + 3);
    const F y = x3;
    for (uint32_t r = 0; r < reps; r++) { x0 = x0 * y; x1 = x1 * y; x2 = x2 * y; x3 = x3 * x0; }
    pt_store(a + 4 * i, x0 + x1 + x2 + x3);
}

template <class F, int NL>
static void field_suite(const char* name, const HostField<NL>& R, const char* vecfile) {
    const int W = F::N;
    // known answers
    auto w = load_words(g_opt.vectors + "/" + vecfile);
    const size_t rec = 7 * W, cnt = w.size() / rec;
    std::vector<F> a(cnt), b(cnt), out(6 * cnt);
    for (size_t i = 0; i < cnt; i++) {
        memcpy(a[i].v, &w[i * rec], 4 * W);
        memcpy(b[i].v, &w[i * rec + W], 4 * W);
    }
    F *da = dalloc<F>(cnt), *db = dalloc<F>(cnt), *dout = dalloc<F>(6 * cnt);
    h2d(da, a.data(), cnt);
    h2d(db, b.data(), cnt);
    CK(cudaMemset(dout, 0xa5, 6 * cnt * sizeof(F)));
    PT_LAUNCH(tk_field_ops<F>, dim3((cnt + 127) / 128), dim3(128), 0, da, db, dout, (uint32_t)cnt);
    d2h(out.data(), dout, 6 * cnt);
    size_t bad = 0;
    for (size_t i = 0; i < cnt; i++) {
        const uint32_t* r = &w[i * rec];
        bad += memcmp(out[6 * i + 0].v, r + 2 * W, 4 * W) != 0;
        bad += memcmp(out[6 * i + 1].v, r + 3 * W, 4 * W) != 0;
        bad += memcmp(out[6 * i + 2].v, r + 4 * W, 4 * W) != 0;
        bad += memcmp(out[6 * i + 3].v, r + 5 * W, 4 * W) != 0;
        bad += memcmp(out[6 * i + 4].v, r + 6 * W, 4 * W) != 0;
    }
    report(std::string(name) + " known answers (" + std::to_string(cnt) + " x 5 ops)", bad == 0,
           bad ? std::to_string(bad) + " mismatches" : "");
    cudaFree(da); cudaFree(db); cudaFree(dout);

    // fresh random inputs against the host reference
    const size_t n = 1 << 14;
    std::vector<HF<NL>> ha(n), hb(n);
    for (size_t i = 0; i < n; i++) {
        ha[i] = R.random(g_rng);
        hb[i] = R.random(g_rng);
        if (i < 8) { ha[i] = R.sub(R.zero(), R.from_u64(i)); }  // p - i: edge values
    }
    da = dalloc<F>(n); db = dalloc<F>(n); dout = dalloc<F>(6 * n);
    std::vector<F> o(6 * n);
    h2d((HF<NL>*)da, ha.data(), n);
    h2d((HF<NL>*)db, hb.data(), n);
    CK(cudaMemset(dout, 0x5a, 6 * n * sizeof(F)));
    PT_LAUNCH(tk_field_ops<F>, dim3(n / 128), dim3(128), 0, da, db, dout, (uint32_t)n);
    d2h(o.data(), dout, 6 * n);
    bad = 0;
    for (size_t i = 0; i < n; i++) {
        HF<NL> e[6] = {R.mul(ha[i], hb[i]), R.add(ha[i], hb[i]), R.sub(ha[i], hb[i]), R.mul(ha[i], ha[i]),
                       R.from_mont(ha[i]), R.to_mont(hb[i])};
        for (int j = 0; j < 6; j++) bad += memcmp(o[6 * i + j].v, e[j].l, sizeof(e[j].l)) != 0;
    }
    // inverses of a few
    const size_t ni = 256;
    PT_LAUNCH(tk_field_inv<F>, dim3(2), dim3(128), 0, da, dout, (uint32_t)ni);
    d2h(o.data(), dout, ni);
    for (size_t i = 0; i < ni; i++) {
        HF<NL> t;
        memcpy(t.l, o[i].v, sizeof(t.l));
        if (!R.is_zero(ha[i]) && !R.eq(R.mul(t, ha[i]), R.onem())) bad++;
    }
    report(std::string(name) + " random vs host (" + std::to_string(n) + " x 6 ops + inverse)", bad == 0,
           bad ? std::to_string(bad) + " mismatches" : "");
    cudaFree(da); cudaFree(db); cudaFree(dout);

#ifndef PT_EMU
    // throughput: multiplies per second
    const uint32_t threads = 132 * 2048, reps = 256;
    F* dx = dalloc<F>(4 * threads);
    std::vector<HF<NL>> hx(4 * threads);
    for (auto& x : hx) x = R.random(g_rng);
    h2d((HF<NL>*)dx, hx.data(), hx.size());
    PT_LAUNCH(tk_field_bench<F>, dim3(threads / 256), dim3(256), 0, dx, 8u);
    std::vector<double> t;
    for (int r = 0; r < 5; r++) {
        GpuTimer tm;
        tm.start();
        PT_LAUNCH(tk_field_bench<F>, dim3(threads / 256), dim3(256), 0, dx, reps);
        t.push_back(tm.stop());
    }
    const double ms = median(t);
    char buf[128];
    snprintf(buf, sizeof buf, "%.3g mul/s", 4.0 * threads * reps / (ms * 1e-3));
    timing(std::string(name) + " mul throughput", ms, "", buf);
    cudaFree(dx);
#endif
}

// Multiplier variants (instruction selection experiments), checked and timed side by side.
struct fr_v0 : pt_fr_params { static constexpr bool FR_TRICK = false; PT_FI static uint32_t m0() { return 0xffffffffu; } };
struct fr_t1 : pt_fr_params { static constexpr bool FR_TRICK = true; PT_FI static uint32_t m0() { return 0xffffffffu; } };
struct fr_m1 : pt_fr_params { static constexpr bool FR_TRICK = false; };
struct fr_v1 : pt_fr_params { static constexpr bool AB_WIDE = true, WIDE_REDC = false, FR_TRICK = false; };
struct fr_v3 : pt_fr_params { static constexpr bool AB_WIDE = true, WIDE_REDC = true, FR_TRICK = true; };
struct fp_v1 : pt_fp_params { static constexpr bool AB_WIDE = true, WIDE_REDC = false, FR_TRICK = false, CALL = false; };
struct fp_v0 : pt_fp_params { static constexpr bool CALL = false; };

template <class F, int NL>
static void variant(const char* name, const HostField<NL>& R) {
    const size_t n = 1 << 12;
    std::vector<HF<NL>> ha(n), hb(n);
    for (size_t i = 0; i < n; i++) { ha[i] = R.random(g_rng); hb[i] = R.random(g_rng); }
    F *da = dalloc<F>(n), *db = dalloc<F>(n), *dout = dalloc<F>(6 * n);
    h2d((HF<NL>*)da, ha.data(), n);
    h2d((HF<NL>*)db, hb.data(), n);
    PT_LAUNCH(tk_field_ops<F>, dim3(n / 128), dim3(128), 0, da, db, dout, (uint32_t)n);
    std::vector<F> o(6 * n);
    d2h(o.data(), dout, 6 * n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const HF<NL> e = R.mul(ha[i], hb[i]);
        bad += memcmp(o[6 * i].v, e.l, sizeof(e.l)) != 0;
    }
    report(std::string("multiplier variant ") + name + " vs host", bad == 0, "");
    cudaFree(da); cudaFree(db); cudaFree(dout);
#ifndef PT_EMU
    const uint32_t threads = 132 * 2048, reps = 256;
    F* dx = dalloc<F>(4 * threads);
    std::vector<HF<NL>> hx(4 * threads);
    for (auto& x : hx) x = R.random(g_rng);
    h2d((HF<NL>*)dx, hx.data(), hx.size());
    PT_LAUNCH(tk_field_bench<F>, dim3(threads / 256), dim3(256), 0, dx, 8u);
    std::vector<double> t;
    for (int r = 0; r < 5; r++) {
        GpuTimer tm;
        tm.start();
        PT_LAUNCH(tk_field_bench<F>, dim3(threads / 256), dim3(256), 0, dx, reps);
        t.push_back(tm.stop());
    }
    const double ms = median(t);
    char buf[128];
    snprintf(buf, sizeof buf, "%.3g mul/s", 4.0 * threads * reps / (ms * 1e-3));
    timing(std::string("multiplier variant ") + name, ms, "", buf);
    cudaFree(dx);
#endif
}

void run_field_tests() {
    field_suite<fr_t, 4>("Fr", H.fr, "fr_ops.bin");
    field_suite<fp_t, 6>("Fp", H.fp, "fp_ops.bin");
    variant<mont_t<fr_v0>, 4>("Fr madc chains, immediate m0 (the previous default)", H.fr);
    variant<mont_t<fr_t1>, 4>("Fr madc chains, immediate m0, special limbs", H.fr);
    variant<mont_t<fr_m1>, 4>("Fr madc chains, m0 loaded, no special limbs", H.fr);
    variant<mont_t<fr_v1>, 4>("Fr wide a*b", H.fr);
    variant<mont_t<fr_v3>, 4>("Fr wide a*b, special-limb reduction", H.fr);
    variant<mont_t<fp_v1>, 6>("Fp wide a*b (inline)", H.fp);
    variant<mont_t<fp_v0>, 6>("Fp madc chains (inline)", H.fp);
}
