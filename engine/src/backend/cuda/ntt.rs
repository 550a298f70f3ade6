//! The host side of our NTT (cuda/ntt): the pass plan mirrored from cuda/ntt/plan.cuh (its
//! constants from `consts`), the twiddle and coset tables built on the device once per domain
//! size, and the Groth16 H pipeline of cuda/README.md, all on the device with no host round
//! trip.

use anyhow::Result;
use cudarc::driver::CudaStream;
use std::sync::Arc;

use super::consts::{
    PT_NTT_C_COUNT, PT_NTT_C_G, PT_NTT_C_G_INV, PT_NTT_C_N_INV, PT_NTT_C_ZINV_NINV, PT_NTT_LOG_E,
    PT_NTT_THREADS, PT_POW_RUN,
};
use super::gpu::{Arg, DevBuf, Gpu, NTT_SMEM_MAX};
use crate::telemetry::accounting::VramPurpose;

/// Threads a block of `pt_ntt_pass` and of `pt_fr_powers`.
const THREADS: u32 = PT_NTT_THREADS;
const FR: usize = 32;
/// Indices into the constants `pt_ntt_consts` writes.
const C_N_INV: u64 = PT_NTT_C_N_INV as u64;
const C_G: u64 = PT_NTT_C_G as u64;
const C_G_INV: u64 = PT_NTT_C_G_INV as u64;
const C_ZINV_NINV: u64 = PT_NTT_C_ZINV_NINV as u64;

struct Plan {
    passes: u32,
    log_e: u32,
}

fn plan(k: u32) -> Plan {
    Plan {
        passes: if k <= 9 { 1 } else { k.div_ceil(9) },
        log_e: k.min(PT_NTT_LOG_E),
    }
}

fn smem(k: u32) -> u32 {
    ((1u32 << plan(k).log_e) * 32 + 8192).min(NTT_SMEM_MAX)
}

/// Twiddles and coset factors of one domain size, resident on the device.
pub struct Tables {
    /// log2 of the domain's size.
    pub k: u32,
    consts: DevBuf,
    omegas: DevBuf,
    g_fwd: DevBuf,
    g_inv: DevBuf,
}

impl Tables {
    /// Computes the constants, twiddles and coset factors of the 2^`k` domain on the device (on
    /// `s`, waited for).
    pub fn build(gpu: &Arc<Gpu>, s: &CudaStream, k: u32) -> Result<Tables> {
        let n = 1usize << k;
        let consts = gpu.alloc(PT_NTT_C_COUNT as usize * FR, VramPurpose::Scratch)?;
        let table = || gpu.alloc(n * FR, VramPurpose::Scratch);
        let (omegas, g_fwd, g_inv) = (table()?, table()?, table()?);
        gpu.launch(
            s,
            &gpu.f.ntt_consts,
            (1, 1),
            1,
            0,
            &[Arg::Ptr(consts.ptr), Arg::U32(k)],
        )?;
        let c = |i: u64| consts.ptr + i * FR as u64;
        let powers = |out: &DevBuf, base: u64, scale: u64| {
            let blocks = (n as u32).div_ceil(PT_POW_RUN * THREADS);
            gpu.launch(
                s,
                &gpu.f.fr_powers,
                (blocks, 1),
                THREADS,
                0,
                &[
                    Arg::Ptr(out.ptr),
                    Arg::Ptr(base),
                    Arg::Ptr(scale),
                    Arg::U32(k),
                ],
            )
        };
        powers(&omegas, c(0), 0)?;
        powers(&g_fwd, c(C_G), c(C_N_INV))?;
        powers(&g_inv, c(C_G_INV), c(C_ZINV_NINV))?;
        gpu.sync(s)?;
        Ok(Tables {
            k,
            consts,
            omegas,
            g_fwd,
            g_inv,
        })
    }

    /// The device address of constant `i` of `pt_ntt_consts`.
    pub fn constant(&self, i: u64) -> u64 {
        self.consts.ptr + i * FR as u64
    }

