//! SRS residency: a parameter set's G1 queries uploaded once and kept on the device (beside
//! other sets, `shelf`) while `srs_residency` allows, H's query replaced by its shifted copies
//! when they fit, and the B query in G2 uploaded on first use.

use anyhow::Result;
use blstrs::G1Affine;
use cudarc::driver::CudaStream;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;

use super::executor::CudaExecutor;
use super::gpu::{DevBuf, OutOfMemory};
use super::msm;
use super::pinned::Staging;
use super::workspace::another_workers_bytes;
use crate::backend::{Engine, RegionOptions, Steps};
use crate::config::{Budget, Residency, ShiftedBases};
use crate::params::Parameters;
use crate::telemetry::accounting::VramPurpose;
use crate::telemetry::Stage;

const G1: usize = 96;
const G2: usize = 192;

/// The device copy of a parameter set's G1 queries.
pub(super) struct Srs {
    pub h: HQuery,
    pub l: DevBuf,
    pub a: DevBuf,
    pub b_g1: DevBuf,
    /// The B query in G2, uploaded when B in G2 first runs here (`b_g2_on = gpu`).
    b_g2: Mutex<Option<Arc<DevBuf>>>,
}

/// The H query on the device: as uploaded, or its shifted copies (the bases among them) when
/// they fit beside a worker's buffers: H's MSM is the one with uniform scalars over all n.
pub(super) enum HQuery {
    Plain(DevBuf),
    Shifted(DevBuf, msm::Shifted),
}

/// Identifies a parameter set: its delta is fresh randomness of its setup.
pub(super) type SrsKey = [u8; 48];

fn srs_key(p: &Parameters) -> SrsKey {
    p.vk.delta_g1.to_compressed()
}

impl CudaExecutor {
    /// The parameter set's queries on the device, uploaded once while residency allows.
    pub(super) fn srs(
        &self,
        staging: &mut Staging,
        s: &CudaStream,
        p: &Parameters,
        (o, b_g2): (&RegionOptions, bool),
        steps: &mut Steps,
    ) -> Result<Arc<Srs>> {
        let (residency, budget) = (o.srs_residency, o.vram_budget);
        let keep = residency != Residency::Host;
        self.srs.get_or_load(&srs_key(p), keep, || {
            let start = Instant::now();
            let mut up = |points: &[G1Affine]| -> Result<DevBuf> {
                let buf = self.alloc(points.len().max(1) * G1, VramPurpose::Srs, budget)?;
                staging.upload(&self.gpu, s, buf.ptr, points)?;
                Ok(buf)
            };
            let h = up(&p.h)?;
            let mut srs = Srs {
                h: HQuery::Plain(h),
                l: up(&p.l)?,
                a: up(&p.a)?,
                b_g1: up(&p.b_g1)?,
                b_g2: Mutex::default(),
            };
            self.gpu.sync(s)?;
            let bytes = (p.h.len() + p.l.len() + p.a.len() + p.b_g1.len()) * G1;
            steps.push(Stage::H2d, Engine::H2d, start, bytes as u64);
            if keep && o.shifted_bases == ShiftedBases::Auto {
                srs.h = self.shift_h(srs.h, p, s, (budget, o.workers_per_device, b_g2), steps)?;
            }
            Ok(srs)
        })
    }

