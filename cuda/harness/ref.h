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

// G1 on the host: affine {x, y} (infinity = 0,0) and Jacobian.
struct HAff { Fp x, y; };
struct HJac { Fp x, y, z; };

inline bool h_inf(const HAff& a) { return H.fp.is_zero(a.x) && H.fp.is_zero(a.y); }
inline HJac h_jac_inf() { HJac r; r.x = H.fp.onem(); r.y = H.fp.onem(); r.z = H.fp.zero(); return r; }
inline HJac h_from_aff(const HAff& a) {
    if (h_inf(a)) return h_jac_inf();
    HJac r; r.x = a.x; r.y = a.y; r.z = H.fp.onem(); return r;
}
inline HJac h_dbl(const HJac& p) {
    const auto& F = H.fp;
    if (F.is_zero(p.z)) return p;
    Fp A = F.mul(p.x, p.x), B = F.mul(p.y, p.y), C = F.mul(B, B);
    Fp t = F.add(p.x, B);
    Fp D = F.sub(F.sub(F.mul(t, t), A), C);
    D = F.add(D, D);
    Fp E = F.add(F.add(A, A), A), Fq = F.mul(E, E);
    HJac r;
    r.x = F.sub(Fq, F.add(D, D));
    Fp c8 = F.add(C, C); c8 = F.add(c8, c8); c8 = F.add(c8, c8);
    r.y = F.sub(F.mul(E, F.sub(D, r.x)), c8);
    Fp yz = F.mul(p.y, p.z);
    r.z = F.add(yz, yz);
    return r;
}
inline HJac h_add(const HJac& p, const HJac& q) {
    const auto& F = H.fp;
    if (F.is_zero(p.z)) return q;
    if (F.is_zero(q.z)) return p;
    Fp z1z1 = F.mul(p.z, p.z), z2z2 = F.mul(q.z, q.z);
    Fp u1 = F.mul(p.x, z2z2), u2 = F.mul(q.x, z1z1);
    Fp s1 = F.mul(F.mul(p.y, q.z), z2z2), s2 = F.mul(F.mul(q.y, p.z), z1z1);
    Fp h = F.sub(u2, u1), rr = F.sub(s2, s1);
    if (F.is_zero(h)) return F.is_zero(rr) ? h_dbl(p) : h_jac_inf();
    Fp hh = F.mul(h, h), hhh = F.mul(h, hh), v = F.mul(u1, hh);
    HJac r;
    r.x = F.sub(F.sub(F.mul(rr, rr), hhh), F.add(v, v));
    r.y = F.sub(F.mul(rr, F.sub(v, r.x)), F.mul(s1, hhh));
    r.z = F.mul(F.mul(p.z, q.z), h);
    return r;
}
inline HAff h_to_aff(const HJac& p) {
    const auto& F = H.fp;
    HAff a;
    if (F.is_zero(p.z)) { a.x = F.zero(); a.y = F.zero(); return a; }
    Fp zi = F.inverse(p.z), zi2 = F.mul(zi, zi);
    a.x = F.mul(p.x, zi2);
    a.y = F.mul(p.y, F.mul(zi2, zi));
    return a;
}
inline bool h_on_curve(const HAff& a) {
    const auto& F = H.fp;
    if (h_inf(a)) return true;
    Fp y2 = F.mul(a.y, a.y), x3 = F.mul(F.mul(a.x, a.x), a.x);
    return F.eq(y2, F.add(x3, F.from_u64(4)));
}
inline bool h_aff_eq(const HAff& a, const HAff& b) { return H.fp.eq(a.x, b.x) && H.fp.eq(a.y, b.y); }

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
inline HJac h_msm(const std::vector<Fr>& s, const std::vector<HAff>& P) {
    const size_t n = s.size();
    unsigned nt = std::thread::hardware_concurrency();
    if (nt == 0) nt = 1;
    if (nt > 32) nt = 32;
    std::vector<HJac> part(nt, h_jac_inf());
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++) {
        th.emplace_back([&, t]() {
            size_t a = n * t / nt, b = n * (t + 1) / nt;
            HJac acc = h_jac_inf();
            for (int bit = 254; bit >= 0; bit--) {
                acc = h_dbl(acc);
                for (size_t i = a; i < b; i++)
                    if ((s[i].l[bit >> 6] >> (bit & 63)) & 1) acc = h_add(acc, h_from_aff(P[i]));
            }
            part[t] = acc;
        });
    }
    for (auto& x : th) x.join();
    HJac r = h_jac_inf();
    for (auto& p : part) r = h_add(r, p);
    return r;
}
