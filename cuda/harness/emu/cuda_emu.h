// A tiny host emulator for the subset of CUDA that the product kernels use, so their
// logic (index math, barriers, shared memory, carry chains) can be checked on a machine
// without a GPU. Each CUDA thread of a block is a ucontext fiber on one host thread;
// __syncthreads() switches back to a scheduler that resumes the block's threads in order.
// Blocks run one after another. Integer atomics are plain read-modify-writes (fibers only
// switch at barriers). Warp intrinsics are not provided: the kernels do not use them.
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <algorithm>
#include <functional>
#include <vector>

#define PT_EMU 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __constant__
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint4 { unsigned x, y, z, w; };

extern dim3 threadIdx, blockIdx, blockDim, gridDim;
extern uint32_t pt_emu_cf;

struct pt_emu_state {
    ucontext_t sched;
    std::vector<ucontext_t> ctx;
    std::vector<char> done;
    std::vector<char> stacks;
    std::vector<char> smem;
    std::function<void()> body;
    int cur = 0;
};
extern pt_emu_state pt_emu;

inline void __syncthreads() { swapcontext(&pt_emu.ctx[pt_emu.cur], &pt_emu.sched); }
inline void __threadfence() {}
inline uint32_t atomicAdd(uint32_t* p, uint32_t v) { uint32_t o = *p; *p = o + v; return o; }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { unsigned long long o = *p; *p = o + v; return o; }
template <class T> inline T __ldg(const T* p) { return *p; }
inline uint32_t __brev(uint32_t x) {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline int __clz(uint32_t x) { return x ? __builtin_clz(x) : 32; }
inline int __popc(uint32_t x) { return __builtin_popcount(x); }
inline uint32_t __umulhi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
using std::max;
using std::min;

#define PT_DYN_SMEM(type, name) type* name = (type*)pt_emu.smem.data()

static void pt_emu_entry() {
    pt_emu.body();
    pt_emu.done[pt_emu.cur] = 1;
    swapcontext(&pt_emu.ctx[pt_emu.cur], &pt_emu.sched);
}

// Runs kernel k over the grid, block after block.
template <class... P, class... A>
void pt_emu_launch(void (*k)(P...), dim3 grid, dim3 block, size_t smem, A... args) {
    const size_t stack = 128 * 1024;
    const unsigned nt = block.x * block.y * block.z;
    if (pt_emu.stacks.size() < nt * stack) pt_emu.stacks.resize(nt * stack);
    pt_emu.ctx.resize(nt);
    pt_emu.done.assign(nt, 0);
    pt_emu.smem.assign(smem + 16, 0x5a);
    gridDim = grid;
    blockDim = block;
    pt_emu.body = [&]() { k(args...); };
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                blockIdx = dim3(bx, by, bz);
                for (unsigned t = 0; t < nt; t++) {
                    getcontext(&pt_emu.ctx[t]);
                    pt_emu.ctx[t].uc_stack.ss_sp = pt_emu.stacks.data() + (size_t)t * stack;
                    pt_emu.ctx[t].uc_stack.ss_size = stack;
                    pt_emu.ctx[t].uc_link = nullptr;
                    makecontext(&pt_emu.ctx[t], pt_emu_entry, 0);
                    pt_emu.done[t] = 0;
                }
                unsigned left = nt;
                while (left) {
                    for (unsigned t = 0; t < nt; t++) {
                        if (pt_emu.done[t]) continue;
                        pt_emu.cur = t;
                        threadIdx = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
                        swapcontext(&pt_emu.sched, &pt_emu.ctx[t]);
                        if (pt_emu.done[t]) left--;
                    }
                }
            }
}

// The globals above are defined once, in h_main.cu.
