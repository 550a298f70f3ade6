// Small helpers shared by the kernels.
#pragma once
#include <stdint.h>
#include "../ff/ptx.cuh"

#ifndef PT_EMU
#define PT_HD __host__ __device__ __forceinline__
#define PT_DYN_SMEM(type, name)                       \
    extern __shared__ __align__(16) uint4 pt_smem_[]; \
    type* name = (type*)pt_smem_
#ifdef __CUDA_ARCH__
#define PT_NI __device__ __noinline__
#else
// nvcc's host pass keeps a stub of every device function: local, so that the harness's
// translation units may each include the same helpers
#define PT_NI static __device__ __noinline__
#endif
#else
#define PT_HD inline
// inline: the harness's translation units may each include the same out-of-line helper
#define PT_NI inline __attribute__((noinline))
#endif

// 16-byte vector copies of field elements and points (all are multiples of 16 bytes and
// blst's structs are 16-byte aligned when allocated by the driver).
template <class T>
PT_HD T pt_load(const T* p) {
    static_assert(sizeof(T) % 16 == 0, "vector load");
    T r;
    const uint4* s = (const uint4*)p;
    uint4* d = (uint4*)&r;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = s[i];
    return r;
}
template <class T>
PT_HD void pt_store(T* p, const T& v) {
    const uint4* s = (const uint4*)&v;
    uint4* d = (uint4*)p;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = s[i];
}

PT_FI uint32_t pt_bitrev(uint32_t x, uint32_t bits) { return bits ? __brev(x) >> (32 - bits) : 0; }
