// Short Weierstrass curves with a = 0 over a field F, in blst's layouts and in XYZZ
// coordinates; G1 of BLS12-381 (y^2 = x^3 + 4 over Fp) and G2 (y^2 = x^3 + 4(u + 1) over Fp2)
// are the instances (the formulas never use b).
//
//   affine_of<F>  = blst_p1_affine / blst_p2_affine {x, y}; the point at infinity is x = y = 0.
//   jac_of<F>     = blst_p1 / blst_p2 {X, Y, Z}, x = X/Z^2, y = Y/Z^3; infinity has Z = 0.
//   xyzz_of<F>    = {X, Y, ZZ, ZZZ}, x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; infinity has ZZ = 0.
//
// Formulas: hyperelliptic.org EFD, "xyzz" for short Weierstrass curves with a = 0:
// madd-2008-s (8M+2S), add-2008-s (12M+2S), dbl-2008-s-1 (6M+4S with a = 0), mdbl-2008-s-1.
#pragma once
#include "../ff/bls12_381.cuh"
#include "../ff/fp2.cuh"
#include "../util/common.cuh"

template <class F> struct affine_of { F x, y; };
template <class F> struct jac_of { F x, y, z; };
template <class F> struct xyzz_of { F x, y, zz, zzz; };

typedef affine_of<fp_t> g1_affine_t;
typedef jac_of<fp_t> g1_jac_t;
typedef xyzz_of<fp_t> g1_xyzz_t;
typedef affine_of<fp2_t> g2_affine_t;
typedef jac_of<fp2_t> g2_jac_t;
typedef xyzz_of<fp2_t> g2_xyzz_t;

template <class F> PT_FI bool pt_is_inf(const affine_of<F>& p) { return p.x.is_zero() && p.y.is_zero(); }
template <class F> PT_FI bool pt_is_inf(const xyzz_of<F>& p) { return p.zz.is_zero(); }

template <class F = fp_t> PT_FI xyzz_of<F> pt_xyzz_inf() {
    xyzz_of<F> r;
    r.x = F::one(); r.y = F::one(); r.zz = F::zero(); r.zzz = F::zero();
    return r;
}
template <class F> PT_FI xyzz_of<F> pt_xyzz_from_affine(const affine_of<F>& a) {
    if (pt_is_inf(a)) return pt_xyzz_inf<F>();
    xyzz_of<F> r;
    r.x = a.x; r.y = a.y; r.zz = F::one(); r.zzz = F::one();
    return r;
}

// 2P for an affine P (not infinity; y != 0 on the prime-order curve)
template <class F> PT_FI xyzz_of<F> pt_mdbl(const affine_of<F>& p) {
    const F u = p.y.dbl(), v = u.sqr(), w = u * v, s = p.x * v;
    const F x2 = p.x.sqr(), m = x2.dbl() + x2;
    xyzz_of<F> r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * p.y;
    r.zz = v;
    r.zzz = w;
    return r;
}

template <class F> PT_FI void pt_dbl(xyzz_of<F>& p) {
    if (pt_is_inf(p)) return;
    const F u = p.y.dbl(), v = u.sqr(), w = u * v, s = p.x * v;
    const F x2 = p.x.sqr(), m = x2.dbl() + x2;
    const F x3 = m.sqr() - s.dbl();
    p.y = m * (s - x3) - w * p.y;
    p.x = x3;
    p.zz = p.zz * v;
    p.zzz = p.zzz * w;
}

// p += q for an affine q that is not infinity
template <class F> PT_FI void pt_madd(xyzz_of<F>& p, const affine_of<F>& q) {
    if (pt_is_inf(p)) {
        p.x = q.x; p.y = q.y; p.zz = F::one(); p.zzz = F::one();
        return;
    }
    const F u2 = q.x * p.zz, s2 = q.y * p.zzz;
    const F P = u2 - p.x, R = s2 - p.y;
    if (P.is_zero()) {
        if (R.is_zero()) p = pt_mdbl(q);
        else p = pt_xyzz_inf<F>();
        return;
    }
    const F pp = P.sqr(), ppp = P * pp, q1 = p.x * pp;
    const F x3 = R.sqr() - ppp - q1.dbl();
    p.y = R * (q1 - x3) - p.y * ppp;
    p.x = x3;
    p.zz = p.zz * pp;
    p.zzz = p.zzz * ppp;
}

// p += q
template <class F> PT_FI void pt_add(xyzz_of<F>& p, const xyzz_of<F>& q) {
    if (pt_is_inf(q)) return;
    if (pt_is_inf(p)) { p = q; return; }
    const F u1 = p.x * q.zz, u2 = q.x * p.zz;
    const F s1 = p.y * q.zzz, s2 = q.y * p.zzz;
    const F P = u2 - u1, R = s2 - s1;
    if (P.is_zero()) {
        if (R.is_zero()) pt_dbl(p);
        else p = pt_xyzz_inf<F>();
        return;
    }
    const F pp = P.sqr(), ppp = P * pp, q1 = u1 * pp;
    const F x3 = R.sqr() - ppp - q1.dbl();
    p.y = R * (q1 - x3) - s1 * ppp;
    p.x = x3;
    p.zz = p.zz * q.zz * pp;
    p.zzz = p.zzz * q.zzz * ppp;
}

template <class F> PT_FI xyzz_of<F> pt_neg(const xyzz_of<F>& p) {
    xyzz_of<F> r = p;
    r.y = p.y.neg();
    return r;
}

// The steps of loops over many additions, inlined (a kernel may pass out-of-line ones).
struct pt_inline_steps {
    template <class F> PT_FI static void dbl(xyzz_of<F>& p) { pt_dbl(p); }
    template <class F> PT_FI static void add(xyzz_of<F>& p, const xyzz_of<F>& q) { pt_add(p, q); }
    template <class F> PT_FI static void madd(xyzz_of<F>& p, const affine_of<F>& q) { pt_madd(p, q); }
};

// p * k for a small k (double-and-add, MSB first)
template <class F, class S = pt_inline_steps> PT_FI xyzz_of<F> pt_mul_small(const xyzz_of<F>& p, uint32_t k) {
    xyzz_of<F> r = pt_xyzz_inf<F>();
    for (int i = 31 - __clz(k | 1); i >= 0 && k; i--) {
        S::dbl(r);
        if ((k >> i) & 1) S::add(r, p);
    }
    return r;
}

// XYZZ -> Jacobian without an inversion: Z = ZZZ, X = X*ZZ^2, Y = Y*ZZZ^2
// (x = X ZZ^2 / ZZZ^2 = X ZZ^2 / ZZ^3 = X/ZZ, y = Y ZZZ^2 / ZZZ^3 = Y/ZZZ).
template <class F> PT_FI jac_of<F> pt_to_jac(const xyzz_of<F>& p) {
    jac_of<F> r;
    if (pt_is_inf(p)) {
        r.x = F::one(); r.y = F::one(); r.z = F::zero();
        return r;
    }
    r.x = p.x * p.zz.sqr();
    r.y = p.y * p.zzz.sqr();
    r.z = p.zzz;
    return r;
}
