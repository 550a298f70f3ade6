//! Recorded circuits cached beside the parameters: one file per circuit shape,
//! `<label>-<digest prefix>.r1cs` in the params cache's folder, keyed and checked like a
//! parameter file. An unusable file (damaged, foreign, another version) is recorded again with a
//! warning; a cache that cannot be written costs only the caching.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::{file, Precompiled};
use crate::circuit::{Shape, Workload};
use crate::params::cache::{cache_root, room_for, Origin};
use crate::params::setup::Progress;

/// The on-disk cache of recorded circuits (`.r1cs` files), in the params cache's folder unless told
/// otherwise.
pub struct CircuitCache {
    dir: PathBuf,
}

impl CircuitCache {
    /// The folder of `--params-cache`, else `$XDG_CACHE_HOME/provetop/params`.
    pub fn new(dir: Option<PathBuf>) -> Self {
        CircuitCache {
            dir: dir.unwrap_or_else(|| cache_root().join("params")),
        }
    }

    /// The folder the recorded circuits are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `workload`'s recorded circuit: `<label>-<first 16 hex digits of the
    /// digest>.r1cs` in `dir`.
    pub fn path_for(&self, workload: &Workload, shape: &Shape) -> PathBuf {
        self.dir
            .join(format!("{}-{}.r1cs", workload.label(), &shape.digest[..16]))
    }

    /// The recorded circuit of `workload`, from the cache or recorded now (and cached).
    pub fn load_or_record(
        &self,
        workload: &Workload,
        shape: &Shape,
        progress: Progress,
    ) -> Result<(Arc<Precompiled>, Origin)> {
        let path = self.path_for(workload, shape);
        let start = Instant::now();
        if path.exists() {
            match file::load(&path).and_then(|pc| fits(&pc, shape).map(|_| pc)) {
                Ok(pc) => {
                    let seconds = start.elapsed().as_secs_f64();
                    tracing::info!("recorded circuit {} read in {seconds:.1} s", path.display());
                    return Ok((Arc::new(pc), Origin::Cached { path, seconds }));
                }
                Err(e) => tracing::warn!(
                    "cached circuit {} is unusable ({e:#}); recording it again",
                    path.display()
                ),
            }
        }
        let pc = workload.record(shape, progress)?;
        let seconds = start.elapsed().as_secs_f64();
        tracing::info!(
            "recorded {} in {seconds:.1} s: {} terms, {:.1} MB",
            workload.label(),
            pc.nnz(),
            pc.bytes() as f64 / 1e6
        );
        let saved = std::fs::create_dir_all(&self.dir)
            .map_err(anyhow::Error::from)
            .and_then(|_| room_for(&self.dir, pc.file_bytes()))
            .and_then(|_| file::save(&pc, &path));
        let path = match saved {
            Ok(()) => Some(path),
            Err(e) => {
                tracing::warn!(
                    "could not cache the recorded circuit in {} ({e:#}); it lives for this run only",
                    self.dir.display()
                );
                None
            }
        };
        Ok((Arc::new(pc), Origin::Generated { path, seconds }))
    }
}

/// A recorded circuit fits a shape when it was recorded for that digest with its counts.
pub(super) fn fits(pc: &Precompiled, shape: &Shape) -> Result<()> {
    if pc.digest != shape.digest {
        bail!("it was recorded for another circuit (digest {})", pc.digest);
    }
    let got = (pc.num_inputs, pc.num_aux, pc.num_constraints);
    let want = (shape.num_inputs, shape.num_aux, shape.num_constraints);
    if got != want {
        bail!("it has (inputs, aux, constraints) {got:?}, the circuit {want:?}");
    }
    Ok(())
}
