//! SRS residency: a parameter set's G1 queries uploaded once and kept on the device while
//! `srs_residency` allows, H's query replaced by its shifted copies when they fit, and the B
//! query in G2 uploaded on first use.

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
    key: [u8; 48],
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
fn srs_key(p: &Parameters) -> [u8; 48] {
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
        let key = srs_key(p);
        let mut slot = self.srs.lock();
        if let Some(srs) = slot.as_ref().filter(|srs| srs.key == key) {
            return Ok(srs.clone());
        }
        // A new parameter set replaces the old one.
        *slot = None;
        let start = Instant::now();
        let mut up = |points: &[G1Affine]| -> Result<DevBuf> {
            let buf = self.alloc(points.len().max(1) * G1, VramPurpose::Srs, budget)?;
            staging.upload(&self.gpu, s, buf.ptr, points)?;
            Ok(buf)
        };
        let h = up(&p.h)?;
        let mut srs = Srs {
            key,
            h: HQuery::Plain(h),
            l: up(&p.l)?,
            a: up(&p.a)?,
            b_g1: up(&p.b_g1)?,
            b_g2: Mutex::default(),
        };
        self.gpu.sync(s)?;
        let bytes = (p.h.len() + p.l.len() + p.a.len() + p.b_g1.len()) * G1;
        steps.push(Stage::H2d, Engine::H2d, start, bytes as u64);
        if residency != Residency::Host && o.shifted_bases == ShiftedBases::Auto {
            srs.h = self.shift_h(srs.h, p, s, (budget, o.workers_per_device, b_g2), steps)?;
        }
        let srs = Arc::new(srs);
        if residency != Residency::Host {
            *slot = Some(srs.clone());
        }
        Ok(srs)
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
        let (free, _) = self.gpu.mem_info()?;
        let room = (free as usize).saturating_sub(q_bytes + tmp_bytes);
        let log2 = (n + 1).trailing_zeros();
        let others = another_workers_bytes(log2, n + 1, b_g2) * workers.saturating_sub(1);
        let spare = others + (4 << 30);
        let over_budget = match budget {
            Budget::Bytes(max) => !self
                .gpu
                .vram
                .fits_under((q_bytes + tmp_bytes + spare) as u64, max),
            Budget::Auto => false,
        };
        if room < spare || over_budget {
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
