// provetop CUDA harness: checks every product kernel against known answers and the host
// reference on fresh random inputs, then times them; prints a table last.
//   pt_harness [--vectors DIR] [--ntt-max K] [--msm-max K] [--g2-max K] [--abc-max K] [--reps R]
//              [--quick] [--only field,ntt,msm,g2,abc] [--msm-c C] [--msm-chunk K]
//              [--msm-affine 0|1] [--msm-levels L] [--msm-shifted 0|1] [--help]
#include "gpu.h"
#include "harness.h"
#include "../msm/config.cuh"
#include <stdarg.h>

#ifdef PT_EMU
dim3 threadIdx, blockIdx, blockDim, gridDim;
uint32_t pt_emu_cf;
pt_emu_state pt_emu;
#endif

HostCurve H;
Opts g_opt;
std::mt19937_64 g_rng;

struct Row { std::string name, status, ms, target, detail; };
static std::vector<Row> g_rows;
static int g_fail = 0;

void report(const std::string& name, bool ok, const std::string& detail) {
    g_rows.push_back({name, ok ? "PASS" : "FAIL", "", "", detail});
    if (!ok) g_fail++;
    printf("[%s] %s %s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.c_str());
    fflush(stdout);
}
void timing(const std::string& name, double ms, const std::string& target, const std::string& detail) {
    char b[32];
    snprintf(b, sizeof b, "%.3f", ms);
    g_rows.push_back({name, "time", b, target, detail});
    printf("[time] %s: %s ms (target %s) %s\n", name.c_str(), b, target.c_str(), detail.c_str());
    fflush(stdout);
}
std::vector<uint32_t> load_words(const std::string& file) {
    FILE* f = fopen(file.c_str(), "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", file.c_str()); exit(2); }
    std::vector<uint32_t> w;
    uint32_t buf[4096];
    size_t k;
    while ((k = fread(buf, 4, 4096, f)) > 0) w.insert(w.end(), buf, buf + k);
    fclose(f);
    return w;
}
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}
double time_median(const std::function<void()>& f, bool warm) {
    if (warm) f();
    std::vector<double> t;
    for (int r = 0; r < g_opt.reps; r++) {
        GpuTimer tm;
        tm.start();
        f();
        t.push_back(tm.stop());
    }
    return median(t);
}
fr_t* upload_scalars(const std::vector<Fr>& canon) {
    std::vector<Fr> m(canon.size());
    parallel_for(canon.size(), [&](size_t a, size_t b) {
        for (size_t i = a; i < b; i++) m[i] = H.fr.to_mont(canon[i]);
    });
    fr_t* d = dalloc<fr_t>(canon.size());
    h2d((Fr*)d, m.data(), m.size());
    return d;
}
HAff load_g1_generator() {
    HAff g;
    memcpy(&g, load_words(g_opt.vectors + "/g1_mul.bin").data(), sizeof g);
    return g;
}
// Whether --only names this part (or is empty).
static bool selected(const std::string& part) {
    if (g_opt.only.empty()) return true;
    const std::string list = "," + g_opt.only + ",";
    return list.find("," + part + ",") != std::string::npos;
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() { return std::string(i + 1 < argc ? argv[++i] : ""); };
        if (a == "--vectors") g_opt.vectors = next();
        else if (a == "--ntt-max") g_opt.ntt_max_log = atoi(next().c_str());
        else if (a == "--msm-max") g_opt.msm_max_log = atoi(next().c_str());
        else if (a == "--g2-max") g_opt.g2_max_log = atoi(next().c_str());
        else if (a == "--abc-max") g_opt.abc_max_log = atoi(next().c_str());
        else if (a == "--reps") g_opt.reps = atoi(next().c_str());
        else if (a == "--quick") g_opt.quick = true;
        else if (a == "--only") g_opt.only = next();
        else if (a == "--msm-c") g_opt.msm_c = atoi(next().c_str());
        else if (a == "--msm-chunk") g_opt.msm_chunk = atoi(next().c_str());
        else if (a == "--profile-msm") g_opt.profile_msm = atoi(next().c_str());
        else if (a == "--profile-ntt") g_opt.profile_ntt = atoi(next().c_str());
        else if (a == "--msm-large") g_opt.msm_large = atoi(next().c_str());
        else if (a == "--msm-affine") g_opt.msm_affine = atoi(next().c_str());
        else if (a == "--msm-levels") g_opt.msm_levels = atoi(next().c_str());
        else if (a == "--msm-shifted") g_opt.msm_shifted = atoi(next().c_str());
        else if (a == "--help" || a == "-h") {
            printf("pt_harness [--vectors DIR] [--only field,ntt,msm,g2,abc] [--quick] [--reps R]\n"
                   "           [--ntt-max K] [--msm-max K] [--g2-max K] [--abc-max K] [--msm-large K]\n"
                   "           [--profile-msm K] [--profile-ntt K]\n"
                   "           [--msm-c C] [--msm-chunk K] [--msm-affine 0|1] [--msm-levels L] [--msm-shifted 0|1]\n"
                   "  --only LIST        the parts to check and time (default all); msm includes the fixed-base\n"
                   "                     products, g2 the G2 MSM (timed at 2^16, 2^18, 2^20) and sums, abc the\n"
                   "                     abc_eval products (timed PoRep-shaped at 3.8 M rows, synthetic-shaped 2^24, 2^27)\n"
                   "  --g2-max K         largest timed G2 MSM, 2^K terms (default 20)\n"
                   "  --abc-max K        largest timed synthetic-shaped abc_eval, 2^K rows (default 27)\n"
                   "  --msm-affine 0|1   MSM checks, timings and profiles run only the XYZZ (0) or the\n"
                   "                     batch-affine (1) bucket accumulation; default both\n"
                   "  --msm-levels L     batch-affine levels (1..%d; default floor(log2(N / 2^(c-1))))\n"
                   "  --msm-shifted 0    leave out the runs over shifted bases (default: checked and timed too)\n",
                   PT_MSM_AFF_MAXLV);
            return 0;
        }
        else { fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
    }
    for (size_t a = 0; a < g_opt.only.size();) {  // every --only part must be one we have
        size_t b = g_opt.only.find(',', a);
        if (b == std::string::npos) b = g_opt.only.size();
        const std::string part = g_opt.only.substr(a, b - a);
        if (part != "field" && part != "ntt" && part != "msm" && part != "g2" && part != "abc") {
            fprintf(stderr, "unknown --only part '%s' (field, ntt, msm, g2, abc)\n", part.c_str());
            return 2;
        }
        a = b + 1;
    }
    const uint64_t seed = std::random_device{}() ^ ((uint64_t)std::random_device{}() << 32);
    g_rng.seed(seed);
    printf("seed %llu\n", (unsigned long long)seed);
#ifndef PT_EMU
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs, cc %d.%d, %.1f GiB, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.major,
           prop.minor, prop.totalGlobalMem / 1073741824.0, prop.l2CacheSize >> 20);
#endif
    if (g_opt.profile_msm || g_opt.profile_ntt) {
        if (g_opt.profile_msm) profile_msm(g_opt.profile_msm);
        if (g_opt.profile_ntt) profile_ntt(g_opt.profile_ntt);
        return 0;
    }
    if (selected("field")) run_field_tests();
    if (selected("ntt")) run_ntt_tests();
    if (selected("msm")) run_msm_tests();
    if (selected("g2")) run_g2_tests();
    if (selected("abc")) run_abc_tests();

    int pass = 0;
    for (auto& r : g_rows) pass += r.status == "PASS";
    printf("\n%-78s %-6s %10s  %-22s %s\n", "check / timing", "status", "ms", "target ms", "detail");
    for (auto& r : g_rows)
        printf("%-78s %-6s %10s  %-22s %s\n", r.name.c_str(), r.status.c_str(), r.ms.c_str(), r.target.c_str(),
               r.detail.c_str());
    printf("%d passed, %d failed\n", pass, g_fail);
    return g_fail ? 1 : 0;
}
