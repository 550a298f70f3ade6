// abc_eval: a, b, c = A w, B w, C w from CSR matrices (pt_abc_plan, pt_abc_eval, pt_abc_fixup),
// checked against a host SpMV on random matrices (short and long rows, empty rows, +-1 and
// general coefficients, chunks of several sizes, the zero padding) and on PoRep- and
// synthetic-shaped matrices, which are also timed.
#include "gpu.h"
#include "harness.h"
#include "../abc/abc_eval.cuh"

// One matrix in the agreed CSR layout, on the host.
struct Csr {
    uint32_t rows = 0;
    std::vector<uint32_t> row_ptr{0}, cols, coeff;
    uint32_t nnz() const { return row_ptr.back(); }
};

// A matrix on the device with its plan (pt_abc_plan: once per matrix) and scratch.
struct DevCsr {
    uint32_t rows = 0, chunk = 0, nchunk = 0;
    uint32_t *row_ptr = nullptr, *cols = nullptr, *coeff = nullptr, *first = nullptr, *edge = nullptr;
    fr_t *head = nullptr, *tail = nullptr;
    void upload(const Csr& m, uint32_t chunk_) {
        rows = m.rows;
        chunk = chunk_;
        nchunk = pt_abc_chunks(m.nnz(), chunk);
        row_ptr = dalloc<uint32_t>(rows + 1);
        cols = dalloc<uint32_t>(m.nnz());
        coeff = dalloc<uint32_t>(m.nnz());
        h2d(row_ptr, m.row_ptr.data(), rows + 1);
        h2d(cols, m.cols.data(), m.nnz());
        h2d(coeff, m.coeff.data(), m.nnz());
        first = dalloc<uint32_t>(nchunk + 1);
        edge = dalloc<uint32_t>(nchunk);
        head = dalloc<fr_t>(nchunk);
        tail = dalloc<fr_t>(nchunk);
        PT_LAUNCH(pt_abc_plan, dim3(rows / PT_ABC_THREADS + 1), dim3(PT_ABC_THREADS), 0, (const uint32_t*)row_ptr,
                  rows, chunk, nchunk, first);
    }
    // out = this matrix times w, zero-padded to n (the host sequence of cuda/README.md)
    void eval(const fr_t* table, const fr_t* w, uint32_t n, fr_t* out) const {
        PT_LAUNCH(pt_abc_eval, dim3((nchunk + PT_ABC_THREADS - 1) / PT_ABC_THREADS), dim3(PT_ABC_THREADS), 0,
                  (const uint32_t*)row_ptr, (const uint32_t*)cols, (const uint32_t*)coeff, table, w, rows, n, chunk,
                  nchunk, (const uint32_t*)first, out, head, tail, edge);
        PT_LAUNCH(pt_abc_fixup, dim3((nchunk + PT_FIX_THREADS - 1) / PT_FIX_THREADS), dim3(PT_FIX_THREADS), 0,
                  (const uint32_t*)row_ptr, (const uint32_t*)edge, rows, chunk, nchunk, (const fr_t*)head,
                  (const fr_t*)tail, out);
    }
    void release() {
        for (void* p : {(void*)row_ptr, (void*)cols, (void*)coeff, (void*)first, (void*)edge, (void*)head, (void*)tail})
            cudaFree(p);
    }
};

// Row r of m times w on the host (Montgomery throughout).
static Fr host_row(const Csr& m, const std::vector<Fr>& table, const std::vector<Fr>& w, uint32_t r) {
    Fr acc = H.fr.zero();
    for (uint32_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; e++) acc = H.fr.add(acc, H.fr.mul(table[m.coeff[e]], w[m.cols[e]]));
    return acc;
}

static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A shape: row r's entries in matrix mat (0, 1, 2 = A, B, C) as (column, coefficient index)
// pairs, a pure function of (seed, r) so that rows are built in parallel. Coefficient
// indices: 0 = 1, 1 = -1, 2.. general.
typedef std::function<void(uint64_t seed, uint32_t r, int mat, uint32_t ncols, uint32_t ngen,
                           std::vector<std::pair<uint32_t, uint32_t>>& out)>
    Shape;

