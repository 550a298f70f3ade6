// Radix-2^b NTT passes over Fr, natural order in and out, no bit-reversal pass.
//
// Four-step recursion: with n = 2^k and the pass digits b_0, b_1, ... (plan.cuh), pass p
// views each row of R_p = 2^(k - b_0 - ... - b_(p-1)) contiguous elements as s = R_p/2^b
// columns of 2^b elements at stride s; it runs a 2^b-point DFT down every column, multiplies
// output digit kd of column c by w_(R_p)^(c*kd) and stores it back in place, so that the
// next pass works on contiguous rows of length s. The last pass (s = 1) writes element
// pos = [d_0][d_1]...[d_(P-1)] (d_p = output digit of pass p, d_0 on top) to
// X[d_0 + 2^b_0 d_1 + 2^(b_0+b_1) d_2 + ...], the natural index; it takes rows whose top
// digit d_0 varies fastest so those writes are contiguous runs.
//
// Inside a block: the T columns' elements sit in shared memory as two arrays of 16-byte
// halves (bank-conflict free), a radix-2 decimation-in-frequency network runs over them
// (output in bit-reversed order, undone when reading out), twiddles w_(2^b)^j come from a
// small shared table. Inverse transforms use w^-1 throughout; scalings are folded into the
// first pass's loads (pre[pos]) and the last pass's stores (post[idx], *post_c), and the
// last pass can also emit ea[idx]*eb[idx] - X[idx] (the Groth16 H numerator).
#pragma once
#include "../ff/bls12_381.cuh"
#include "plan.cuh"

struct pt_ntt_geom {
    uint32_t k, b, log_s, log_R, b0, passes, pass;
    PT_HD uint32_t pos(uint32_t L, uint32_t d) const {
        if (pass + 1 < passes) {
            const uint32_t rw = L >> log_s, c = L & ((1u << log_s) - 1);
            return (rw << log_R) + c + (d << log_s);
        }
        // last pass: rows of 2^b contiguous elements, top digit of the row index fastest
        uint32_t rr = L;
        if (passes > 1) {
            const uint32_t rest = k - b - b0;
            rr = ((L & ((1u << b0) - 1)) << rest) | (L >> b0);
        }
        return (rr << b) + d;
    }
};

PT_HD uint32_t pt_ntt_digit_reverse(uint32_t pos, const pt_ntt_plan& pl, uint32_t k) {
    uint32_t x = 0, in = k, out = 0;
#pragma unroll
    for (uint32_t q = 0; q < PT_NTT_MAX_PASSES; q++) {
        if (q >= pl.passes) break;
        in -= pl.b[q];
        x |= ((pos >> in) & ((1u << pl.b[q]) - 1)) << out;
        out += pl.b[q];
    }
    return x;
}

__device__ __forceinline__ fr_t pt_sm_get(const uint4* sm, uint32_t E, uint32_t e) {
    fr_t r;
    uint4* d = (uint4*)&r;
    d[0] = sm[e];
    d[1] = sm[E + e];
    return r;
}
__device__ __forceinline__ void pt_sm_put(uint4* sm, uint32_t E, uint32_t e, const fr_t& v) {
    const uint4* s = (const uint4*)&v;
    sm[e] = s[0];
    sm[E + e] = s[1];
}

