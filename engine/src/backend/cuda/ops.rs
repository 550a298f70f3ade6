//! Single operations on a GPU with host inputs and outputs: what `provetop check` compares
//! against the cpu backend (NTTs in every order, the H polynomial, MSMs in G1 and G2).

use anyhow::Result;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::CudaStream;
use ff::Field;

use super::consts::{PT_NTT_C_G, PT_NTT_C_G_INV, PT_NTT_C_N_INV};
use super::executor::CudaExecutor;
use super::gpu::{Arg, DevBuf};
use super::{msm, ntt};
use crate::telemetry::accounting::VramPurpose;

/// Which transform `ntt` runs, all in natural order in and out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttKind {
    /// y_i = Σ_j x_j ω^ij.
    Forward,
    /// The inverse of `Forward` (scaled by 1/n).
    Inverse,
    /// The forward transform of x_j · g^j: evaluations on the coset g·ω^i.
    CosetForward,
    /// The inverse of `CosetForward`: coefficients from evaluations on the coset g·ω^i.
    CosetInverse,
}

const FR: usize = 32;
/// Indices into the constants of `pt_ntt_consts`.
const C_N_INV: u64 = PT_NTT_C_N_INV as u64;
const C_G: u64 = PT_NTT_C_G as u64;
const C_G_INV: u64 = PT_NTT_C_G_INV as u64;

impl CudaExecutor {
    fn buf<T: crate::hostmem::PlainData>(
        &self,
        data: &[T],
        purpose: VramPurpose,
    ) -> Result<DevBuf> {
        let g = self.gpu();
        let b = g.alloc(std::mem::size_of_val(data), purpose)?;
        let s = g.stream()?;
        g.h2d(&s, b.ptr, data)?.wait()?;
        Ok(b)
    }

    /// One NTT of `x` (a power-of-two length) in the given order.
    pub fn ntt(&self, x: &mut [Scalar], kind: NttKind) -> Result<()> {
        let g = self.gpu();
        g.bind()?;
        let k = x.len().trailing_zeros();
        let s = g.stream()?;
        let t = ntt::Tables::build(g, &s, k)?;
        let data = self.buf(x, VramPurpose::Abc)?;
        let scratch = g.alloc(x.len() * FR, VramPurpose::Abc)?;
        match kind {
            NttKind::Forward => ntt::ntt(g, &s, &t, data.ptr, scratch.ptr, false)?,
            NttKind::Inverse => ntt::ntt(g, &s, &t, data.ptr, scratch.ptr, true)?,
            NttKind::CosetForward | NttKind::CosetInverse => {
                // The public coset transforms: g^j before the forward NTT, g^-j / n after the inverse.
                let table = g.alloc(x.len() * FR, VramPurpose::Scratch)?;
                let inverse = kind == NttKind::CosetInverse;
                let (base, scale) = if inverse {
                    (t.constant(C_G_INV), t.constant(C_N_INV))
                } else {
                    (t.constant(C_G), 0)
                };
                let blocks = (x.len() as u32).div_ceil(64 * 256);
                g.launch(
                    &s,
                    &g.f.fr_powers,
                    (blocks, 1),
                    256,
                    0,
                    &[
                        Arg::Ptr(table.ptr),
                        Arg::Ptr(base),
                        Arg::Ptr(scale),
                        Arg::U32(k),
                    ],
                )?;
                ntt::coset(g, &s, &t, data.ptr, scratch.ptr, table.ptr, inverse)?;
            }
        }
        g.d2h(&s, x, data.ptr)?.wait()?;
        Ok(())
    }

