// G1 of BLS12-381 (y^2 = x^3 + 4 over Fp) in blst's layouts and in XYZZ coordinates.
//
//   g1_affine_t = blst_p1_affine {x, y}; the point at infinity is x = y = 0.
//   g1_jac_t    = blst_p1 {X, Y, Z}, x = X/Z^2, y = Y/Z^3; infinity has Z = 0.
//   g1_xyzz_t   = {X, Y, ZZ, ZZZ}, x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; infinity has ZZ = 0.
//
// Formulas: hyperelliptic.org EFD, "xyzz" for short Weierstrass curves with a = 0:
// madd-2008-s (8M+2S), add-2008-s (12M+2S), dbl-2008-s-1 (6M+4S with a = 0), mdbl-2008-s-1.
#pragma once
#include "../ff/bls12_381.cuh"
#include "../util/common.cuh"

struct g1_affine_t { fp_t x, y; };
struct g1_jac_t { fp_t x, y, z; };
struct g1_xyzz_t { fp_t x, y, zz, zzz; };

PT_FI bool pt_is_inf(const g1_affine_t& p) { return p.x.is_zero() && p.y.is_zero(); }
PT_FI bool pt_is_inf(const g1_xyzz_t& p) { return p.zz.is_zero(); }

PT_FI g1_xyzz_t pt_xyzz_inf() {
    g1_xyzz_t r;
    r.x = fp_t::one(); r.y = fp_t::one(); r.zz = fp_t::zero(); r.zzz = fp_t::zero();
    return r;
}
PT_FI g1_xyzz_t pt_xyzz_from_affine(const g1_affine_t& a) {
    if (pt_is_inf(a)) return pt_xyzz_inf();
    g1_xyzz_t r;
    r.x = a.x; r.y = a.y; r.zz = fp_t::one(); r.zzz = fp_t::one();
    return r;
}

// 2P for an affine P (not infinity; y != 0 on the prime-order curve)
PT_FI g1_xyzz_t pt_mdbl(const g1_affine_t& p) {
    const fp_t u = p.y.dbl(), v = u.sqr(), w = u * v, s = p.x * v;
    const fp_t x2 = p.x.sqr(), m = x2.dbl() + x2;
    g1_xyzz_t r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * p.y;
    r.zz = v;
    r.zzz = w;
    return r;
}

PT_FI void pt_dbl(g1_xyzz_t& p) {
    if (pt_is_inf(p)) return;
    const fp_t u = p.y.dbl(), v = u.sqr(), w = u * v, s = p.x * v;
    const fp_t x2 = p.x.sqr(), m = x2.dbl() + x2;
    const fp_t x3 = m.sqr() - s.dbl();
    p.y = m * (s - x3) - w * p.y;
    p.x = x3;
    p.zz = p.zz * v;
    p.zzz = p.zzz * w;
}

// p += q for an affine q that is not infinity
PT_FI void pt_madd(g1_xyzz_t& p, const g1_affine_t& q) {
    if (pt_is_inf(p)) {
        p.x = q.x; p.y = q.y; p.zz = fp_t::one(); p.zzz = fp_t::one();
        return;
    }
    const fp_t u2 = q.x * p.zz, s2 = q.y * p.zzz;
    const fp_t P = u2 - p.x, R = s2 - p.y;
    if (P.is_zero()) {
        if (R.is_zero()) p = pt_mdbl(q);
        else p = pt_xyzz_inf();
        return;
    }
    const fp_t pp = P.sqr(), ppp = P * pp, q1 = p.x * pp;
    const fp_t x3 = R.sqr() - ppp - q1.dbl();
    p.y = R * (q1 - x3) - p.y * ppp;
    p.x = x3;
    p.zz = p.zz * pp;
    p.zzz = p.zzz * ppp;
}

// p += q
PT_FI void pt_add(g1_xyzz_t& p, const g1_xyzz_t& q) {
    if (pt_is_inf(q)) return;
    if (pt_is_inf(p)) { p = q; return; }
    const fp_t u1 = p.x * q.zz, u2 = q.x * p.zz;
    const fp_t s1 = p.y * q.zzz, s2 = q.y * p.zzz;
    const fp_t P = u2 - u1, R = s2 - s1;
    if (P.is_zero()) {
        if (R.is_zero()) pt_dbl(p);
        else p = pt_xyzz_inf();
        return;
    }
    const fp_t pp = P.sqr(), ppp = P * pp, q1 = u1 * pp;
    const fp_t x3 = R.sqr() - ppp - q1.dbl();
    p.y = R * (q1 - x3) - s1 * ppp;
    p.x = x3;
    p.zz = p.zz * q.zz * pp;
    p.zzz = p.zzz * q.zzz * ppp;
}

PT_FI g1_xyzz_t pt_neg(const g1_xyzz_t& p) {
    g1_xyzz_t r = p;
    r.y = p.y.neg();
    return r;
}

// p * k for a small k (double-and-add, MSB first)
PT_FI g1_xyzz_t pt_mul_small(const g1_xyzz_t& p, uint32_t k) {
    g1_xyzz_t r = pt_xyzz_inf();
    for (int i = 31 - __clz(k | 1); i >= 0 && k; i--) {
        pt_dbl(r);
        if ((k >> i) & 1) pt_add(r, p);
    }
    return r;
}

// XYZZ -> Jacobian without an inversion: Z = ZZZ, X = X*ZZ^2, Y = Y*ZZZ^2
// (x = X ZZ^2 / ZZZ^2 = X ZZ^2 / ZZ^3 = X/ZZ, y = Y ZZZ^2 / ZZZ^3 = Y/ZZZ).
PT_FI g1_jac_t pt_to_jac(const g1_xyzz_t& p) {
    g1_jac_t r;
    if (pt_is_inf(p)) {
        r.x = fp_t::one(); r.y = fp_t::one(); r.z = fp_t::zero();
        return r;
    }
    r.x = p.x * p.zz.sqr();
    r.y = p.y * p.zzz.sqr();
    r.z = p.zzz;
    return r;
}