// One pass of an n = 2^log_n NTT. grid = n / E blocks of PT_NTT_THREADS, dynamic shared
// memory pt_ntt_smem_bytes(log_n). omegas[x] = w_n^x for x < n (w_n = ROOT_OF_UNITY^(2^(32-log_n))).
// pre: only read by pass 0; post, post_c, ea, eb: only by the last pass; each may be null.
extern "C" __global__ void __launch_bounds__(PT_NTT_THREADS, 3)
pt_ntt_pass(const fr_t* in, fr_t* out, const fr_t* omegas, const fr_t* pre, const fr_t* post,
            const fr_t* post_c, const fr_t* ea, const fr_t* eb, uint32_t log_n, uint32_t pass,
            uint32_t inverse)
{
    PT_DYN_SMEM(uint4, sm);
    const pt_ntt_plan pl = pt_make_ntt_plan(log_n);
    const uint32_t k = log_n, n = 1u << k, nmask = n - 1;
    const uint32_t b = pt_ntt_bits(pl, pass);
    const uint32_t E = 1u << pl.log_e, log_T = pl.log_e - b, T = 1u << log_T;
    const bool last = pass + 1 == pl.passes;
    uint32_t before = 0;
#pragma unroll
    for (uint32_t q = 0; q < PT_NTT_MAX_PASSES; q++) before += q < pass ? pl.b[q] : 0;
    pt_ntt_geom g;
    g.k = k; g.b = b; g.log_R = k - before; g.log_s = g.log_R - b; g.b0 = pl.b[0];
    g.passes = pl.passes; g.pass = pass;
    uint4* tw = sm + 2 * E;  // 2^(b-1) twiddles, two halves of 256 each
    const uint32_t tid = threadIdx.x;

    for (uint32_t j = tid; j < (1u << (b - 1)); j += PT_NTT_THREADS) {
        uint32_t idx = j << (k - b);
        if (inverse) idx = (n - idx) & nmask;
        const fr_t w = pt_load(omegas + idx);
        tw[j] = ((const uint4*)&w)[0];
        tw[256 + j] = ((const uint4*)&w)[1];
    }
    const uint32_t L0 = blockIdx.x << log_T;
    for (uint32_t i = tid; i < E; i += PT_NTT_THREADS) {
        const uint32_t p = g.pos(L0 + (i & (T - 1)), i >> log_T);
        fr_t x = pt_load(in + p);
        if (pass == 0 && pre) x = x * pt_load(pre + p);
        pt_sm_put(sm, E, i, x);
    }
    __syncthreads();

    for (int lh = (int)b - 1; lh >= 0; lh--) {
        // butterfly q = (o, g, t), t fastest: all butterflies of one twiddle w^o are
        // consecutive, so the o = 0 ones (w = 1) skip the multiply in whole warps
        const uint32_t h = 1u << lh, log_g = b - 1 - lh;
        for (uint32_t q = tid; q < E / 2; q += PT_NTT_THREADS) {
            const uint32_t t = q & (T - 1), r = q >> log_T;
            const uint32_t gi = r & ((1u << log_g) - 1), o = r >> log_g;
            const uint32_t i0 = (gi << (lh + 1)) + o;
            const uint32_t e0 = (i0 << log_T) + t, e1 = e0 + (h << log_T);
            const fr_t u = pt_sm_get(sm, E, e0), v = pt_sm_get(sm, E, e1);
            pt_sm_put(sm, E, e0, u + v);
            fr_t w = u - v;
            if (o != 0) {
                const uint32_t ti = o << log_g;
                fr_t tww;
                ((uint4*)&tww)[0] = tw[ti];
                ((uint4*)&tww)[1] = tw[256 + ti];
                w = w * tww;
            }
            pt_sm_put(sm, E, e1, w);
        }
        __syncthreads();
    }

    const fr_t pc = (last && post_c) ? pt_load(post_c) : fr_t::one();
    for (uint32_t i = tid; i < E; i += PT_NTT_THREADS) {
        const uint32_t t = i & (T - 1), kd = i >> log_T;
        fr_t x = pt_sm_get(sm, E, (pt_bitrev(kd, b) << log_T) + t);
        const uint32_t L = L0 + t;
        const uint32_t p = g.pos(L, kd);
        if (!last) {
            const uint32_t c = L & ((1u << g.log_s) - 1);
            uint32_t idx = (c * kd) << (k - g.log_R);
            if (idx) {
                if (inverse) idx = n - idx;
                x = x * pt_load(omegas + idx);
            }
            pt_store(out + p, x);
        } else {
            const uint32_t xi = pt_ntt_digit_reverse(p, pl, k);
            if (ea) x = pt_load(ea + xi) * pt_load(eb + xi) - x;
            if (post) x = x * pt_load(post + xi);
            if (post_c) x = x * pc;
            pt_store(out + xi, x);
        }
    }
}