// The synthetic workload's mix (engine/src/circuit/synthetic.rs): src 25 % (A 1 / B 2 / C 0
// terms), xor 30 % (1 / 1 / 3), mux 30 % (1 / 2 / 2), lin 14 % (13 / 2 / 2), pack 1 %
// (32 / 1 / 1): 3.0 / 1.7 / 1.8 terms a row, general coefficients only in A.
static void synthetic_row(uint64_t seed, uint32_t r, int mat, uint32_t ncols, uint32_t ngen,
                          std::vector<std::pair<uint32_t, uint32_t>>& out) {
    uint64_t h = mix64(seed ^ r);
    const uint32_t kind = h % 100;
    auto col = [&]() { h = mix64(h); return (uint32_t)(h % ncols); };
    auto gen = [&]() { h = mix64(h); return 2 + (uint32_t)(h % ngen); };
    const uint32_t one = 0;  // the constant ONE's column
    out.clear();
    if (kind < 25) {         // src: w (1 - w) = 0
        const uint32_t wv = col();
        if (mat == 0) out = {{wv, 0}};
        if (mat == 1) out = {{one, 0}, {wv, 1}};
    } else if (kind < 55) {  // xor: 2x y = x + y - w
        const uint32_t x = col(), y = col(), wv = col();
        if (mat == 0) out = {{x, gen()}};
        if (mat == 1) out = {{y, 0}};
        if (mat == 2) out = {{x, 0}, {y, 0}, {wv, 1}};
    } else if (kind < 85) {  // mux: c (p - q) = w - q
        const uint32_t c = col(), p = col(), q = col(), wv = col();
        if (mat == 0) out = {{c, 0}};
        if (mat == 1) out = {{p, 0}, {q, 1}};
        if (mat == 2) out = {{wv, 0}, {q, 1}};
    } else {                 // lin (13 terms) or pack (32)
        const uint32_t terms = kind < 99 ? 13 : 32;
        if (mat == 0)
            for (uint32_t i = 0; i < terms; i++) out.push_back({col(), gen()});
        if (mat == 1) out = kind < 99 ? std::vector<std::pair<uint32_t, uint32_t>>{{col(), 0}, {one, 0}}
                                      : std::vector<std::pair<uint32_t, uint32_t>>{{one, 0}};
        if (mat == 2) out = kind < 99 ? std::vector<std::pair<uint32_t, uint32_t>>{{col(), 0}, {col(), 1}}
                                      : std::vector<std::pair<uint32_t, uint32_t>>{{col(), 0}};
    }
}

// PoRep-shaped (a made-up mix with the partition's figures: ~5.6 nonzeros a row over A + B + C,
// rows mostly of 1-3 entries, a few of hundreds to thousands): booleans 30 % (A 1 / B 2 / C 0),
// xors 35 % (1 / 1 / 3), ands 27.95 % (1 / 1 / 1), linear combinations 5 % (8-24 general / 1 / 1),
// packing 2 % (32 general / 1 / 1), long sums 0.05 % (200-2000 general / 1 / 1).
static void porep_row(uint64_t seed, uint32_t r, int mat, uint32_t ncols, uint32_t ngen,
                      std::vector<std::pair<uint32_t, uint32_t>>& out) {
    uint64_t h = mix64(seed ^ r);
    const uint32_t kind = h % 10000;
    auto col = [&]() { h = mix64(h); return (uint32_t)(h % ncols); };
    auto gen = [&]() { h = mix64(h); return 2 + (uint32_t)(h % ngen); };
    out.clear();
    if (kind < 3000) {
        const uint32_t a = col();
        if (mat == 0) out = {{a, 0}};
        if (mat == 1) out = {{0, 0}, {a, 1}};
    } else if (kind < 6500) {
        const uint32_t a = col(), b = col(), c = col();
        if (mat == 0) out = {{a, gen()}};
        if (mat == 1) out = {{b, 0}};
        if (mat == 2) out = {{a, 0}, {b, 0}, {c, 1}};
    } else if (kind < 9295) {
        out = {{col(), 0}};
    } else {
        h = mix64(h);
        const uint32_t terms = kind < 9795 ? 8 + (uint32_t)(h % 17) : kind < 9995 ? 32 : 200 + (uint32_t)(h % 1801);
        if (mat == 0)
            for (uint32_t i = 0; i < terms; i++) out.push_back({col(), gen()});
        else
            out = {{col(), mat == 1 ? 0u : 1u}};
    }
}

// The three matrices of a shape over `rows` rows and `rows` columns: lengths, then entries.
static void build(const Shape& shape, uint64_t seed, uint32_t rows, uint32_t ngen, Csr m[3]) {
    for (int mat = 0; mat < 3; mat++) {
        Csr& c = m[mat];
        c.rows = rows;
        c.row_ptr.assign(rows + 1, 0);
        parallel_for(rows, [&](size_t a, size_t b) {
            std::vector<std::pair<uint32_t, uint32_t>> t;
            for (size_t r = a; r < b; r++) {
                shape(seed, (uint32_t)r, mat, rows, ngen, t);
                c.row_ptr[r + 1] = t.size();
            }
        });
        for (uint32_t r = 0; r < rows; r++) c.row_ptr[r + 1] += c.row_ptr[r];
        c.cols.resize(c.nnz());
        c.coeff.resize(c.nnz());
        parallel_for(rows, [&](size_t a, size_t b) {
            std::vector<std::pair<uint32_t, uint32_t>> t;
            for (size_t r = a; r < b; r++) {
                shape(seed, (uint32_t)r, mat, rows, ngen, t);
                for (size_t j = 0; j < t.size(); j++) {
                    c.cols[c.row_ptr[r] + j] = t[j].first;
                    c.coeff[c.row_ptr[r] + j] = t[j].second;
                }
            }
        });
    }
}