    /// H's shifted copies in place of its bases, when they fit with room left for the device's
    /// other workers' buffers (this worker's are allocated; B in G2's scratch among them when
    /// `b_g2`); else H as it is.
    fn shift_h(
        &self,
        h: HQuery,
        p: &Parameters,
        s: &CudaStream,
        (budget, workers, b_g2): (Budget, usize, bool),
        steps: &mut Steps,
    ) -> Result<HQuery> {
        let HQuery::Plain(bases) = h else {
            return Ok(h);
        };
        let n = p.h.len();
        let sh = msm::Shifted::for_points(n);
        let (q_bytes, tmp_bytes) = (sh.bytes(n), msm::shift_scratch_bytes(n, sh));
        let log2 = (n + 1).trailing_zeros();
        let others = another_workers_bytes(log2, n + 1, b_g2) * workers.saturating_sub(1);
        let spare = others + (4 << 30);
        let fits = || -> Result<bool> {
            let (free, _) = self.gpu.mem_info()?;
            let room = (free as usize).saturating_sub(q_bytes + tmp_bytes);
            let under_budget = match budget {
                Budget::Bytes(max) => self
                    .gpu
                    .vram
                    .fits_under((q_bytes + tmp_bytes + spare) as u64, max),
                Budget::Auto => true,
            };
            Ok(room >= spare && under_budget)
        };
        // Sets no proof is using make room before H goes without its shifted bases.
        let mut fit = fits()?;
        while !fit && self.evict_idle() {
            fit = fits()?;
        }
        if !fit {
            tracing::info!(
                "{}: H's shifted bases ({:.1} GB) do not fit; its MSM runs over the bases",
                self.name,
                q_bytes as f64 / 1e9
            );
            return Ok(HQuery::Plain(bases));
        }
        let start = Instant::now();
        // Another worker may have taken the room since: then H stays as it is.
        let bufs = self.gpu.alloc(q_bytes, VramPurpose::Srs).and_then(|q| {
            let tmp = self.gpu.alloc(tmp_bytes, VramPurpose::Scratch)?;
            Ok((q, tmp))
        });
        let (q, tmp) = match bufs {
            Ok(b) => b,
            Err(e) if e.downcast_ref::<OutOfMemory>().is_some() => {
                tracing::info!(
                    "{}: H's shifted bases: {e:#}; its MSM runs over the bases",
                    self.name
                );
                return Ok(HQuery::Plain(bases));
            }
            Err(e) => return Err(e),
        };
        steps.push(
            Stage::Alloc,
            Engine::Host,
            start,
            (q_bytes + tmp_bytes) as u64,
        );
        // Its kernels run once a parameter set, inside the first region: a span, so that the
        // device's busy time holds them as its utilisation does.
        let kernels = Instant::now();
        msm::shift_enqueue(&self.gpu, s, (bases.ptr, n), sh, q.ptr, tmp.ptr)?;
        self.gpu.sync(s)?;
        // Freeing the scratch waits for the device: inside the span, not an unnamed gap after.
        drop(tmp);
        steps.push(Stage::Resident, Engine::Compute, kernels, 0);
        tracing::info!(
            "{}: H's shifted bases (c = {}, {} windows, {:.1} GB) built in {:.2} s",
            self.name,
            sh.c,
            sh.windows,
            q_bytes as f64 / 1e9,
            start.elapsed().as_secs_f64()
        );
        Ok(HQuery::Shifted(q, sh))
    }

    /// The B query in G2 on the device, uploaded on first use.
    pub(super) fn b_g2_bases(
        &self,
        srs: &Srs,
        staging: &mut Staging,
        s: &CudaStream,
        p: &Parameters,
        budget: Budget,
        steps: &mut Steps,
    ) -> Result<Arc<DevBuf>> {
        let mut slot = srs.b_g2.lock();
        if let Some(b) = slot.as_ref() {
            return Ok(b.clone());
        }
        let start = Instant::now();
        let buf = self.alloc(p.b_g2.len().max(1) * G2, VramPurpose::Srs, budget)?;
        steps.push(Stage::Alloc, Engine::Host, start, buf.bytes as u64);
        let start = Instant::now();
        staging.upload(&self.gpu, s, buf.ptr, &p.b_g2)?;
        self.gpu.sync(s)?;
        steps.push(Stage::H2d, Engine::H2d, start, (p.b_g2.len() * G2) as u64);
        let buf = Arc::new(buf);
        *slot = Some(buf.clone());
        Ok(buf)
    }
}
