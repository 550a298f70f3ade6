// Montgomery arithmetic over a prime with N 32-bit limbs (N even), little-endian.
//
// Multiplication is CIOS with the accumulator split into an "even" array E (products
// a[2k]*b_i, lo and hi in limbs 2k, 2k+1) and an "odd" array O (products a[2k+1]*b_i,
// offset by one limb), so that the lo and hi halves of every 32x32 product land in an
// aligned register pair and ptxas can emit one IMAD.WIDE.U32(.X) instead of IMAD plus the
// half-rate IMAD.HI. The running value is T = E + 2^32*O. After the reduction step E[0]
// is zero; dividing by 2^32 makes the old O the new E (plus E[1], added at limb 0 with its
// carry fed into the next O chain, which starts at limb 1) and E shifted down by two limbs
// the new O, so pairs stay aligned.
//
// ptxas (13.0, sm_90) fuses the mad.lo.cc/madc.hi.cc pairs into IMAD.WIDE.U32(.X) in the
// default madc chains, except Fr's m*p rows when m0 is an immediate (see pt_fr_params).
// Variants kept for the harness: explicit 64-bit products plus carry adds for the a*b_i rows
// (P::AB_WIDE) or the m*p rows (WIDE_REDC), and Fr's limbs p[0] = 1, p[1] = 2^32 - 1 as
// adds instead of products (FR_TRICK, in either form).
//
// Bounds (a, b < p): T < a + p < 2p before each shift, O < 2p < 2^(32N) never carries out,
// E < 2^(32N+32) needs one extra limb. Inputs must be fully reduced; outputs are.
#pragma once
#include "ptx.cuh"


template <class P>
struct mont_t {
    static constexpr int N = P::N;
    uint32_t v[N];

    PT_FI static mont_t zero() { mont_t r; for (int i = 0; i < N; i++) r.v[i] = 0; return r; }
    PT_FI static mont_t one()  { mont_t r; for (int i = 0; i < N; i++) r.v[i] = P::one(i); return r; }

    PT_FI bool is_zero() const {
        uint32_t t = v[0];
        for (int i = 1; i < N; i++) t |= v[i];
        return t == 0;
    }
    PT_FI bool operator==(const mont_t& b) const {
        uint32_t t = 0;
        for (int i = 0; i < N; i++) t |= v[i] ^ b.v[i];
        return t == 0;
    }
    PT_FI bool operator!=(const mont_t& b) const { return !(*this == b); }

    // r = a + b mod p
    PT_FI friend mont_t operator+(const mont_t& a, const mont_t& b) {
        mont_t s, t;
        s.v[0] = add_cc(a.v[0], b.v[0]);
        for (int i = 1; i < N - 1; i++) s.v[i] = addc_cc(a.v[i], b.v[i]);
        s.v[N - 1] = addc(a.v[N - 1], b.v[N - 1]);  // a + b < 2p < 2^(32N)
        t.v[0] = sub_cc(s.v[0], P::mod(0));
        for (int i = 1; i < N; i++) t.v[i] = subc_cc(s.v[i], P::mod(i));
        uint32_t borrow = subc(0, 0);  // 0xffffffff if s < p
        for (int i = 0; i < N; i++) s.v[i] = borrow ? s.v[i] : t.v[i];
        return s;
    }

    // r = a - b mod p
    PT_FI friend mont_t operator-(const mont_t& a, const mont_t& b) {
        mont_t s, t;
        s.v[0] = sub_cc(a.v[0], b.v[0]);
        for (int i = 1; i < N; i++) s.v[i] = subc_cc(a.v[i], b.v[i]);
        uint32_t borrow = subc(0, 0);
        uint32_t m[N];
        for (int i = 0; i < N; i++) m[i] = P::mod(i) & borrow;
        t.v[0] = add_cc(s.v[0], m[0]);
        for (int i = 1; i < N - 1; i++) t.v[i] = addc_cc(s.v[i], m[i]);
        t.v[N - 1] = addc(s.v[N - 1], m[N - 1]);
        return t;
    }

    PT_FI mont_t neg() const { return zero() - *this; }
    PT_FI mont_t dbl() const { return *this + *this; }

    PT_FI friend mont_t operator*(const mont_t& a, const mont_t& b) {
        return P::CALL ? mul_call(a, b) : mul(a, b);
    }
#ifndef PT_EMU
    __device__ __noinline__ static mont_t mul_call(const mont_t& a, const mont_t& b) { return mul(a, b); }
#else
    static mont_t mul_call(const mont_t& a, const mont_t& b) { return mul(a, b); }
#endif