    /// The H polynomial's n − 1 coefficients from evaluations a, b, c (n each).
    pub fn h_poly(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Vec<Scalar>> {
        let g = self.gpu();
        g.bind()?;
        let n = a.len();
        let s = g.stream()?;
        let t = ntt::Tables::build(g, &s, n.trailing_zeros())?;
        let (da, db, dc) = (
            self.buf(a, VramPurpose::Abc)?,
            self.buf(b, VramPurpose::Abc)?,
            self.buf(c, VramPurpose::Abc)?,
        );
        let scratch = g.alloc(n * FR, VramPurpose::Abc)?;
        ntt::h_pipeline(
            g,
            &s,
            &t,
            [da.ptr, db.ptr, dc.ptr],
            scratch.ptr,
            &mut |_| Ok(()),
        )?;
        let mut h = vec![Scalar::from(0u64); n];
        g.d2h(&s, &mut h, dc.ptr)?.wait()?;
        h.truncate(n - 1);
        Ok(h)
    }

    /// Σ bases[i] · scalars[i] with every scalar through the Pippenger kernels.
    pub fn msm(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective> {
        let n = bases.len();
        let scratch = msm::scratch_bytes(n, n);
        let out = self.msm_on_device(bases, scalars, (scratch, msm::JACOBIAN), |b, o| {
            msm::enqueue(
                self.gpu(),
                b.stream,
                b.bases,
                b.scalars,
                (n, n),
                b.scratch,
                o,
            )
        })?;
        Ok(msm::jacobian(&out))
    }

    /// Σ bases[i] · scalars[i] in G2 through the G2 Pippenger kernels and the host's Horner,
    /// its windows sized by the scalars other than 0 and 1 as B in G2's tail MSM is.
    pub fn g2_msm(&self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective> {
        let n = bases.len();
        let terms = scalars
            .iter()
            .filter(|s| !bool::from(s.is_zero()) && **s != Scalar::ONE)
            .count();
        let scratch = msm::g2_scratch_bytes(n, terms);
        let mut windows = None;
        let room = msm::WINDOWS_MAX * msm::G2_JACOBIAN;
        let out = self.msm_on_device(bases, scalars, (scratch, room), |b, o| {
            let (inputs, bufs) = ((b.bases, b.scalars), (b.scratch, o));
            let w = msm::g2_enqueue(self.gpu(), b.stream, inputs, (n, terms), bufs)?;
            windows = Some(w);
            Ok(())
        })?;
        let w = windows.expect("g2_enqueue ran");
        Ok(msm::g2_combine(&out[..w.bytes()], w))
    }

    /// Uploads bases and scalars, gives `enqueue` them with `scratch` bytes of scratch and
    /// `out` bytes for its result, and reads the result back.
    fn msm_on_device<P: crate::hostmem::PlainData>(
        &self,
        bases: &[P],
        scalars: &[Scalar],
        (scratch, out): (usize, usize),
        enqueue: impl FnOnce(&MsmBuffers<'_>, u64) -> Result<()>,
    ) -> Result<Vec<u8>> {
        assert_eq!(bases.len(), scalars.len());
        let g = self.gpu();
        g.bind()?;
        let s = g.stream()?;
        let (db, ds) = (
            self.buf(bases, VramPurpose::Srs)?,
            self.buf(scalars, VramPurpose::Scratch)?,
        );
        let scratch = g.alloc(scratch, VramPurpose::Buckets)?;
        let result = g.alloc(out, VramPurpose::Scratch)?;
        let b = MsmBuffers {
            stream: &s,
            bases: db.ptr,
            scalars: ds.ptr,
            scratch: scratch.ptr,
        };
        enqueue(&b, result.ptr)?;
        let mut host = vec![0u8; out];
        g.d2h(&s, &mut host, result.ptr)?.wait()?;
        Ok(host)
    }

    /// Σ bases[idx[i]], the batch addition of scalar-one bases.
    pub fn sum(&self, bases: &[G1Affine], idx: &[u32]) -> Result<G1Projective> {
        let g = self.gpu();
        g.bind()?;
        let s = g.stream()?;
        let (db, di) = (
            self.buf(bases, VramPurpose::Srs)?,
            self.buf(idx, VramPurpose::Scratch)?,
        );
        let scratch = g.alloc(msm::sum_scratch_bytes(idx.len()), VramPurpose::Buckets)?;
        let result = g.alloc(msm::JACOBIAN, VramPurpose::Scratch)?;
        msm::sum_enqueue(g, &s, db.ptr, di.ptr, idx.len(), scratch.ptr, result.ptr)?;
        let mut out = vec![0u8; msm::JACOBIAN];
        g.d2h(&s, &mut out, result.ptr)?.wait()?;
        Ok(msm::jacobian(&out))
    }
}

/// An MSM's inputs on the device, for `msm_on_device`'s caller to enqueue over.
struct MsmBuffers<'a> {
    stream: &'a CudaStream,
    bases: u64,
    scalars: u64,
    scratch: u64,
}

/// Host-to-device copy rates, GB/s: from pinned memory, staged from pageable memory through
/// the pinned ring the executor uses, and straight from pageable memory.
#[derive(Clone, Copy, Debug)]
pub struct UploadRates {
    /// From page-locked memory alone (no host copy): the link's own rate.
    pub pinned: f64,
    /// From pageable memory through the executor's pinned staging ring.
    pub staged: f64,
    /// From pageable memory straight (the driver's own staging).
    pub pageable: f64,
}

impl CudaExecutor {
    /// Times one upload of `bytes` (at least 1 MiB) each way, after a 1 MiB warm-up; rates in GB/s.
    pub fn upload_rates(&self, bytes: usize) -> Result<UploadRates> {
        use super::pinned::Staging;
        use std::time::Instant;
        let g = self.gpu();
        g.bind()?;
        let s = g.stream()?;
        let dev = g.alloc(bytes, VramPurpose::Scratch)?;
        let host = vec![7u8; bytes];
        let rate = |t: Instant| bytes as f64 / t.elapsed().as_secs_f64() / 1e9;
        // Warm the path, then time each way once over `bytes`.
        let mut staging = Staging::new(g)?;
        staging.upload(g, &s, dev.ptr, &host[..1 << 20])?;
        g.sync(&s)?;
        let t = Instant::now();
        staging.upload_pinned_only(g, &s, dev.ptr, bytes)?;
        g.sync(&s)?;
        let pinned = rate(t);
        let t = Instant::now();
        staging.upload(g, &s, dev.ptr, &host)?;
        g.sync(&s)?;
        let staged = rate(t);
        let t = Instant::now();
        g.h2d(&s, dev.ptr, &host)?.wait()?;
        let pageable = rate(t);
        Ok(UploadRates {
            pinned,
            staged,
            pageable,
        })
    }
}
