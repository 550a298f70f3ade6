// Host reference arithmetic for the harness, independent of the device code: 64-bit limbs,
// CIOS with 128-bit products. Same Montgomery radix (2^256 for Fr, 2^384 for Fp), so the
// byte layouts match the device types and blst.
#pragma once
#include <stdint.h>
#include <string.h>
#include <random>
#include <thread>
#include <vector>
#include <functional>

typedef unsigned __int128 u128;

template <int NL>
struct HF {
    uint64_t l[NL];
};

template <int NL>
struct HostField {
    uint64_t p[NL], inv, rr[NL], one[NL];
    void init(const uint64_t* m) {
        memcpy(p, m, sizeof(p));
        uint64_t x = 1;
        for (int i = 0; i < 7; i++) x *= 2 - p[0] * x;  // Newton: x = p^-1 mod 2^64
        inv = (uint64_t)0 - x;
        // one = 2^(64 NL) mod p, rr = one^2 via doubling
        uint64_t t[NL] = {0};
        t[0] = 1;
        for (int i = 0; i < 64 * NL; i++) dbl_mod(t);
        memcpy(one, t, sizeof(t));
        for (int i = 0; i < 64 * NL; i++) dbl_mod(t);
        memcpy(rr, t, sizeof(t));
    }
    bool geq_p(const uint64_t* a) const {
        for (int i = NL - 1; i >= 0; i--) {
            if (a[i] != p[i]) return a[i] > p[i];
        }
        return true;
    }
    void sub_p(uint64_t* a) const {
        uint64_t br = 0;
        for (int i = 0; i < NL; i++) {
            u128 d = (u128)a[i] - p[i] - br;
            a[i] = (uint64_t)d;
            br = (uint64_t)(d >> 64) & 1;
        }
    }
    void dbl_mod(uint64_t* a) const {
        uint64_t c = 0;
        for (int i = 0; i < NL; i++) {
            uint64_t n = (a[i] << 1) | c;
            c = a[i] >> 63;
            a[i] = n;
        }
        if (c || geq_p(a)) sub_p(a);
    }
    HF<NL> add(const HF<NL>& a, const HF<NL>& b) const {
        HF<NL> r;
        uint64_t c = 0;
        for (int i = 0; i < NL; i++) {
            u128 s = (u128)a.l[i] + b.l[i] + c;
            r.l[i] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        if (c || geq_p(r.l)) sub_p(r.l);
        return r;
    }
    HF<NL> sub(const HF<NL>& a, const HF<NL>& b) const {
        HF<NL> r;
        uint64_t br = 0;
        for (int i = 0; i < NL; i++) {
            u128 d = (u128)a.l[i] - b.l[i] - br;
            r.l[i] = (uint64_t)d;
            br = (uint64_t)(d >> 64) & 1;
        }
        if (br) {
            uint64_t c = 0;
            for (int i = 0; i < NL; i++) {
                u128 s = (u128)r.l[i] + p[i] + c;
                r.l[i] = (uint64_t)s;
                c = (uint64_t)(s >> 64);
            }
        }
        return r;
    }
    HF<NL> mul(const HF<NL>& a, const HF<NL>& b) const {
        uint64_t t[NL + 2] = {0};
        for (int i = 0; i < NL; i++) {
            uint64_t c = 0;
            for (int j = 0; j < NL; j++) {
                u128 x = (u128)a.l[j] * b.l[i] + t[j] + c;
                t[j] = (uint64_t)x;
                c = (uint64_t)(x >> 64);
            }
            u128 x = (u128)t[NL] + c;
            t[NL] = (uint64_t)x;
            t[NL + 1] = (uint64_t)(x >> 64);
            const uint64_t m = t[0] * inv;
            x = (u128)m * p[0] + t[0];
            c = (uint64_t)(x >> 64);
            for (int j = 1; j < NL; j++) {
                x = (u128)m * p[j] + t[j] + c;
                t[j - 1] = (uint64_t)x;
                c = (uint64_t)(x >> 64);
            }
            x = (u128)t[NL] + c;
            t[NL - 1] = (uint64_t)x;
            t[NL] = t[NL + 1] + (uint64_t)(x >> 64);
        }
        HF<NL> r;
        memcpy(r.l, t, sizeof(r.l));
        if (t[NL] || geq_p(r.l)) sub_p(r.l);
        return r;
    }
    HF<NL> zero() const { HF<NL> r; memset(r.l, 0, sizeof(r.l)); return r; }
    HF<NL> onem() const { HF<NL> r; memcpy(r.l, one, sizeof(one)); return r; }
    HF<NL> to_mont(const HF<NL>& a) const { HF<NL> r2; memcpy(r2.l, rr, sizeof(rr)); return mul(a, r2); }
    HF<NL> from_mont(const HF<NL>& a) const { HF<NL> u = zero(); u.l[0] = 1; return mul(a, u); }
    HF<NL> from_u64(uint64_t v) const { HF<NL> r = zero(); r.l[0] = v; return to_mont(r); }
    bool is_zero(const HF<NL>& a) const { uint64_t t = 0; for (int i = 0; i < NL; i++) t |= a.l[i]; return !t; }
    bool eq(const HF<NL>& a, const HF<NL>& b) const { return !memcmp(a.l, b.l, sizeof(a.l)); }
    HF<NL> neg(const HF<NL>& a) const { return sub(zero(), a); }
    HF<NL> pow(const HF<NL>& a, const uint64_t* e, int nl) const {
        HF<NL> r = onem();
        for (int i = nl * 64 - 1; i >= 0; i--) {
            r = mul(r, r);
            if ((e[i >> 6] >> (i & 63)) & 1) r = mul(r, a);
        }
        return r;
    }
    HF<NL> inverse(const HF<NL>& a) const {
        uint64_t e[NL];
        memcpy(e, p, sizeof(e));
        e[0] -= 2;  // p[0] >= 2 for both moduli? Fr: p[0] = 0xffffffff00000001 -> fine
        return pow(a, e, NL);
    }
    // canonical random element < p
    HF<NL> random(std::mt19937_64& g) const {
        HF<NL> r;
        int top = 63;
        while (!((p[NL - 1] >> top) & 1)) top--;
        do {
            for (int i = 0; i < NL; i++) r.l[i] = g();
            r.l[NL - 1] &= (top == 63) ? ~0ull : ((1ull << (top + 1)) - 1);
        } while (geq_p(r.l));
        return r;
    }
};

typedef HF<4> Fr;
typedef HF<6> Fp;

static const uint64_t FR_MOD64[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull, 0x73eda753299d7d48ull};
static const uint64_t FP_MOD64[6] = {0xb9feffffffffaaabull, 0x1eabfffeb153ffffull, 0x6730d2a0f6b0f624ull,
                                     0x64774b84f38512bfull, 0x4b1ba7b6434bacd7ull, 0x1a0111ea397fe69aull};

struct HostCurve {
    HostField<4> fr;
    HostField<6> fp;
    HostCurve() { fr.init(FR_MOD64); fp.init(FP_MOD64); }
};
extern HostCurve H;

// The coordinate fields of G1 (Fp) and G2 (Fp2 = Fp[u] / (u^2 + 1), blst_fp2's layout),
// overloaded so that the curve code below serves both.
struct HFp2 { Fp c0, c1; };

inline Fp f_add(const Fp& a, const Fp& b) { return H.fp.add(a, b); }
inline Fp f_sub(const Fp& a, const Fp& b) { return H.fp.sub(a, b); }
inline Fp f_mul(const Fp& a, const Fp& b) { return H.fp.mul(a, b); }
inline Fp f_inv(const Fp& a) { return H.fp.inverse(a); }
inline bool f_is_zero(const Fp& a) { return H.fp.is_zero(a); }
inline bool f_eq(const Fp& a, const Fp& b) { return H.fp.eq(a, b); }
inline void f_set(Fp& r, uint64_t v) { r = v == 0 ? H.fp.zero() : v == 1 ? H.fp.onem() : H.fp.from_u64(v); }

inline HFp2 f_add(const HFp2& a, const HFp2& b) { return {f_add(a.c0, b.c0), f_add(a.c1, b.c1)}; }
inline HFp2 f_sub(const HFp2& a, const HFp2& b) { return {f_sub(a.c0, b.c0), f_sub(a.c1, b.c1)}; }
inline HFp2 f_mul(const HFp2& a, const HFp2& b) {
    const Fp t0 = f_mul(a.c0, b.c0), t1 = f_mul(a.c1, b.c1);
    return {f_sub(t0, t1), f_sub(f_sub(f_mul(f_add(a.c0, a.c1), f_add(b.c0, b.c1)), t0), t1)};
}
inline HFp2 f_inv(const HFp2& a) {
    const Fp t = f_inv(f_add(f_mul(a.c0, a.c0), f_mul(a.c1, a.c1)));
    return {f_mul(a.c0, t), f_sub(H.fp.zero(), f_mul(a.c1, t))};
}
inline bool f_is_zero(const HFp2& a) { return f_is_zero(a.c0) && f_is_zero(a.c1); }
inline bool f_eq(const HFp2& a, const HFp2& b) { return f_eq(a.c0, b.c0) && f_eq(a.c1, b.c1); }
inline void f_set(HFp2& r, uint64_t v) { f_set(r.c0, v); r.c1 = H.fp.zero(); }

template <class T> T f_small(uint64_t v) { T r; f_set(r, v); return r; }
// b of y^2 = x^3 + b: 4 in G1, 4 (1 + u) in G2
inline Fp f_curve_b(const Fp&) { return f_small<Fp>(4); }
inline HFp2 f_curve_b(const HFp2&) { return {f_small<Fp>(4), f_small<Fp>(4)}; }

// Points on the host: affine {x, y} (infinity = 0, 0) and Jacobian (infinity: z = 0), the
// layouts of blst_p1_affine / blst_p1 (T = Fp) and blst_p2_affine / blst_p2 (T = HFp2).
template <class T> struct HAffT { T x, y; };
template <class T> struct HJacT { T x, y, z; };
typedef HAffT<Fp> HAff;
typedef HJacT<Fp> HJac;
typedef HAffT<HFp2> HAff2;
typedef HJacT<HFp2> HJac2;

template <class T> bool h_inf(const HAffT<T>& a) { return f_is_zero(a.x) && f_is_zero(a.y); }
template <class T = Fp> HJacT<T> h_jac_inf() {
    HJacT<T> r;
    r.x = f_small<T>(1); r.y = f_small<T>(1); r.z = f_small<T>(0);
    return r;
}
template <class T> HJacT<T> h_from_aff(const HAffT<T>& a) {
    if (h_inf(a)) return h_jac_inf<T>();
    HJacT<T> r; r.x = a.x; r.y = a.y; r.z = f_small<T>(1); return r;
}
template <class T> HJacT<T> h_dbl(const HJacT<T>& p) {
    if (f_is_zero(p.z)) return p;
    T A = f_mul(p.x, p.x), B = f_mul(p.y, p.y), C = f_mul(B, B);
    T t = f_add(p.x, B);
    T D = f_sub(f_sub(f_mul(t, t), A), C);
    D = f_add(D, D);
    T E = f_add(f_add(A, A), A), Fq = f_mul(E, E);
    HJacT<T> r;
    r.x = f_sub(Fq, f_add(D, D));
    T c8 = f_add(C, C); c8 = f_add(c8, c8); c8 = f_add(c8, c8);
    r.y = f_sub(f_mul(E, f_sub(D, r.x)), c8);
    T yz = f_mul(p.y, p.z);
    r.z = f_add(yz, yz);
    return r;
}
template <class T> HJacT<T> h_add(const HJacT<T>& p, const HJacT<T>& q) {
    if (f_is_zero(p.z)) return q;
    if (f_is_zero(q.z)) return p;
    T z1z1 = f_mul(p.z, p.z), z2z2 = f_mul(q.z, q.z);
    T u1 = f_mul(p.x, z2z2), u2 = f_mul(q.x, z1z1);
    T s1 = f_mul(f_mul(p.y, q.z), z2z2), s2 = f_mul(f_mul(q.y, p.z), z1z1);
    T h = f_sub(u2, u1), rr = f_sub(s2, s1);
    if (f_is_zero(h)) return f_is_zero(rr) ? h_dbl(p) : h_jac_inf<T>();
    T hh = f_mul(h, h), hhh = f_mul(h, hh), v = f_mul(u1, hh);
    HJacT<T> r;
    r.x = f_sub(f_sub(f_mul(rr, rr), hhh), f_add(v, v));
    r.y = f_sub(f_mul(rr, f_sub(v, r.x)), f_mul(s1, hhh));
    r.z = f_mul(f_mul(p.z, q.z), h);
    return r;
}
template <class T> HAffT<T> h_to_aff(const HJacT<T>& p) {
    HAffT<T> a;
    if (f_is_zero(p.z)) { a.x = f_small<T>(0); a.y = f_small<T>(0); return a; }
    T zi = f_inv(p.z), zi2 = f_mul(zi, zi);
    a.x = f_mul(p.x, zi2);
    a.y = f_mul(p.y, f_mul(zi2, zi));
    return a;
}
template <class T> bool h_on_curve(const HAffT<T>& a) {
    if (h_inf(a)) return true;
    T y2 = f_mul(a.y, a.y), x3 = f_mul(f_mul(a.x, a.x), a.x);
    return f_eq(y2, f_add(x3, f_curve_b(a.x)));
}
template <class T> bool h_aff_eq(const HAffT<T>& a, const HAffT<T>& b) { return f_eq(a.x, b.x) && f_eq(a.y, b.y); }
template <class T> HAffT<T> h_neg(HAffT<T> a) {
    if (!h_inf(a)) a.y = f_sub(f_small<T>(0), a.y);
    return a;
}

inline void parallel_for(size_t n, const std::function<void(size_t, size_t)>& f) {
    unsigned nt = std::thread::hardware_concurrency();
    if (nt == 0) nt = 1;
    if (nt > 32) nt = 32;
    if (n < 1024) nt = 1;
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++) {
        size_t a = n * t / nt, b = n * (t + 1) / nt;
        th.emplace_back([=, &f]() { f(a, b); });
    }
    for (auto& x : th) x.join();
}

