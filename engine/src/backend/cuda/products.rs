//! Parameter generation's fixed-base products on a GPU (`pt_g1_fixed_base`,
//! `pt_g2_fixed_base`): the window table goes up once, the scalars in pieces; each piece's
//! products are made affine on the device (`pt_g1_to_affine`, `pt_g2_to_affine`: one inversion
//! per 16 points) and come back ready to use. Making 2.4e8 G1 points affine on the CPU took
//! most of a 2^26 setup's G1 time (21 s on 16 cores).

use anyhow::Result;
use blstrs::{G1Projective, G2Projective, Scalar};
use cudarc::driver::CudaFunction;
use rayon::prelude::*;
use std::sync::Arc;

use super::consts::{PT_FIXED_BASE_THREADS, PT_TO_AFFINE_BATCH};
use super::gpu::{Arg, Gpu};
use super::msm::{G2_JACOBIAN, JACOBIAN};
use super::pinned::Pinned;
use crate::params::fixed_base::{windows, FixedBase, TableCurve};
use crate::params::setup::Products;
use crate::telemetry::accounting::VramPurpose;

/// Scalars a launch takes: its Jacobian products are 0.6 GB in G1, 1.2 GB in G2.
const PIECE: usize = 1 << 22;
/// Threads a block, points a thread of the affine conversion.
const THREADS: u32 = PT_FIXED_BASE_THREADS;
const AFFINE_BATCH: u32 = PT_TO_AFFINE_BATCH;

pub(super) struct GpuProducts {
    pub gpu: Arc<Gpu>,
}

/// What differs between G1 and G2: the kernels, and the Jacobian form's size.
struct Curve {
    kernel: fn(&Gpu) -> &CudaFunction,
    to_affine: fn(&Gpu) -> &CudaFunction,
    jacobian_bytes: usize,
}

impl GpuProducts {
    fn products<G: TableCurve>(
        &self,
        curve: Curve,
        table: &FixedBase<G>,
        scalars: &[Scalar],
        tick: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<G::Affine>> {
        // blstrs' affine points are blst's (x, y), infinity all zero: the device's layout.
        assert_eq!(
            std::mem::size_of::<G::Affine>() * 3,
            curve.jacobian_bytes * 2
        );
        let gpu = &self.gpu;
        gpu.bind()?;
        let stream = gpu.stream()?;
        let entries = table.table();
        let dev_table = gpu.alloc(std::mem::size_of_val(entries), VramPurpose::Srs)?;
        gpu.h2d(&stream, dev_table.ptr, entries)?.wait()?;
        let piece = PIECE.min(scalars.len()).max(1);
        let dev_scalars = gpu.alloc(piece * 32, VramPurpose::Scratch)?;
        let dev_jac = gpu.alloc(piece * curve.jacobian_bytes, VramPurpose::Scratch)?;
        let affine = std::mem::size_of::<G::Affine>();
        let dev_aff = gpu.alloc(piece * affine, VramPurpose::Scratch)?;
        // Products come down into page-locked memory at the link's speed, then into fresh
        // memory on every core: one thread faults new pages in at ~1.7 GB/s, and a 2^26
        // setup's G1 queries are 23 GB.
        let mut staged = Pinned::new(gpu, piece * affine)?;
        let bits = table.bits() as u32;
        let nwin = windows(table.bits()) as u32;
        let mut out: Vec<G::Affine> = Vec::with_capacity(scalars.len());
        for chunk in scalars.chunks(piece) {
            let up = gpu.h2d(&stream, dev_scalars.ptr, chunk)?;
            let n = chunk.len() as u32;
            use Arg::{Ptr, U32};
            let args = [
                Ptr(dev_table.ptr),
                U32(bits),
                U32(nwin),
                Ptr(dev_scalars.ptr),
                U32(n),
                Ptr(dev_jac.ptr),
            ];
            let kernel = (curve.kernel)(gpu);
            gpu.launch(&stream, kernel, (n.div_ceil(THREADS), 1), THREADS, 0, &args)?;
            let blocks = n.div_ceil(THREADS * AFFINE_BATCH);
            let args = [Ptr(dev_jac.ptr), U32(n), Ptr(dev_aff.ptr)];
            gpu.launch(
                &stream,
                (curve.to_affine)(gpu),
                (blocks, 1),
                THREADS,
                0,
                &args,
            )?;
            let bytes = &mut staged.as_mut_slice()[..chunk.len() * affine];
            gpu.d2h(&stream, bytes, dev_aff.ptr)?.wait()?;
            // Finished with the rest of the stream.
            drop(up);
            out.par_extend(bytes.par_chunks_exact(affine).map(|b| {
                // SAFETY: the device wrote blst affine points, the layout of G::Affine.
                unsafe { std::ptr::read_unaligned(b.as_ptr() as *const G::Affine) }
            }));
            tick(chunk.len());
        }
        Ok(out)
    }
}

impl Products for GpuProducts {
    fn name(&self) -> String {
        format!("gpu{} ({})", self.gpu.ordinal, self.gpu.name)
    }

    fn g1(
        &self,
        table: &FixedBase<G1Projective>,
        scalars: &[Scalar],
        tick: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<blstrs::G1Affine>> {
        let curve = Curve {
            kernel: |g: &Gpu| &g.f.g1_fixed_base,
            to_affine: |g: &Gpu| &g.f.g1_to_affine,
            jacobian_bytes: JACOBIAN,
        };
        self.products(curve, table, scalars, tick)
    }

    fn g2(
        &self,
        table: &FixedBase<G2Projective>,
        scalars: &[Scalar],
        tick: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<blstrs::G2Affine>> {
        let curve = Curve {
            kernel: |g: &Gpu| &g.f.g2_fixed_base,
            to_affine: |g: &Gpu| &g.f.g2_to_affine,
            jacobian_bytes: G2_JACOBIAN,
        };
        self.products(curve, table, scalars, tick)
    }
}
