// Shared declarations of the harness translation units.
#pragma once
#include <stdint.h>
#include <functional>
#include <random>
#include <string>
#include <vector>
#include "ref.h"
#include "../ff/bls12_381.cuh"
#include "../msm/config.cuh"

struct Opts {
    std::string vectors = "cuda/harness/vectors";
    int ntt_max_log = 27;
    int msm_max_log = 26;
    int g2_max_log = 20;  // largest timed G2 MSM (2^16, 2^18, 2^20)
    int abc_max_log = 27; // largest timed synthetic-shaped abc_eval (PoRep-shaped: 3.8 M rows)
    int reps = 7;
    bool quick = false;   // fewer sizes (emulator runs)
    int msm_c = 0;        // override the window size
    int msm_chunk = 0;      // override sorted entries per accumulation thread (chunk)
    std::string only;     // comma-separated parts (field, ntt, msm, g2, abc); empty: all
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
// Median ms of g_opt.reps runs of f (after one untimed run when warm).
double time_median(const std::function<void()>& f, bool warm = false);
// Canonical scalars to the device in Montgomery form.
fr_t* upload_scalars(const std::vector<Fr>& canon);
HAff load_g1_generator();

// The sort phase of an MSM, the same for G1 and G2 (h_msm.cu): digits, histogram, plan and
// scatter into `scratch` (laid out as lay), over W windows of n scalars; shifted: into one
// bucket set (the binned scatter, keys read back when bin_gather). mark() after the histogram
// and after the scatter.
void msm_sort(const pt_msm_config& k, const pt_msm_scratch& lay, uint8_t* scratch, const fr_t* sc, uint32_t n,
              uint32_t W, bool shifted, bool bin_gather, const std::function<void()>& mark);

void run_field_tests();
void run_ntt_tests();
void run_msm_tests();
void run_fixed_base_tests();
void run_g2_tests();
void run_abc_tests();
void profile_msm(int lg);
void profile_ntt(int k);
