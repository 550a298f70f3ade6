// Fp2 = Fp[u] / (u^2 + 1), the field of G2's coordinates, in blst's layout (blst_fp2: c0
// then c1, each a Montgomery Fp). Only what the curve formulas and affine conversions use.
#pragma once
#include "bls12_381.cuh"

struct fp2_t {
    fp_t c0, c1;

    PT_FI static fp2_t zero() { return {fp_t::zero(), fp_t::zero()}; }
    PT_FI static fp2_t one() { return {fp_t::one(), fp_t::zero()}; }
    PT_FI bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    PT_FI friend fp2_t operator+(const fp2_t& a, const fp2_t& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
    PT_FI friend fp2_t operator-(const fp2_t& a, const fp2_t& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
    PT_FI fp2_t neg() const { return {c0.neg(), c1.neg()}; }
    PT_FI fp2_t dbl() const { return {c0.dbl(), c1.dbl()}; }
    // Karatsuba: 3 Fp multiplications.
    PT_FI friend fp2_t operator*(const fp2_t& a, const fp2_t& b) {
        const fp_t t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
        return {t0 - t1, (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1};
    }
    // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u: 2 Fp multiplications.
    PT_FI fp2_t sqr() const { return {(c0 + c1) * (c0 - c1), (c0 * c1).dbl()}; }
    // 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2); zero for zero.
    PT_FI fp2_t inverse() const {
        const fp_t t = (c0.sqr() + c1.sqr()).inverse();
        return {c0 * t, (c1 * t).neg()};
    }
};
