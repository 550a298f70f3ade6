//! The region's uploads on the copy stream: a, b and c (or the witness they are evaluated
//! from on the device), then the witness MSMs' scalars, each piece marked on the timeline.

use anyhow::Result;
use cudarc::driver::CudaStream;

use super::super::executor::CudaExecutor;
use super::super::gpu::Timeline;
use super::super::pinned::copy_bytes;
use super::super::prestage::{self, Witness};
use super::super::workspace::{StreamSet, FR};
use super::plan::{AbcFrom, Plan};
use crate::backend::RegionInput;

/// The uploads' marks on the copy stream.
pub(super) struct Uploaded {
    /// Before the first copy and after the last.
    pub(super) start: usize,
    pub(super) end: usize,
    /// After a, b and c each arrived (padding included).
    pub(super) abc: [usize; 3],
    pub(super) bytes: u64,
}

impl CudaExecutor {
    /// Everything the region reads goes up on the copy stream: a, b and c first (each
    /// zero-padded to the domain, then marked, so the H pipeline starts on each as it
    /// arrives), or the witness they are evaluated from on the device; then the witness MSMs'
    /// scalars while the NTTs and H's MSM run.
    pub(super) fn upload(
        &self,
        set: &mut StreamSet,
        plan: &Plan<'_>,
        input: &RegionInput<'_>,
        tl: &mut Timeline,
    ) -> Result<Uploaded> {
        let copy = set.copy.clone();
        let ws = set.ws.as_ref().expect("workspace allocated");
        let n = plan.n;
        let start = tl.mark(&copy)?;
        let mut bytes = 0u64;
        let abc_dst = &plan.abc_dst(ws)[..3];
        let mut abc = [0; 3];
        match plan.abc_from {
            AbcFrom::Block(w) => {
                // Straight from the page-locked block: the copy engine's work alone.
                for (i, dst) in abc_dst.iter().enumerate() {
                    bytes += self.piece(tl, &copy, w, *dst, w.layout.abc[i], FR)?;
                    abc[i] = self.pad_abc(tl, &copy, *dst, w.layout.abc[i].len, n)?;
                }
            }
            AbcFrom::Vectors => {
                for (i, (dst, v)) in abc_dst.iter().zip(&input.abc).enumerate() {
                    set.staging
                        .upload_timed(&self.gpu, &copy, *dst, v, &copy_bytes, tl)?;
                    bytes += (v.len() * FR) as u64;
                    abc[i] = self.pad_abc(tl, &copy, *dst, v.len(), n)?;
                }
            }
            AbcFrom::Device(c, staged) => {
                // The witness at the start of the MSM scratch, which the products use first.
                let dst = ws.msm.ptr;
                match staged {
                    Some(w) => bytes += self.piece(tl, &copy, w, dst, w.layout.witness, FR)?,
                    None => {
                        let parts = [
                            (dst, input.input),
                            (dst + (input.input.len() * FR) as u64, input.aux),
                        ];
                        for (at, part) in parts {
                            set.staging.upload_timed(
                                &self.gpu,
                                &copy,
                                at,
                                part,
                                &copy_bytes,
                                tl,
                            )?;
                        }
                        bytes += (c.columns() * FR) as u64;
                    }
                }
                abc = [tl.mark(&copy)?; 3];
            }
        }
        if let Some(w) = plan.staged {
            for i in 0..3 {
                let (scalars, idx) = plan.tail_dst(ws, i);
                bytes += self.piece(tl, &copy, w, scalars, w.layout.tails[i], FR)?;
                bytes += self.piece(tl, &copy, w, idx, w.layout.ones[i], 4)?;
            }
        } else {
            for (i, sp) in plan.splits.iter().flatten().enumerate() {
                let (scalars, idx) = plan.tail_dst(ws, i);
                if !sp.tail.is_empty() {
                    set.staging.upload_timed(
                        &self.gpu,
                        &copy,
                        scalars,
                        sp.tail,
                        &prestage::zero_ones,
                        tl,
                    )?;
                }
                if !sp.ones.is_empty() {
                    set.staging
                        .upload_timed(&self.gpu, &copy, idx, &sp.ones, &copy_bytes, tl)?;
                }
                bytes += (sp.tail.len() * FR + sp.ones.len() * 4) as u64;
            }
        }
        let end = tl.mark(&copy)?;
        Ok(Uploaded {
            start,
            end,
            abc,
            bytes,
        })
    }

    /// Copies one section of the prestaged block to `dst` on the copy stream, marked as a
    /// piece of the upload; returns its bytes.
    pub(super) fn piece(
        &self,
        tl: &mut Timeline,
        copy: &CudaStream,
        w: &Witness,
        dst: u64,
        sec: prestage::Section,
        elem: usize,
    ) -> Result<u64> {
        let piece = sec.bytes(elem);
        let m0 = tl.mark(copy)?;
        // SAFETY: the section lies in the prestaged block, page-locked and held by `input`
        // until `region` returns, which waits for this copy first (the compute stream waits
        // on the copy stream's marks, and a failed region on both).
        unsafe { self.gpu.h2d_pinned(copy, dst, w.block.ptr(sec.at), piece)? };
        let m1 = tl.mark(copy)?;
        tl.pieces.push((m0, m1, piece as u64));
        Ok(piece as u64)
    }

    /// Zeroes a, b or c past its `len` evaluations to the domain's `n` on the copy stream and
    /// marks the input ready.
    pub(super) fn pad_abc(
        &self,
        tl: &mut Timeline,
        copy: &CudaStream,
        dst: u64,
        len: usize,
        n: usize,
    ) -> Result<usize> {
        self.gpu
            .zero_bytes(copy, dst + (len * FR) as u64, (n - len) * FR)?;
        tl.mark(copy)
    }
}
