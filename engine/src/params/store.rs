//! Parameters in memory: loaded or generated once per circuit shape and shared by every job
//! of that shape, with their prepared verifying key.

use anyhow::{Context, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::cache::{check_counts, check_matches, Origin, ParamsCache};
use super::{io, setup, Parameters};
use crate::circuit::{Shape, Workload};
use crate::prover::PreparedVerifyingKey;

pub struct Loaded {
    pub params: Arc<Parameters>,
    pub pvk: Arc<PreparedVerifyingKey>,
    pub shape: Shape,
    pub origin: Origin,
}

pub struct ParamsStore {
    cache: ParamsCache,
    /// `--params FILE`: used for every workload whose shape it fits.
    file: Option<PathBuf>,
    loaded: Mutex<HashMap<String, Arc<Loaded>>>,
}

impl ParamsStore {
    pub fn new(cache_dir: Option<PathBuf>, file: Option<PathBuf>) -> Self {
        ParamsStore {
            cache: ParamsCache::new(cache_dir),
            file,
            loaded: Mutex::default(),
        }
    }

    pub fn cache(&self) -> &ParamsCache {
        &self.cache
    }

    /// Parameters for `workload`: from memory, the `--params` file, the cache, or a new setup.
    pub fn get(&self, workload: &Workload, progress: setup::Progress) -> Result<Arc<Loaded>> {
        let shape = workload.shape()?;
        if let Some(l) = self.loaded.lock().get(&shape.digest) {
            return Ok(l.clone());
        }
        let (params, origin) = match &self.file {
            Some(path) => {
                let start = Instant::now();
                let (ic, h, l) = io::peek_counts(path)?;
                check_counts(ic, h, l, &shape).with_context(|| {
                    format!("{} does not fit {}", path.display(), workload.label())
                })?;
                let p = io::load_params(path)?;
                check_matches(&p, &shape).with_context(|| {
                    format!("{} does not fit {}", path.display(), workload.label())
                })?;
                let seconds = start.elapsed().as_secs_f64();
                (
                    Arc::new(p),
                    Origin::File {
                        path: path.clone(),
                        seconds,
                    },
                )
            }
            None => self.cache.load_or_generate(workload, &shape, progress)?,
        };
        let loaded = Arc::new(Loaded {
            pvk: Arc::new(PreparedVerifyingKey::new(&params.vk)),
            params,
            shape,
            origin,
        });
        self.loaded
            .lock()
            .insert(loaded.shape.digest.clone(), loaded.clone());
        Ok(loaded)
    }
}
