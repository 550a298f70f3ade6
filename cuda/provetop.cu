// The single translation unit of provetop's CUDA kernels: the Rust build compiles this file
// into one fatbin (nvcc --fatbin) and launches the extern "C" pt_* kernels by name.
// Launch shapes, scratch sizes and host sequences: cuda/README.md.
#include "ff/bls12_381.cuh"
#include "ntt/ntt.cuh"
#include "ntt/tables.cuh"
#include "msm/pippenger.cuh"
#include "msm/g2.cuh"
#include "msm/fixed_base.cuh"
#include "msm/shifted.cuh"
#include "abc/abc_eval.cuh"