// sum s_i * P_i, s canonical (Fr limbs), by bit planes: 255 doublings + one add per set bit.
template <class T> HJacT<T> h_msm_of(const std::vector<Fr>& s, const std::vector<HAffT<T>>& P) {
    const size_t n = s.size();
    unsigned nt = std::thread::hardware_concurrency();
    if (nt == 0) nt = 1;
    if (nt > 32) nt = 32;
    std::vector<HJacT<T>> part(nt, h_jac_inf<T>());
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++) {
        th.emplace_back([&, t]() {
            size_t a = n * t / nt, b = n * (t + 1) / nt;
            HJacT<T> acc = h_jac_inf<T>();
            for (int bit = 254; bit >= 0; bit--) {
                acc = h_dbl(acc);
                for (size_t i = a; i < b; i++)
                    if ((s[i].l[bit >> 6] >> (bit & 63)) & 1) acc = h_add(acc, h_from_aff(P[i]));
            }
            part[t] = acc;
        });
    }
    for (auto& x : th) x.join();
    HJacT<T> r = h_jac_inf<T>();
    for (auto& p : part) r = h_add(r, p);
    return r;
}
inline HJac h_msm(const std::vector<Fr>& s, const std::vector<HAff>& P) { return h_msm_of(s, P); }
inline HJac2 h_msm(const std::vector<Fr>& s, const std::vector<HAff2>& P) { return h_msm_of(s, P); }
