// a, b, c = A·w, B·w, C·w for a pre-compiled circuit: sparse matrix-vector products over Fr.
//
// A matrix is CSR, u32 everywhere: row_ptr[rows + 1] (row r holds entries row_ptr[r] ..
// row_ptr[r+1]), cols[nnz] (a column of w), coeff[nnz] (an index into the circuit's table of
// Fr coefficients, Montgomery, shared by A, B and C, with table[0] = 1 and table[1] = -1).
// w: the full assignment (Fr Montgomery; inputs, then aux). The output is what the NTT reads:
// out[r] = sum over row r's entries of table[coeff] * w[col] (Montgomery, natural order), and
// out[r] = 0 for rows <= r < n (the domain's zero padding).
//
// Rows are mostly 1-3 entries, but packing and long linear combinations make rows of
// thousands, so a thread per row would leave warps waiting for their longest row. As in the
// MSM's bucket accumulation, each thread takes a fixed chunk of consecutive entries whatever the
// rows; a row cut by chunk edges leaves partial sums that pt_abc_fixup adds up
// (util/chunked_runs.cuh). Coefficients 1 and -1 add or subtract w without the multiply; a
// warp skips the multiply only when all its lanes' entries at that step are +-1.
//   pt_abc_plan   first[t] = the first row that starts at or after entry t * chunk (depends
//                 only on row_ptr: once per matrix)
//   pt_abc_eval   thread t: entries [t * chunk, (t+1) * chunk); the rows that start in them go
//                 to out (or, the one cut at the end, to tail[t] with edge[t] = its row), the
//                 piece of a row that started before to head[t]; and out's zero padding
//   pt_abc_fixup  rows cut by chunk edges: tail + the heads of the chunks they cover
#pragma once
#include "../ff/bls12_381.cuh"
#include "../util/chunked_runs.cuh"

#define PT_ABC_CHUNK 32     // entries a thread (the host may pass another chunk >= 1)
#define PT_ABC_THREADS 256

PT_HD uint32_t pt_abc_chunks(uint32_t nnz, uint32_t chunk) { return nnz ? (nnz + chunk - 1) / chunk : 1; }

struct pt_fr_sum {
    PT_FI static void add(fr_t& acc, const fr_t& x) { acc = acc + x; }
    PT_FI static fr_t zero() { return fr_t::zero(); }
};

// grid = ceil((rows + 1) / 256), 256 threads; first: nchunk + 1 words (nchunk =
// pt_abc_chunks(nnz, chunk)). Thread r sets first[t] = r for the chunk starts t * chunk in
// (row_ptr[r-1], row_ptr[r]] (t = 0 for r = 0); thread rows also sets first[nchunk] = rows.
extern "C" __global__ void __launch_bounds__(PT_ABC_THREADS)
pt_abc_plan(const uint32_t* row_ptr, uint32_t rows, uint32_t chunk, uint32_t nchunk, uint32_t* first)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r > rows) return;
    const uint32_t t0 = r ? row_ptr[r - 1] / chunk + 1 : 0;
    const uint32_t t1 = min(row_ptr[r] / chunk, nchunk - 1);
    for (uint32_t t = t0; t <= t1; t++) first[t] = r;
    if (r == rows) first[nchunk] = rows;
}

// grid = ceil(nchunk / 256), 256 threads (at least one block when rows < n); first from
// pt_abc_plan; head, tail: nchunk Fr each, edge: nchunk words (scratch).
extern "C" __global__ void __launch_bounds__(PT_ABC_THREADS)
pt_abc_eval(const uint32_t* row_ptr, const uint32_t* cols, const uint32_t* coeff, const fr_t* table,
            const fr_t* w, uint32_t rows, uint32_t n, uint32_t chunk, uint32_t nchunk, const uint32_t* first,
            fr_t* out, fr_t* head, fr_t* tail, uint32_t* edge)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t threads = (size_t)gridDim.x * blockDim.x;
    for (size_t r = rows + (size_t)t; r < n; r += threads) pt_store(out + r, fr_t::zero());
    if (t >= nchunk) return;
    edge[t] = PT_NO_EDGE;
    const uint32_t nnz = row_ptr[rows];
    const uint32_t p0 = (uint32_t)min((uint64_t)t * chunk, (uint64_t)nnz);
    const uint32_t p1 = (uint32_t)min((uint64_t)p0 + chunk, (uint64_t)nnz);
    uint32_t r = first[t];
    const uint32_t rend = first[t + 1];
    // The run being summed: first the head (entries of a row that started before p0), then
    // the rows r < rend, each ending at `end`.
    uint32_t end = row_ptr[r];
    bool in_head = true;
    fr_t acc = fr_t::zero();
    // entry p's coefficient index and w[col], loaded one entry ahead
    uint32_t k = 0;
    fr_t x = fr_t::zero();
    if (p0 < p1) {
        k = coeff[p0];
        x = pt_load(w + cols[p0]);
    }
    for (uint32_t p = p0;; p++) {
        while (p == end) {  // the run ends here (empty rows end where they start)
            if (in_head) {
                if (p > p0) pt_store(head + t, acc);
                in_head = false;
            } else {
                pt_store(out + r, acc);
                r++;
            }
            acc = fr_t::zero();
            if (r == rend) return;
            end = row_ptr[r + 1];
        }
        if (p == p1) break;
        const uint32_t kc = k;
        fr_t v = x;
        if (p + 1 < p1) {
            k = coeff[p + 1];
            x = pt_load(w + cols[p + 1]);
        }
        if (kc > 1) v = v * pt_load(table + kc);
        acc = kc == 1 ? acc - v : acc + v;
    }
    // the run goes on past p1
    if (in_head) {
        pt_store(head + t, acc);
    } else {
        pt_store(tail + t, acc);
        edge[t] = r;
    }
}

// grid = ceil(nchunk / 32) blocks of 32 threads, after pt_abc_eval: out[row] for every row cut
// by a chunk edge (ends = row_ptr + 1: a row ends where the next starts).
extern "C" __global__ void __launch_bounds__(PT_FIX_THREADS)
pt_abc_fixup(const uint32_t* row_ptr, const uint32_t* edge, uint32_t rows, uint32_t chunk, uint32_t nchunk,
             const fr_t* head, const fr_t* tail, fr_t* out)
{
    pt_chunk_fixup<fr_t, pt_fr_sum>(row_ptr + 1, edge, rows, 1, chunk, nchunk, head, tail, out);
}