static std::vector<Fr> random_fr(size_t n) {
    std::vector<Fr> v(n);
    const uint64_t seed = g_rng();
    parallel_for(n, [&](size_t a, size_t b) {
        std::mt19937_64 g(seed ^ mix64(a));
        for (size_t i = a; i < b; i++) v[i] = H.fr.random(g);
    });
    return v;
}

// The coefficient table: 1, -1, then ngen others (Montgomery).
static std::vector<Fr> make_table(uint32_t ngen) {
    std::vector<Fr> t{H.fr.onem(), H.fr.neg(H.fr.onem())};
    for (Fr& v : random_fr(ngen)) t.push_back(v);
    return t;
}

// Evaluates m on the device (out starts as garbage) and compares with the host: every
// stride-th row, every row of 32 entries or more, and the zero padding up to n.
static size_t check_one(const Csr& m, uint32_t chunk, uint32_t n, const std::vector<Fr>& table,
                        const std::vector<Fr>& w, uint32_t stride = 1) {
    fr_t *dt = dalloc<fr_t>(table.size()), *dw = dalloc<fr_t>(w.size()), *dout = dalloc<fr_t>(n);
    h2d((Fr*)dt, table.data(), table.size());
    h2d((Fr*)dw, w.data(), w.size());
    CK(cudaMemset(dout, 0xa5, (size_t)n * sizeof(fr_t)));
    DevCsr d;
    d.upload(m, chunk);
    d.eval(dt, dw, n, dout);
    std::vector<Fr> got(n);
    d2h((fr_t*)got.data(), dout, n);
    d.release();
    cudaFree(dt); cudaFree(dw); cudaFree(dout);
    std::vector<uint8_t> bad(n ? n : 1, 0);
    parallel_for(n, [&](size_t a, size_t b) {
        for (size_t r = a; r < b; r++) {
            if (r >= m.rows) bad[r] = !H.fr.is_zero(got[r]);
            else if (r % stride == 0 || m.row_ptr[r + 1] - m.row_ptr[r] >= 32)
                bad[r] = !H.fr.eq(got[r], host_row(m, table, w, (uint32_t)r));
        }
    });
    size_t total = 0;
    for (uint8_t b : bad) total += b;
    return total;
}

// A random matrix: rows of lengths drawn from `lens` (a length is picked uniformly from one
// of its ranges, chosen with the given weights), columns < ncols, coefficients 1, -1 or
// general in the given percentages.
struct LenRange { uint32_t weight, lo, hi; };
static Csr random_csr(uint32_t rows, uint32_t ncols, uint32_t ngen, const std::vector<LenRange>& lens,
                      uint32_t pct_one, uint32_t pct_minus) {
    Csr m;
    m.rows = rows;
    uint32_t wsum = 0;
    for (auto& l : lens) wsum += l.weight;
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t pick = g_rng() % wsum, i = 0;
        while (pick >= lens[i].weight) pick -= lens[i++].weight;
        const uint32_t len = lens[i].lo + g_rng() % (lens[i].hi - lens[i].lo + 1);
        for (uint32_t j = 0; j < len; j++) {
            const uint32_t kind = g_rng() % 100;
            m.cols.push_back(g_rng() % ncols);
            m.coeff.push_back(kind < pct_one ? 0 : kind < pct_one + pct_minus ? 1 : 2 + g_rng() % ngen);
        }
        m.row_ptr.push_back(m.cols.size());
    }
    return m;
}

static void report_check(const std::string& name, size_t bad, const Csr& m, uint32_t n) {
    report("abc_eval " + name, bad == 0,
           std::to_string(bad) + " wrong; rows=" + std::to_string(m.rows) + " n=" + std::to_string(n) +
               " nnz=" + std::to_string(m.nnz()));
}

