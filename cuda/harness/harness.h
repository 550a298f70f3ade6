// Shared declarations of the harness translation units.
#pragma once
#include <stdint.h>
#include <random>
#include <string>
#include <vector>
#include "ref.h"

struct Opts {
    std::string vectors = "cuda/harness/vectors";
    int ntt_max_log = 27;
    int msm_max_log = 26;
    int reps = 7;
    bool quick = false;   // fewer sizes (emulator runs)
    int msm_c = 0;        // override the window size
    int msm_chunk = 0;      // override sorted entries per accumulation thread (chunk)
    std::string only;     // "field", "ntt", "msm" or empty for all
    int profile_msm = 0;  // run one MSM of 2^k (for a profiler), no checks
    int msm_large = 0;    // only the checked + timed random MSM of 2^k
    int profile_ntt = 0;  // run one forward NTT of 2^k
    int msm_affine = -1;  // MSM accumulation: 0 XYZZ, 1 batch-affine, -1 both
    int msm_levels = 0;   // batch-affine levels (0: the default for the size)
    int msm_shifted = 1;  // also run the MSM checks and timings over shifted bases
};
extern Opts g_opt;
extern std::mt19937_64 g_rng;

void report(const std::string& name, bool ok, const std::string& detail);
void timing(const std::string& name, double ms, const std::string& target, const std::string& detail);
std::vector<uint32_t> load_words(const std::string& file);
double median(std::vector<double> v);

void run_field_tests();
void run_ntt_tests();
void run_msm_tests();
void profile_msm(int lg);
void profile_ntt(int k);
