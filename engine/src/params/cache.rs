//! The on-disk cache of generated parameters: one bellperson-format file per circuit shape,
//! under `$XDG_CACHE_HOME/provetop/params/` unless told otherwise.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::{io, setup, Parameters};
use crate::circuit::{Shape, Workload};

/// Where parameters came from, for the report.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum Origin {
    /// Read from a file the user named.
    File {
        path: PathBuf,
        seconds: f64,
    },
    Cached {
        path: PathBuf,
        seconds: f64,
    },
    Generated {
        path: Option<PathBuf>,
        seconds: f64,
    },
}

pub struct ParamsCache {
    dir: PathBuf,
}

/// `$XDG_CACHE_HOME/provetop`, else `~/.cache/provetop`, else a temporary folder.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("provetop");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => PathBuf::from(home).join(".cache").join("provetop"),
        None => std::env::temp_dir().join("provetop"),
    }
}

impl ParamsCache {
    pub fn new(dir: Option<PathBuf>) -> Self {
        ParamsCache {
            dir: dir.unwrap_or_else(|| cache_root().join("params")),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path_for(&self, workload: &Workload, shape: &Shape) -> PathBuf {
        self.dir.join(format!(
            "{}-{}.params",
            workload.label(),
            &shape.digest[..16]
        ))
    }

    /// Loads cached parameters for `workload`, or generates and caches them. A damaged cache
    /// file is reported and replaced; a cache that cannot be written costs only the caching.
    pub fn load_or_generate(
        &self,
        workload: &Workload,
        shape: &Shape,
        progress: setup::Progress,
        products: &dyn setup::Products,
    ) -> Result<(Arc<Parameters>, Origin)> {
        let path = self.path_for(workload, shape);
        let start = Instant::now();
        if path.exists() {
            match io::load_params(&path).and_then(|p| check_matches(&p, shape).map(|_| p)) {
                Ok(p) => {
                    let seconds = start.elapsed().as_secs_f64();
                    return Ok((Arc::new(p), Origin::Cached { path, seconds }));
                }
                Err(e) => tracing::warn!(
                    "cached params {} are unusable ({e:#}); generating new ones",
                    path.display()
                ),
            }
        }
        let params = workload.generate_params(shape, progress, products)?;
        let seconds = start.elapsed().as_secs_f64();
        let saved = std::fs::create_dir_all(&self.dir)
            .map_err(anyhow::Error::from)
            .and_then(|_| io::save_params(&params, &path));
        let path = match saved {
            Ok(()) => Some(path),
            Err(e) => {
                tracing::warn!(
                    "could not cache params in {} ({e:#}); they live for this run only",
                    self.dir.display()
                );
                None
            }
        };
        Ok((Arc::new(params), Origin::Generated { path, seconds }))
    }
}

/// The IC, H and L queries' lengths fit the circuit (what a file's header already tells).
pub fn check_counts(ic: usize, h: usize, l: usize, shape: &Shape) -> Result<()> {
    let domain = 1usize << shape.log2_domain();
    let checks = [
        ("vk.ic (public inputs)", ic, shape.num_inputs),
        ("H (domain size − 1)", h, domain - 1),
        ("L (aux variables)", l, shape.num_aux),
    ];
    for (what, have, want) in checks {
        if have != want {
            bail!("params do not match the circuit: {what} has {have} points, the circuit needs {want}");
        }
    }
    Ok(())
}

/// Parameters fit a circuit when every query has the length its shape needs.
pub fn check_matches(p: &Parameters, shape: &Shape) -> Result<()> {
    check_counts(p.vk.ic.len(), p.h.len(), p.l.len(), shape)?;
    if p.a.len() > shape.num_inputs + shape.num_aux || p.b_g1.len() != p.b_g2.len() {
        bail!("params do not match the circuit: the A or B queries have impossible lengths");
    }
    Ok(())
}
