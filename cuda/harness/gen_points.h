// Base sets for the MSM checks: P_i = A[i mod 2^la] + C[i >> la] from a few host-made points,
// so that a large MSM has a cheap host answer (sum over the A and C parts), in G1 or G2.
#pragma once
#include "../ec/curve.cuh"

// out[i] = A[i & (2^la - 1)] + C[i >> la], 32 points per thread with one shared inversion
template <class F>
__global__ void tk_gen_sum(affine_of<F>* out, const affine_of<F>* A, const affine_of<F>* C, uint32_t n, uint32_t la) {
    const uint32_t i0 = (blockIdx.x * blockDim.x + threadIdx.x) * 32;
    if (i0 >= n) return;
    const uint32_t cnt = min(32u, n - i0);
    F pre[32];
    F acc = F::one();
    for (uint32_t j = 0; j < cnt; j++) {
        const uint32_t i = i0 + j;
        F dx = pt_load(&C[i >> la].x) - pt_load(&A[i & ((1u << la) - 1)].x);
        if (dx.is_zero()) dx = F::one();  // probability ~2^-380; the test would then fail
        pre[j] = acc;
        acc = acc * dx;
    }
    F inv = acc.inverse();
    for (uint32_t j = cnt; j-- > 0;) {
        const uint32_t i = i0 + j;
        const affine_of<F> a = pt_load(&A[i & ((1u << la) - 1)]), c = pt_load(&C[i >> la]);
        const F dx = c.x - a.x;
        const F dinv = inv * pre[j];
        inv = inv * dx;
        const F lam = (c.y - a.y) * dinv;
        affine_of<F> r;
        r.x = lam.sqr() - a.x - c.x;
        r.y = lam * (a.x - r.x) - a.y;
        pt_store(out + i, r);
    }
}
