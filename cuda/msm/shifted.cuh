// Precomputed shifted bases: Q[w * n + i] = 2^(c w) P[i] for w < W = ceil(255 / c), affine.
// With them an MSM puts every window's digit into one set of 2^(c-1) buckets (the entry for
// window w of scalar i names Q[w * n + i]): the running sums are paid once instead of W
// times, and c can be wider (config.cuh: pt_msm_shifted_c). They take W times the bases'
// memory (2^26 bases at c = 24: 11 x 6.4 GB).
//
// Built on the device, a slice of bases at a time:
//   pt_msm_shift        <<<ceil(cnt/128), 128>>>(P + i0, cnt, c, W, tmp /*W*cnt XYZZ*/)
//   pt_msm_shift_affine <<<ceil(cnt/128), 128>>>(tmp, cnt, W, n, Q + i0)
#pragma once
#include "../ec/curve.cuh"

#define PT_MSM_SHIFT_MAX_WINDOWS 32  // c >= 8

// tmp[w * cnt + j] = 2^(c w) P[j] in XYZZ, by c doublings a window.
extern "C" __global__ void __launch_bounds__(128)
pt_msm_shift(const g1_affine_t* P, uint32_t cnt, uint32_t c, uint32_t W, g1_xyzz_t* tmp)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cnt) return;
    g1_xyzz_t q = pt_xyzz_from_affine(pt_load(P + j));
    pt_store(tmp + j, q);
    for (uint32_t w = 1; w < W; w++) {
        for (uint32_t d = 0; d < c; d++) pt_dbl(q);
        pt_store(tmp + (size_t)w * cnt + j, q);
    }
}

// Q[w * n + j] = tmp[w * cnt + j] as affine, one inversion per base for its W points:
// with t = 1/ZZZ, 1/ZZ = (ZZ t)^2 (ZZ^3 = ZZZ^2), so x = X (ZZ t)^2 and y = Y t.
extern "C" __global__ void __launch_bounds__(128)
pt_msm_shift_affine(const g1_xyzz_t* tmp, uint32_t cnt, uint32_t W, uint32_t n, g1_affine_t* Q)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cnt) return;
    fp_t pre[PT_MSM_SHIFT_MAX_WINDOWS];
    fp_t acc = fp_t::one();
    for (uint32_t w = 0; w < W; w++) {
        const fp_t zzz = pt_load(&tmp[(size_t)w * cnt + j].zzz);
        pre[w] = acc;
        if (!zzz.is_zero()) acc = acc * zzz;  // infinity: left out of the product
    }
    fp_t inv = acc.inverse();
    for (uint32_t w = W; w-- > 0;) {
        const g1_xyzz_t q = pt_load(tmp + (size_t)w * cnt + j);
        g1_affine_t a;
        if (pt_is_inf(q)) {
            a.x = fp_t::zero();
            a.y = fp_t::zero();
        } else {
            const fp_t t = inv * pre[w];  // 1 / ZZZ
            inv = inv * q.zzz;
            const fp_t zt = q.zz * t;
            a.x = q.x * zt.sqr();
            a.y = q.y * t;
        }
        pt_store(Q + (size_t)w * n + j, a);
    }
}
