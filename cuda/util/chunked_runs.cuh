// Sums over runs of consecutive entries (an MSM's buckets, a matrix's rows) by threads that
// each take a fixed chunk of entries, so every thread of a warp does the same work whatever
// the run lengths. A run inside one chunk is written by its thread; a run cut by chunk edges
// leaves the piece in the chunk where it starts in tail[c] (edge[c] = the run), and the piece
// at the start of every later chunk it covers in head[c']. pt_chunk_fixup adds them up.
//
// V is the value summed, Ops its addition: Ops::add(V& acc, const V& x), Ops::zero().
#pragma once
#include "common.cuh"

#define PT_NO_EDGE 0xffffffffu  // edge[c]: no run starts in chunk c and runs past its end
#define PT_FIX_THREADS 32
#define PT_FIX_SERIAL 16        // runs over more chunks than this are summed by the block

// grid = ceil(nwin * nchunk / 32) blocks of 32 threads, nwin independent sets of runs (MSM
// windows) of nchunk chunks each. Thread (w, c) takes chunk c: when a run b starts in it and
// runs past its end (edge[w][c] = b), b's sum is the tail of chunk c plus the heads of chunks
// c+1 .. (end - 1) / chunk, where end = ends[w * nb + b] is the run's end (exclusive). Short
// runs (the usual one or two chunks) are summed by the thread; longer ones (a bucket cut into
// thousands of chunks, a row of thousands of entries) by all 32 threads of the block, then a
// tree. The sum goes to out[w * nb + b].
template <class V, class Ops>
PT_FI void pt_chunk_fixup(const uint32_t* ends, const uint32_t* edge, uint32_t nb, uint32_t nwin,
                          uint32_t chunk, uint32_t nchunk, const V* head, const V* tail, V* out)
{
    __shared__ V s[PT_FIX_THREADS];
    __shared__ uint32_t s_long[PT_FIX_THREADS];
    const uint32_t t = threadIdx.x;
    const uint32_t g = blockIdx.x * PT_FIX_THREADS + t;
    uint32_t span = 0;
    if (g < nwin * nchunk && edge[g] != PT_NO_EDGE) {
        const uint32_t w = g / nchunk, b = edge[g], cs = g % nchunk;
        const uint32_t ce = (ends[(size_t)w * nb + b] - 1) / chunk;
        span = ce - cs;
        if (span <= PT_FIX_SERIAL) {
            const size_t base = (size_t)w * nchunk;
            V acc = pt_load(tail + base + cs);
            for (uint32_t c = cs + 1; c <= ce; c++) Ops::add(acc, pt_load(head + base + c));
            pt_store(out + (size_t)w * nb + b, acc);
        }
    }
    s_long[t] = span > PT_FIX_SERIAL ? span : 0;
    __syncthreads();
    for (uint32_t j = 0; j < PT_FIX_THREADS; j++) {
        if (s_long[j] == 0) continue;  // block-uniform
        const uint32_t gj = blockIdx.x * PT_FIX_THREADS + j;
        const uint32_t w = gj / nchunk, b = edge[gj], cs = gj % nchunk, ce = cs + s_long[j];
        const size_t base = (size_t)w * nchunk;
        V acc = t == 0 ? pt_load(tail + base + cs) : Ops::zero();
        for (uint32_t c = cs + 1 + t; c <= ce; c += PT_FIX_THREADS) Ops::add(acc, pt_load(head + base + c));
        s[t] = acc;
        __syncthreads();
        for (uint32_t h = PT_FIX_THREADS / 2; h > 0; h >>= 1) {
            if (t < h) {
                V x = s[t];
                Ops::add(x, s[t + h]);
                s[t] = x;
            }
            __syncthreads();
        }
        if (t == 0) pt_store(out + (size_t)w * nb + b, s[0]);
        __syncthreads();
    }
}
