// Fixed-base products for parameter generation: out[i] = s_i * G for one base G and millions
// of scalars, from a window table instead of doublings. table[w * half + d - 1] = d * 2^(bits*w) * G
// (affine, never infinity; half = 2^(bits - 1)), the layout of the engine's `FixedBase`.
// Digits are signed: a digit above half takes away 2^bits and carries one into the next window,
// and a negative digit adds the negated entry. nwin windows cover 255 bits and the last carry.
//
//   pt_g1_fixed_base / pt_g2_fixed_base: grid = ceil(n / 128), 128 threads; scalars in Montgomery
//   form (blst_fr), out as blst_p1 / blst_p2 (Jacobian; the host makes them affine).
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