// Random matrices with every kind of row, at several chunk sizes; and the corner cases.
static void random_cases() {
    const uint32_t ngen = 40, ncols = 5000;
    const std::vector<Fr> table = make_table(ngen), w = random_fr(ncols);
    const std::vector<LenRange> mix = {{40, 1, 3}, {20, 0, 0}, {25, 4, 20}, {10, 50, 300}, {1, 1000, 3000}};
    Csr m = random_csr(2000, ncols, ngen, mix, 40, 30);
    for (uint32_t chunk : {1u, 7u, (uint32_t)PT_ABC_CHUNK, 1000u})
        report_check("random rows of 0-3000 entries (1, -1, general), chunk " + std::to_string(chunk),
                     check_one(m, chunk, 2100, table, w), m, 2100);
    Csr ones = random_csr(3000, ncols, ngen, {{1, 1, 3}}, 60, 40);
    report_check("short rows, coefficients 1 and -1 only", check_one(ones, PT_ABC_CHUNK, 3000, table, w), ones, 3000);
    Csr wide = random_csr(1, ncols, ngen, {{1, 2500, 2500}}, 10, 10);
    report_check("one row of 2500 entries (79 chunks: the block fix-up)", check_one(wide, PT_ABC_CHUNK, 4, table, w),
                 wide, 4);
    Csr ends = random_csr(300, ncols, ngen, {{1, 0, 2}}, 30, 30);
    Csr tailrow = random_csr(1, ncols, ngen, {{1, 700, 700}}, 30, 30);
    for (uint32_t e = 0; e < tailrow.nnz(); e++) {  // a long last row after short and empty ones
        ends.cols.push_back(tailrow.cols[e]);
        ends.coeff.push_back(tailrow.coeff[e]);
    }
    ends.rows++;
    ends.row_ptr.push_back(ends.cols.size());
    report_check("short and empty rows, then a row of 700 entries last", check_one(ends, PT_ABC_CHUNK, 512, table, w),
                 ends, 512);
    Csr empty;
    empty.rows = 5;
    empty.row_ptr.assign(6, 0);
    report_check("no entries (all rows empty)", check_one(empty, PT_ABC_CHUNK, 8, table, w), empty, 8);
    Csr none;
    report_check("no rows (padding only)", check_one(none, PT_ABC_CHUNK, 4, table, w), none, 4);
}

// A shape's A, B, C at `rows` rows (n = the next power of two): checked at every stride-th row
// and, when timed, the median of the three products (plans built once, as the engine will).
static void shaped(const char* name, const Shape& shape, uint32_t rows, uint32_t stride, bool time_it,
                   const std::string& target) {
    const uint32_t ngen = 64, n = 1u << pt_log2_ceil(rows);
    Csr m[3];
    build(shape, g_rng(), rows, ngen, m);
    const std::vector<Fr> table = make_table(ngen), w = random_fr(rows);
    const char* names[3] = {"A", "B", "C"};
    uint64_t nnz = 0;
    for (int i = 0; i < 3; i++) {
        nnz += m[i].nnz();
        report_check(std::string(name) + " " + names[i] + " (" + std::to_string(rows) + " rows)",
                     check_one(m[i], PT_ABC_CHUNK, n, table, w, stride), m[i], n);
    }
    if (!time_it) return;
    fr_t *dt = dalloc<fr_t>(table.size()), *dw = dalloc<fr_t>(w.size()), *out = dalloc<fr_t>(3 * (size_t)n);
    h2d((Fr*)dt, table.data(), table.size());
    h2d((Fr*)dw, w.data(), w.size());
    DevCsr d[3];
    GpuTimer tp;
    tp.start();
    for (int i = 0; i < 3; i++) d[i].upload(m[i], PT_ABC_CHUNK);
    const double upload_ms = tp.stop();
    double per[3];
    for (int i = 0; i < 3; i++) per[i] = time_median([&]() { d[i].eval(dt, dw, n, out + (size_t)i * n); }, true);
    const double all = time_median([&]() {
        for (int i = 0; i < 3; i++) d[i].eval(dt, dw, n, out + (size_t)i * n);
    });
    char buf[256];
    snprintf(buf, sizeof buf, "nnz %.1f a row (%llu); A %.2f, B %.2f, C %.2f ms; plans + upload %.0f ms", nnz / (double)rows,
             (unsigned long long)nnz, per[0], per[1], per[2], upload_ms);
    timing(std::string("abc_eval ") + name + " A+B+C, " + std::to_string(rows) + " rows", all, target, buf);
    for (auto& x : d) x.release();
    cudaFree(dt); cudaFree(dw); cudaFree(out);
}

void run_abc_tests() {
    random_cases();
    if (g_opt.quick) {
        shaped("PoRep-shaped", porep_row, 5000, 1, false, "");
        shaped("synthetic-shaped", synthetic_row, 1u << 12, 1, false, "");
        return;
    }
    shaped("PoRep-shaped", porep_row, 3844929, 1, true, "");
    for (int lg : {24, 27})
        if (lg <= g_opt.abc_max_log) shaped("synthetic-shaped", synthetic_row, 1u << lg, lg > 24 ? 61 : 1, true, "");
}
