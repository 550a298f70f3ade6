// Fixed-base products for parameter generation: out[i] = s_i * G for one base G and millions
// of scalars, from a window table instead of doublings. table[w * half + d - 1] = d * 2^(bits*w) * G
// (affine, never infinity; half = 2^(bits - 1)), the layout of the engine's `FixedBase`.
// Digits are signed: a digit above half takes away 2^bits and carries one into the next window,
// and a negative digit adds the negated entry. nwin windows cover 255 bits and the last carry.
//
//   pt_g1_fixed_base / pt_g2_fixed_base: grid = ceil(n / 128), 128 threads; scalars in Montgomery
//   form (blst_fr), out as blst_p1 / blst_p2 (Jacobian).
//   pt_g1_to_affine / pt_g2_to_affine: grid = ceil(n / (128 * 16)), 128 threads: Jacobian ->
//   affine (blst_p1_affine / blst_p2_affine, infinity (0, 0)), 16 points a thread sharing one
//   inversion, so the products come back ready to use.
#pragma once
#include "../ec/curve.cuh"

#define PT_FIXED_BASE_THREADS 128

template <class F>
PT_FI void pt_fixed_base(const affine_of<F>* table, uint32_t bits, uint32_t nwin,
                         const fr_t* scalars, uint32_t i, jac_of<F>* out)
{
    const fr_t s = pt_load(scalars + i).from_mont();
    const uint32_t half = 1u << (bits - 1), mask = (1u << bits) - 1;
    xyzz_of<F> acc = pt_xyzz_inf<F>();
    uint32_t carry = 0;
    for (uint32_t w = 0; w < nwin; w++) {
        const uint32_t bit = w * bits, wi = bit >> 5, sh = bit & 31;
        uint32_t v = wi < 8 ? s.v[wi] >> sh : 0;
        if (sh + bits > 32 && wi + 1 < 8) v |= s.v[wi + 1] << (32 - sh);
        uint32_t d = (v & mask) + carry;
        carry = d > half;
        if (carry) d = (1u << bits) - d;  // the digit is -d
        if (d == 0) continue;
        affine_of<F> e = pt_load(table + w * half + d - 1);
        if (carry) e.y = e.y.neg();
        pt_madd(acc, e);
    }
    pt_store(out + i, pt_to_jac(acc));
}

extern "C" __global__ void __launch_bounds__(PT_FIXED_BASE_THREADS)
pt_g1_fixed_base(const g1_affine_t* table, uint32_t bits, uint32_t nwin, const fr_t* scalars,
                 uint32_t n, g1_jac_t* out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) pt_fixed_base(table, bits, nwin, scalars, i, out);
}

extern "C" __global__ void __launch_bounds__(PT_FIXED_BASE_THREADS)
pt_g2_fixed_base(const g2_affine_t* table, uint32_t bits, uint32_t nwin, const fr_t* scalars,
                 uint32_t n, g2_jac_t* out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) pt_fixed_base(table, bits, nwin, scalars, i, out);
}

#define PT_TO_AFFINE_BATCH 16

template <class F>
PT_FI void pt_to_affine_batch(const jac_of<F>* in, uint32_t n, uint32_t t, affine_of<F>* out)
{
    const uint32_t i0 = t * PT_TO_AFFINE_BATCH;
    if (i0 >= n) return;
    const uint32_t cnt = min((uint32_t)PT_TO_AFFINE_BATCH, n - i0);
    F pre[PT_TO_AFFINE_BATCH];
    F acc = F::one();
    for (uint32_t j = 0; j < cnt; j++) {
        const F z = pt_load(&in[i0 + j].z);
        pre[j] = acc;
        if (!z.is_zero()) acc = acc * z;  // infinity: left out of the product
    }
    F inv = acc.inverse();
    for (uint32_t j = cnt; j-- > 0;) {
        const jac_of<F> p = pt_load(in + i0 + j);
        affine_of<F> a;
        if (p.z.is_zero()) {
            a.x = F::zero();
            a.y = F::zero();
        } else {
            const F zi = inv * pre[j];
            inv = inv * p.z;
            const F zi2 = zi.sqr();
            a.x = p.x * zi2;
            a.y = p.y * zi2 * zi;
        }
        pt_store(out + i0 + j, a);
    }
}

extern "C" __global__ void __launch_bounds__(PT_FIXED_BASE_THREADS)
pt_g1_to_affine(const g1_jac_t* in, uint32_t n, g1_affine_t* out)
{
    pt_to_affine_batch(in, n, blockIdx.x * blockDim.x + threadIdx.x, out);
}

extern "C" __global__ void __launch_bounds__(PT_FIXED_BASE_THREADS)
pt_g2_to_affine(const g2_jac_t* in, uint32_t n, g2_affine_t* out)
{
    pt_to_affine_batch(in, n, blockIdx.x * blockDim.x + threadIdx.x, out);
}
