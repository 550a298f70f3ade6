// Pass plan of the NTT: n = 2^k is split into P = ceil(k/9) digits of b_0 >= b_1 >= ...
// bits (k=24: 8+8+8, k=27: 9+9+9, k=20: 7+7+6). Pass p runs 2^b_p-point DFTs; every
// block holds E = min(2^11, n) elements: T = E / 2^b_p DFTs ("column lines") at once.
// The host needs the same numbers for the launch shapes: see cuda/README.md.
#pragma once
#include "../util/common.cuh"

#define PT_NTT_THREADS 256
#define PT_NTT_LOG_E 11
#define PT_NTT_MAX_PASSES 4
#define PT_NTT_MAX_LOG 27

struct pt_ntt_plan {
    uint32_t passes;
    uint32_t b[PT_NTT_MAX_PASSES];
    uint32_t log_e;  // log2 of elements per block
};

PT_HD pt_ntt_plan pt_make_ntt_plan(uint32_t k) {
    pt_ntt_plan pl;
    pl.passes = k <= 9 ? 1 : (k + 8) / 9;
    const uint32_t base = k / pl.passes, rem = k % pl.passes;
    for (uint32_t p = 0; p < PT_NTT_MAX_PASSES; p++) pl.b[p] = p < pl.passes ? base + (p < rem ? 1 : 0) : 0;
    pl.log_e = k < PT_NTT_LOG_E ? k : PT_NTT_LOG_E;
    return pl;
}

// dynamic shared memory of one pt_ntt_pass block: E elements + 2^(b-1) <= 256 twiddles
PT_HD uint32_t pt_ntt_smem_bytes(uint32_t k) {
    const pt_ntt_plan pl = pt_make_ntt_plan(k);
    return (1u << pl.log_e) * 32u + 256u * 32u;
}

// pl.b[q] with no run-time index into the array (one would put the plan in local memory)
PT_HD uint32_t pt_ntt_bits(const pt_ntt_plan& pl, uint32_t q) {
    uint32_t r = 0;
#pragma unroll
    for (uint32_t p = 0; p < PT_NTT_MAX_PASSES; p++) r = p == q ? pl.b[p] : r;
    return r;
}
