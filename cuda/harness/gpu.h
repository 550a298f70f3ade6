// The harness's thin layer over the CUDA runtime, or over the host emulator (PT_EMU).
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <chrono>

#ifdef PT_EMU
#include "emu/cuda_emu.h"
typedef int cudaError_t;
#define cudaSuccess 0
#define cudaMemcpyHostToDevice 1
#define cudaMemcpyDeviceToHost 2
#define cudaMemcpyDeviceToDevice 3
#define cudaFuncAttributeMaxDynamicSharedMemorySize 0
inline const char* cudaGetErrorString(cudaError_t) { return "emu"; }
inline cudaError_t cudaMalloc(void** p, size_t n) { *p = aligned_alloc(256, (n + 255) & ~(size_t)255); return *p ? 0 : 1; }
inline cudaError_t cudaFree(void* p) { free(p); return 0; }
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, int) { memmove(d, s, n); return 0; }
inline cudaError_t cudaMemset(void* d, int v, size_t n) { memset(d, v, n); return 0; }
inline cudaError_t cudaDeviceSynchronize() { return 0; }
inline cudaError_t cudaGetLastError() { return 0; }
template <class F> inline cudaError_t cudaFuncSetAttribute(F, int, int) { return 0; }
#define PT_LAUNCH(k, g, b, smem, ...) pt_emu_launch(k, g, b, smem, __VA_ARGS__)
#else
#include <cuda_runtime.h>
#define PT_LAUNCH(k, g, b, smem, ...)                \
    do {                                             \
        k<<<(g), (b), (smem)>>>(__VA_ARGS__);        \
        ck(cudaGetLastError(), #k, __FILE__, __LINE__); \
    } while (0)
#endif

inline void ck(cudaError_t e, const char* what, const char* file, int line) {
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e), file, line, what);
        fflush(stdout);
        exit(2);
    }
}
#define CK(x) ck((x), #x, __FILE__, __LINE__)

template <class T>
T* dalloc(size_t count) {
    void* p = nullptr;
    CK(cudaMalloc(&p, count * sizeof(T) + 16));
    return (T*)p;
}
template <class T> void h2d(T* d, const T* h, size_t count) { CK(cudaMemcpy(d, h, count * sizeof(T), cudaMemcpyHostToDevice)); }
template <class T> void d2h(T* h, const T* d, size_t count) { CK(cudaMemcpy(h, d, count * sizeof(T), cudaMemcpyDeviceToHost)); }
template <class T> void d2d(T* d, const T* s, size_t count) { CK(cudaMemcpy(d, s, count * sizeof(T), cudaMemcpyDeviceToDevice)); }
inline void dsync() { CK(cudaDeviceSynchronize()); }

// Device-side timer (CUDA events), or a host clock under emulation.
struct GpuTimer {
#ifdef PT_EMU
    std::chrono::steady_clock::time_point t0;
    void start() { t0 = std::chrono::steady_clock::now(); }
    float stop() { return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
#else
    cudaEvent_t a, b;
    GpuTimer() { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); }
    ~GpuTimer() { cudaEventDestroy(a); cudaEventDestroy(b); }
    void start() { CK(cudaEventRecord(a)); }
    float stop() {
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }
#endif
};
