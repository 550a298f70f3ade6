// BLS12-381 field parameters (blst layout: little-endian limbs, Montgomery form).
//   Fr: r = 0x73eda753...00000001, R = 2^256 mod r, 8 x 32-bit limbs
//   Fp: p = 0x1a0111ea...ffffaaab, R = 2^384 mod p, 12 x 32-bit limbs
#pragma once
#include "mont.cuh"

#ifndef PT_EMU
#define PT_CONST static __device__ __constant__ const
#else
#define PT_CONST static const
#endif

PT_CONST uint32_t PT_FR_MOD[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402, 0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
PT_CONST uint32_t PT_FR_RR[8]  = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb, 0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};
PT_CONST uint32_t PT_FR_ONE[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa, 0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};

PT_CONST uint32_t PT_FP_MOD[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                                   0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
PT_CONST uint32_t PT_FP_RR[12]  = {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6, 0x4c95b6d5, 0x8de5476c,
                                   0x939d83c0, 0x67eb88a9, 0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5};
PT_CONST uint32_t PT_FP_ONE[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                                   0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};

// Fr's m0 = -r^-1 mod 2^32 = 0xffffffff, read from constant memory rather than used as an
// immediate: given the immediate, ptxas turns m = e[0] * m0 into a negation and then splits
// every m*p product of the reduction row into IMAD + half-rate IMAD.HI; with m from an IMAD
// they fuse into IMAD.WIDE.U32.X (SASS counts in docs/cuda-notes.md). volatile: so that no
// compiler folds the value back into an immediate.
#ifndef PT_EMU
static __device__ __constant__ volatile uint32_t PT_FR_M0_OPAQUE = 0xffffffffu;
#else
static volatile uint32_t PT_FR_M0_OPAQUE = 0xffffffffu;
#endif
#ifndef PT_FR_M0_LOAD
#define PT_FR_M0_LOAD 1
#endif

struct pt_fr_params {
    static constexpr int N = 8;
    // madc chains with m0 loaded: 5.92e10 Fr mul/s on the H200, against 5.24e10 with the
    // immediate m0 and 4.0-4.5e10 for the wide-product variants (docs/cuda-notes.md).
    // FR_TRICK: limbs p[0] = 1 and p[1] = 2^32 - 1 as adds (the configuration whose NTTs
    // were timed; without it the multiply alone measured the same, 5.95e10)
#ifndef PT_FR_TRICK
#define PT_FR_TRICK 1
#endif
    static constexpr bool AB_WIDE = false, WIDE_REDC = false, FR_TRICK = PT_FR_TRICK;
    static constexpr bool CALL = false;  // inline everywhere (NTT kernels are small)
    PT_FI static uint32_t mod(int i) { return PT_FR_MOD[i]; }
    PT_FI static uint32_t rr(int i) { return PT_FR_RR[i]; }
    PT_FI static uint32_t one(int i) { return PT_FR_ONE[i]; }
    static constexpr bool M0_LOAD = PT_FR_M0_LOAD;
    PT_FI static uint32_t m0() { return M0_LOAD ? PT_FR_M0_OPAQUE : 0xffffffffu; }
};
struct pt_fp_params {
    static constexpr int N = 12;
    static constexpr bool AB_WIDE = false, WIDE_REDC = false, FR_TRICK = false;
#ifndef PT_FP_CALL
#define PT_FP_CALL 0
#endif
    // inline: with madc chains the bucket kernel ran 1.25x faster inline than with one
    // out-of-line multiplier (the call-based build is kept for experiments: PT_FP_CALL=1)
    static constexpr bool CALL = PT_FP_CALL;
    PT_FI static uint32_t mod(int i) { return PT_FP_MOD[i]; }
    PT_FI static uint32_t rr(int i) { return PT_FP_RR[i]; }
    PT_FI static uint32_t one(int i) { return PT_FP_ONE[i]; }
    PT_FI static uint32_t m0() { return 0xfffcfffdu; }
};

typedef mont_t<pt_fr_params> fr_t;
typedef mont_t<pt_fp_params> fp_t;
