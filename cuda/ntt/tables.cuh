// Setup kernels for the NTT: domain constants and power tables, built once per size.
#pragma once
#include "../ff/bls12_381.cuh"

// BLS12-381 Fr: ROOT_OF_UNITY = 7^((r-1)/2^32) (blstrs), the coset generator g = 7.
PT_CONST uint32_t PT_FR_ROOT_CANON[8] = {0x439f0d2b, 0x3829971f, 0x8c2280b9, 0xb6368350,
                                         0x22c813b4, 0xd09b6819, 0xdfe81f20, 0x16a2a19e};

#define PT_NTT_C_OMEGA 0      // w_n
#define PT_NTT_C_OMEGA_INV 1  // w_n^-1
#define PT_NTT_C_N_INV 2      // 1/n
#define PT_NTT_C_G 3          // g = 7
#define PT_NTT_C_G_INV 4      // 1/g
#define PT_NTT_C_ZINV_NINV 5  // 1/((g^n - 1) n)
#define PT_NTT_C_ONE 6        // 1
#define PT_NTT_C_ZINV 7       // 1/(g^n - 1)
#define PT_NTT_C_COUNT 8

// out[0..8) = the constants above for n = 2^log_n (Montgomery form). One thread: <<<1, 1>>>.
extern "C" __global__ void pt_ntt_consts(fr_t* out, uint32_t log_n)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    fr_t root;
    for (int i = 0; i < 8; i++) root.v[i] = PT_FR_ROOT_CANON[i];
    root = fr_t::to_mont(root);
    fr_t w = root;
    for (uint32_t i = log_n; i < 32; i++) w = w.sqr();
    fr_t seven = fr_t::zero();
    seven.v[0] = 7;
    seven = fr_t::to_mont(seven);
    fr_t nn = fr_t::zero();
    nn.v[0] = 1u << log_n;
    if (log_n >= 32) nn.v[1] = 1u << (log_n - 32);
    nn = fr_t::to_mont(nn);
    fr_t gn = seven;
    for (uint32_t i = 0; i < log_n; i++) gn = gn.sqr();
    const fr_t ninv = nn.inverse();
    pt_store(out + PT_NTT_C_OMEGA, w);
    pt_store(out + PT_NTT_C_OMEGA_INV, w.inverse());
    pt_store(out + PT_NTT_C_N_INV, ninv);
    pt_store(out + PT_NTT_C_G, seven);
    pt_store(out + PT_NTT_C_G_INV, seven.inverse());
    const fr_t zinv = (gn - fr_t::one()).inverse();
    pt_store(out + PT_NTT_C_ZINV_NINV, zinv * ninv);
    pt_store(out + PT_NTT_C_ONE, fr_t::one());
    pt_store(out + PT_NTT_C_ZINV, zinv);
}

#define PT_POW_RUN 64
// out[x] = (*scale) * (*base)^x for x < 2^log_count (scale may be null = 1).
// grid = ceil(2^log_count / (64 * 256)) blocks of 256 threads; each thread fills a run of 64.
extern "C" __global__ void __launch_bounds__(256)
pt_fr_powers(fr_t* out, const fr_t* base, const fr_t* scale, uint32_t log_count)
{
    const uint32_t count = 1u << log_count;
    const uint32_t x0 = (blockIdx.x * blockDim.x + threadIdx.x) * PT_POW_RUN;
    if (x0 >= count) return;
    const fr_t bb = pt_load(base);
    fr_t v = bb.pow(&x0, 1);
    if (scale) v = v * pt_load(scale);
    const uint32_t end = min(count, x0 + PT_POW_RUN);
    for (uint32_t x = x0; x < end; x++) {
        pt_store(out + x, v);
        v = v * bb;
    }
}

// a[i] = a[i] * b[i] - c[i] (the H numerator as a separate pass, when not fused).
extern "C" __global__ void __launch_bounds__(256)
pt_fr_mul_sub(fr_t* a, const fr_t* b, const fr_t* c, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    pt_store(a + i, pt_load(a + i) * pt_load(b + i) - pt_load(c + i));
}

// a[i] = a[i] * s[i] (s may be null) * (*sc) (sc may be null).
extern "C" __global__ void __launch_bounds__(256)
pt_fr_scale(fr_t* a, const fr_t* s, const fr_t* sc, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t x = pt_load(a + i);
    if (s) x = x * pt_load(s + i);
    if (sc) x = x * pt_load(sc);
    pt_store(a + i, x);
}
