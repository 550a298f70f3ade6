//! Parameter generation's fixed-base products on a GPU (`pt_g1_fixed_base`,
//! `pt_g2_fixed_base`): the window table goes up once, the scalars in pieces; each piece's
//! Jacobian products come back and are made affine on the CPU's threads while the GPU computes
//! the next piece.

use anyhow::Result;
use blstrs::{G1Projective, G2Projective, Scalar};
use cudarc::driver::CudaFunction;
use rayon::prelude::*;
use std::sync::Arc;

use super::executor::{g2_jacobian, jacobian};
use super::gpu::{Arg, Gpu};
use super::msm::{G2_JACOBIAN, JACOBIAN};
use crate::params::fixed_base::{windows, FixedBase, TableCurve};
use crate::params::setup::Products;
use crate::telemetry::accounting::VramPurpose;

/// Scalars a launch takes: its Jacobian products are 0.6 GB in G1, 1.2 GB in G2.
const PIECE: usize = 1 << 22;
/// Threads a block (`PT_FIXED_BASE_THREADS`).
const THREADS: u32 = 128;

pub(super) struct GpuProducts {
    pub gpu: Arc<Gpu>,
}

/// What differs between G1 and G2: the kernel, and how a product comes back.
struct Curve<G> {
    kernel: fn(&Gpu) -> &CudaFunction,
    jacobian_bytes: usize,
    read: fn(&[u8]) -> G,
}

impl GpuProducts {
    fn products<G: TableCurve>(
        &self,
        curve: Curve<G>,
        table: &FixedBase<G>,
        scalars: &[Scalar],
        tick: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<G::Affine>> {
        let gpu = &self.gpu;
        gpu.bind()?;
        let stream = gpu.stream()?;
        let entries = table.table();
        let dev_table = gpu.alloc(std::mem::size_of_val(entries), VramPurpose::Srs)?;
        gpu.h2d(&stream, dev_table.ptr, entries)?;
        let piece = PIECE.min(scalars.len()).max(1);
        let dev_scalars = gpu.alloc(piece * 32, VramPurpose::Scratch)?;
        let dev_out = gpu.alloc(piece * curve.jacobian_bytes, VramPurpose::Scratch)?;
        let bits = table.bits() as u32;
        let nwin = windows(table.bits()) as u32;
        let mut out = vec![G::Affine::default(); scalars.len()];
        let mut host = vec![0u8; piece * curve.jacobian_bytes];
        let mut pending: Option<(usize, usize)> = None;
        let mut finish = |host: &[u8], (at, len): (usize, usize)| {
            let proj: Vec<G> = host[..len * curve.jacobian_bytes]
                .par_chunks_exact(curve.jacobian_bytes)
                .map(curve.read)
                .collect();
            out[at..at + len]
                .par_chunks_mut(4096)
                .zip(proj.par_chunks(4096))
                .for_each(|(o, p)| G::batch_to_affine(p, o));
            tick(len);
        };
        for (i, chunk) in scalars.chunks(piece).enumerate() {
            gpu.h2d(&stream, dev_scalars.ptr, chunk)?;
            let n = chunk.len() as u32;
            gpu.launch(
                &stream,
                (curve.kernel)(gpu),
                (n.div_ceil(THREADS), 1),
                THREADS,
                0,
                &[
                    Arg::Ptr(dev_table.ptr),
                    Arg::U32(bits),
                    Arg::U32(nwin),
                    Arg::Ptr(dev_scalars.ptr),
                    Arg::U32(n),
                    Arg::Ptr(dev_out.ptr),
                ],
            )?;
            // The previous piece is made affine while this one computes.
            if let Some(p) = pending.take() {
                finish(&host, p);
            }
            gpu.d2h(
                &stream,
                &mut host[..chunk.len() * curve.jacobian_bytes],
                dev_out.ptr,
            )?;
            gpu.sync(&stream)?;
            pending = Some((i * piece, chunk.len()));
        }
        if let Some(p) = pending {
            finish(&host, p);
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
            jacobian_bytes: JACOBIAN,
            read: jacobian,
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
            jacobian_bytes: G2_JACOBIAN,
            read: g2_jacobian,
        };
        self.products(curve, table, scalars, tick)
    }
}