    PT_FI static mont_t mul(const mont_t& a, const mont_t& b) {
        uint32_t e[N + 1], o[N], f = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const uint32_t bi = b.v[i];
            if (i == 0) {
                for (int k = 0; k < N; k += 2) mul_wide(a.v[k], bi, e[k], e[k + 1]);
                e[N] = 0;
                for (int k = 0; k < N; k += 2) mul_wide(a.v[k + 1], bi, o[k], o[k + 1]);
            } else {
                // fold the previous E[1] in at limb 0; its carry enters the O chain, which
                // starts at limb 1
                e[0] = add_cc(e[0], f);
                if (P::AB_WIDE) {
                    // ptxas splits register x register mad.lo/madc.hi pairs into IMAD plus
                    // half-rate IMAD.HI; an explicit 64-bit product plus two carry adds
                    // (ALU pipe) keeps the multiplier at one IMAD.WIDE per product.
                    uint32_t pl[N], ph[N];
                    for (int k = 0; k < N; k++) mul_wide(a.v[k], bi, pl[k], ph[k]);
                    for (int k = 0; k < N - 2; k += 2) { o[k] = addc_cc(o[k], pl[k + 1]); o[k + 1] = addc_cc(o[k + 1], ph[k + 1]); }
                    o[N - 2] = addc_cc(o[N - 2], pl[N - 1]);
                    o[N - 1] = addc(o[N - 1], ph[N - 1]);
                    e[0] = add_cc(e[0], pl[0]);
                    e[1] = addc_cc(e[1], ph[0]);
                    for (int k = 2; k < N; k += 2) { e[k] = addc_cc(e[k], pl[k]); e[k + 1] = addc_cc(e[k + 1], ph[k]); }
                    e[N] = addc(0, 0);
                } else {
                    for (int k = 0; k < N - 2; k += 2) { o[k] = madc_lo_cc(a.v[k + 1], bi, o[k]); o[k + 1] = madc_hi_cc(a.v[k + 1], bi, o[k + 1]); }
                    o[N - 2] = madc_lo_cc(a.v[N - 1], bi, o[N - 2]);
                    o[N - 1] = madc_hi(a.v[N - 1], bi, o[N - 1]);
                    e[0] = mad_lo_cc(a.v[0], bi, e[0]);
                    e[1] = madc_hi_cc(a.v[0], bi, e[1]);
                    for (int k = 2; k < N; k += 2) { e[k] = madc_lo_cc(a.v[k], bi, e[k]); e[k + 1] = madc_hi_cc(a.v[k], bi, e[k + 1]); }
                    e[N] = addc(0, 0);
                }
            }
            // reduction: make T divisible by 2^32
            const uint32_t m = mul_lo(e[0], P::m0());
            if (P::FR_TRICK && P::WIDE_REDC) {
                // Fr: p[0] = 1, p[1] = 2^32 - 1 and m0 = -1, so m*p[0] = m and
                // m*p[1] = (m - [m != 0]) * 2^32 + (-m mod 2^32): two products fewer per row.
                uint32_t ql[N], qh[N];
                for (int k = 2; k < N; k++) mul_wide(m, P::mod(k), ql[k], qh[k]);
                e[0] = add_cc(e[0], m);
                e[1] = addc_cc(e[1], 0);
                for (int k = 2; k < N; k += 2) { e[k] = addc_cc(e[k], ql[k]); e[k + 1] = addc_cc(e[k + 1], qh[k]); }
                e[N] = addc(e[N], 0);
                o[0] = add_cc(o[0], 0u - m);
                o[1] = addc_cc(o[1], m - (m != 0));
                for (int k = 2; k < N - 2; k += 2) { o[k] = addc_cc(o[k], ql[k + 1]); o[k + 1] = addc_cc(o[k + 1], qh[k + 1]); }
                o[N - 2] = addc_cc(o[N - 2], ql[N - 1]);
                o[N - 1] = addc(o[N - 1], qh[N - 1]);
            } else if (P::FR_TRICK) {
                // the same identities in madc chains: the two special limbs become an add and
                // an add of (m - [m != 0]); the other limbs keep their mad pairs
                e[0] = add_cc(e[0], m);
                e[1] = addc_cc(e[1], 0);
                for (int k = 2; k < N; k += 2) { e[k] = madc_lo_cc(m, P::mod(k), e[k]); e[k + 1] = madc_hi_cc(m, P::mod(k), e[k + 1]); }
                e[N] = addc(e[N], 0);
                o[0] = add_cc(o[0], 0u - m);
                o[1] = addc_cc(o[1], m - (m != 0));
                for (int k = 2; k < N - 2; k += 2) { o[k] = madc_lo_cc(m, P::mod(k + 1), o[k]); o[k + 1] = madc_hi_cc(m, P::mod(k + 1), o[k + 1]); }
                o[N - 2] = madc_lo_cc(m, P::mod(N - 1), o[N - 2]);
                o[N - 1] = madc_hi(m, P::mod(N - 1), o[N - 1]);
            } else if (P::WIDE_REDC) {
                uint32_t ql[N], qh[N];
                for (int k = 0; k < N; k++) mul_wide(m, P::mod(k), ql[k], qh[k]);
                e[0] = add_cc(e[0], ql[0]);
                e[1] = addc_cc(e[1], qh[0]);
                for (int k = 2; k < N; k += 2) { e[k] = addc_cc(e[k], ql[k]); e[k + 1] = addc_cc(e[k + 1], qh[k]); }
                e[N] = addc(e[N], 0);
                o[0] = add_cc(o[0], ql[1]);
                o[1] = addc_cc(o[1], qh[1]);
                for (int k = 2; k < N - 2; k += 2) { o[k] = addc_cc(o[k], ql[k + 1]); o[k + 1] = addc_cc(o[k + 1], qh[k + 1]); }
                o[N - 2] = addc_cc(o[N - 2], ql[N - 1]);
                o[N - 1] = addc(o[N - 1], qh[N - 1]);
            } else {
                e[0] = mad_lo_cc(m, P::mod(0), e[0]);
                e[1] = madc_hi_cc(m, P::mod(0), e[1]);
                for (int k = 2; k < N; k += 2) { e[k] = madc_lo_cc(m, P::mod(k), e[k]); e[k + 1] = madc_hi_cc(m, P::mod(k), e[k + 1]); }
                e[N] = addc(e[N], 0);
                o[0] = mad_lo_cc(m, P::mod(1), o[0]);
                o[1] = madc_hi_cc(m, P::mod(1), o[1]);
                for (int k = 2; k < N - 2; k += 2) { o[k] = madc_lo_cc(m, P::mod(k + 1), o[k]); o[k + 1] = madc_hi_cc(m, P::mod(k + 1), o[k + 1]); }
                o[N - 2] = madc_lo_cc(m, P::mod(N - 1), o[N - 2]);
                o[N - 1] = madc_hi(m, P::mod(N - 1), o[N - 1]);
            }
            if (i == N - 1) break;
            // divide by 2^32: E' = O (+ e[1] folded next round), O' = E >> 64
            f = e[1];
            uint32_t t[N];
            for (int k = 0; k < N - 1; k++) t[k] = e[k + 2];
            t[N - 1] = 0;
            for (int k = 0; k < N; k++) { e[k] = o[k]; o[k] = t[k]; }
        }
        // T / 2^32 = O + (E >> 32); T < 2p
        mont_t r, s;
        r.v[0] = add_cc(o[0], e[1]);
        for (int k = 1; k < N - 1; k++) r.v[k] = addc_cc(o[k], e[k + 1]);
        r.v[N - 1] = addc(o[N - 1], e[N]);
        s.v[0] = sub_cc(r.v[0], P::mod(0));
        for (int k = 1; k < N; k++) s.v[k] = subc_cc(r.v[k], P::mod(k));
        uint32_t borrow = subc(0, 0);
        for (int k = 0; k < N; k++) r.v[k] = borrow ? r.v[k] : s.v[k];
        return r;
    }

    PT_FI mont_t sqr() const { return *this * *this; }

    // canonical integer -> Montgomery form (input must be < p)
    PT_FI static mont_t to_mont(const mont_t& a) {
        mont_t rr;
        for (int i = 0; i < N; i++) rr.v[i] = P::rr(i);
        return mul(a, rr);
    }
    // Montgomery form -> canonical integer
    PT_FI mont_t from_mont() const {
        mont_t u = zero();
        u.v[0] = 1;
        return mul(*this, u);
    }

    // a^e, e given as nw little-endian 32-bit words (square-and-multiply, MSB first).
    // Setup-time only: not constant time, not fast.
    PT_FI mont_t pow(const uint32_t* e, int nw) const {
        mont_t r = one();
        for (int i = nw * 32 - 1; i >= 0; i--) {
            r = r.sqr();
            if ((e[i >> 5] >> (i & 31)) & 1) r = r * *this;
        }
        return r;
    }
    PT_FI mont_t pow_u32(uint32_t e) const { return pow(&e, 1); }
    // a^(p-2) = 1/a for a != 0 (0 maps to 0)
    PT_FI mont_t inverse() const {
        uint32_t e[N];
        e[0] = sub_cc(P::mod(0), 2);
        for (int i = 1; i < N; i++) e[i] = subc_cc(P::mod(i), 0);
        return pow(e, N);
    }
};