    /// Device bytes the tables hold.
    pub fn bytes(&self) -> usize {
        self.consts.bytes + self.omegas.bytes + self.g_fwd.bytes + self.g_inv.bytes
    }
}

/// What the last pass of a transform does besides the transform.
#[derive(Default, Clone, Copy)]
struct Extra {
    pre: u64,
    post: u64,
    post_c: u64,
    ea: u64,
    eb: u64,
}

/// One transform of `x` in place, through `scratch` (n Fr).
fn transform(
    gpu: &Gpu,
    s: &CudaStream,
    t: &Tables,
    x: u64,
    scratch: u64,
    inverse: bool,
    e: Extra,
) -> Result<()> {
    let k = t.k;
    let p = plan(k);
    let grid = 1u32 << (k - p.log_e);
    for pass in 0..p.passes {
        let (first, last) = (pass == 0, pass + 1 == p.passes);
        let src = if first { x } else { scratch };
        let dst = if last { x } else { scratch };
        let pick = |v: u64, on: bool| if on { v } else { 0 };
        use Arg::{Ptr, U32};
        gpu.launch(
            s,
            &gpu.f.ntt_pass,
            (grid, 1),
            THREADS,
            smem(k),
            &[
                Ptr(src),
                Ptr(dst),
                Ptr(t.omegas.ptr),
                Ptr(pick(e.pre, first)),
                Ptr(pick(e.post, last)),
                Ptr(pick(e.post_c, last)),
                Ptr(pick(e.ea, last)),
                Ptr(pick(e.eb, last)),
                U32(k),
                U32(pass),
                U32(inverse as u32),
            ],
        )?;
    }
    Ok(())
}

/// Forward (`inverse = false`) or inverse NTT of n elements at `x`, natural order.
pub fn ntt(
    gpu: &Gpu,
    s: &CudaStream,
    t: &Tables,
    x: u64,
    scratch: u64,
    inverse: bool,
) -> Result<()> {
    let e = if inverse {
        Extra {
            post_c: t.consts.ptr + C_N_INV * FR as u64,
            ..Extra::default()
        }
    } else {
        Extra::default()
    };
    transform(gpu, s, t, x, scratch, inverse, e)
}

/// The public coset transforms: forward multiplies input j by `table[j]` = g^j first; inverse
/// multiplies output j by `table[j]` = g^-j / n.
pub fn coset(
    gpu: &Gpu,
    s: &CudaStream,
    t: &Tables,
    x: u64,
    scratch: u64,
    table: u64,
    inverse: bool,
) -> Result<()> {
    let e = if inverse {
        Extra {
            post: table,
            ..Extra::default()
        }
    } else {
        Extra {
            pre: table,
            ..Extra::default()
        }
    };
    transform(gpu, s, t, x, scratch, inverse, e)
}

/// The H polynomial from evaluations a, b, c (n each, zero-padded): h lands in c's buffer
/// (its first n − 1 entries are the H MSM's scalars); a and b are overwritten. `ready(i)`
/// runs before input i is first read (to wait for its upload).
pub fn h_pipeline(
    gpu: &Gpu,
    s: &CudaStream,
    t: &Tables,
    [a, b, c]: [u64; 3],
    scratch: u64,
    ready: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<()> {
    let to_coset = Extra {
        post: t.g_fwd.ptr,
        ..Extra::default()
    };
    for (i, v) in [a, b].into_iter().enumerate() {
        ready(i)?;
        transform(gpu, s, t, v, scratch, true, to_coset)?;
        transform(gpu, s, t, v, scratch, false, Extra::default())?;
    }
    ready(2)?;
    transform(gpu, s, t, c, scratch, true, to_coset)?;
    transform(
        gpu,
        s,
        t,
        c,
        scratch,
        false,
        Extra {
            ea: a,
            eb: b,
            ..Extra::default()
        },
    )?;
    transform(
        gpu,
        s,
        t,
        c,
        scratch,
        true,
        Extra {
            post: t.g_inv.ptr,
            ..Extra::default()
        },
    )
}
