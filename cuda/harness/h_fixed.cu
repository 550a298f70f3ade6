// Fixed-base products (parameter generation) and the batched Jacobian -> affine conversions.
#include "gpu.h"
#include "harness.h"
#include "../msm/fixed_base.cuh"

// Fixed-base products (parameter generation): pt_g1_fixed_base from host-built 4- and 8-bit
// window tables against the host's double-and-add, pt_g2_fixed_base against g2_fixed.bin.
static uint32_t fixed_base_windows(uint32_t bits) { return (255 + bits - 1) / bits + (255 % bits == 0); }

void run_fixed_base_tests() {
    const HAff g_gen = load_g1_generator();
    const Fr r1 = H.fr.sub(H.fr.zero(), H.fr.from_mont(H.fr.onem()));  // r - 1 (canonical)
    for (uint32_t bits : {4u, 8u}) {
        const uint32_t half = 1u << (bits - 1), nwin = fixed_base_windows(bits);
        std::vector<HAff> table;
        HJac wb = h_from_aff(g_gen);
        for (uint32_t w = 0; w < nwin; w++) {
            HJac e = wb;
            for (uint32_t d = 1; d <= half; d++) {
                table.push_back(h_to_aff(e));
                e = d == 1 ? h_dbl(wb) : h_add(e, wb);  // (d + 1) * wb
            }
            wb = h_dbl(h_from_aff(table.back()));  // 2 * half * wb = 2^bits * wb
        }
        std::vector<Fr> s(24);
        for (auto& v : s) v = H.fr.random(g_rng);
        const uint64_t small[] = {0, 1, 2, half - 1, half, half + 1, (1u << bits) - 1, 1u << bits};
        for (int i = 0; i < 8; i++) { s[i] = H.fr.zero(); s[i].l[0] = small[i]; }
        s[8] = r1;
        for (int i = 0; i < 4; i++) s[9].l[i] = i < 3 ? ~0ull : (1ull << 62) - 1;  // 2^254 - 1
        for (int i = 0; i < 4; i++) s[10].l[i] = (r1.l[i] >> 1) | (i < 3 ? r1.l[i + 1] << 63 : 0);
        const uint32_t n = s.size();
        g1_affine_t* dt = dalloc<g1_affine_t>(table.size());
        h2d(dt, (const g1_affine_t*)table.data(), table.size());
        fr_t* ds = upload_scalars(s);
        g1_jac_t* dout = dalloc<g1_jac_t>(n);
        PT_LAUNCH(pt_g1_fixed_base, dim3((n + PT_FIXED_BASE_THREADS - 1) / PT_FIXED_BASE_THREADS),
                  dim3(PT_FIXED_BASE_THREADS), 0, (const g1_affine_t*)dt, bits, nwin, (const fr_t*)ds, n, dout);
        std::vector<HJac> got(n);
        d2h((g1_jac_t*)got.data(), dout, n);
        int bad = 0;
        for (uint32_t i = 0; i < n; i++)
            bad += !h_aff_eq(h_to_aff(got[i]), h_to_aff(h_msm({s[i]}, {g_gen})));
        report("G1 fixed-base products, " + std::to_string(bits) + "-bit windows (0, 1, digits at the carry edges, r-1, 2^254-1, random)",
               bad == 0, std::to_string(bad) + " of " + std::to_string(n) + " wrong");
        // The same products made affine on the device (one inversion per 16, infinity among them).
        g1_affine_t* daff = dalloc<g1_affine_t>(n);
        PT_LAUNCH(pt_g1_to_affine, dim3(1), dim3(PT_FIXED_BASE_THREADS), 0, (const g1_jac_t*)dout, n, daff);
        std::vector<HAff> aff(n);
        d2h((g1_affine_t*)aff.data(), daff, n);
        bad = 0;
        for (uint32_t i = 0; i < n; i++) bad += !h_aff_eq(aff[i], h_to_aff(got[i]));
        report("G1 Jacobian to affine on the device, " + std::to_string(bits) + "-bit window products", bad == 0,
               std::to_string(bad) + " of " + std::to_string(n) + " wrong");
        cudaFree(dt); cudaFree(ds); cudaFree(dout); cudaFree(daff);
    }
    auto w = load_words(g_opt.vectors + "/g2_fixed.bin");
    const uint32_t bits = w[0], nwin = w[1], n = w[2], entries = nwin << (bits - 1);
    const uint32_t* table = w.data() + 3;
    const uint32_t* cases = table + entries * 48;
    std::vector<Fr> s(n);
    std::vector<HAff2> want(n);
    for (uint32_t i = 0; i < n; i++) {
        memcpy(&s[i], cases + i * 56, 32);
        memcpy(&want[i], cases + i * 56 + 8, sizeof(HAff2));
    }
    g2_affine_t* dt = dalloc<g2_affine_t>(entries);
    h2d(dt, (const g2_affine_t*)table, entries);
    fr_t* ds = upload_scalars(s);
    g2_jac_t* dout = dalloc<g2_jac_t>(n);
    PT_LAUNCH(pt_g2_fixed_base, dim3(1), dim3(PT_FIXED_BASE_THREADS), 0, (const g2_affine_t*)dt, bits, nwin,
              (const fr_t*)ds, n, dout);
    std::vector<HJac2> got(n);
    d2h((g2_jac_t*)got.data(), dout, n);
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) bad += !h_aff_eq(h_to_aff(got[i]), want[i]);
    report("G2 fixed-base products, 4-bit windows, known answers (0, 1, carry edges, r-1, 2^254-1, random)",
           bad == 0, std::to_string(bad) + " of " + std::to_string(n) + " wrong");
    g2_affine_t* daff = dalloc<g2_affine_t>(n);
    PT_LAUNCH(pt_g2_to_affine, dim3(1), dim3(PT_FIXED_BASE_THREADS), 0, (const g2_jac_t*)dout, n, daff);
    std::vector<HAff2> aff(n);
    d2h((g2_affine_t*)aff.data(), daff, n);
    bad = 0;
    for (uint32_t i = 0; i < n; i++) bad += !h_aff_eq(aff[i], want[i]);
    report("G2 Jacobian to affine on the device, known answers", bad == 0,
           std::to_string(bad) + " of " + std::to_string(n) + " wrong");
    cudaFree(dt); cudaFree(ds); cudaFree(dout); cudaFree(daff);
}
