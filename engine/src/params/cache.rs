//! The on-disk cache of generated parameters: one bellperson-format file per circuit shape,
//! under `$XDG_CACHE_HOME/provetop/params/` unless told otherwise.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::{io, Parameters, Shape};

/// Where parameters came from, for the report.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum Origin {
    /// Read from a file the user named.
    File {
        /// The file it was read from.
        path: PathBuf,
        /// Wall seconds checking and reading it.
        seconds: f64,
    },
    /// Read from the cache, keyed by the circuit's shape.
    Cached {
        /// The cache file it was read from.
        path: PathBuf,
        /// Wall seconds reading it.
        seconds: f64,
    },
    /// Made in this run (parameters generated, a circuit recorded).
    Generated {
        /// The cache file it was saved to; None when it could not be cached and lives for this run
        /// only.
        path: Option<PathBuf>,
        /// Wall seconds making it, not counting the save.
        seconds: f64,
    },
}

/// The on-disk cache of generated parameters, one bellperson-format file per circuit shape.
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
    /// A cache in `dir`, else in `params/` under `cache_root`.
    pub fn new(dir: Option<PathBuf>) -> Self {
        ParamsCache {
            dir: dir.unwrap_or_else(|| cache_root().join("params")),
        }
    }

    /// The folder the parameter files are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the parameters of the workload labelled `label`: `<label>-<first 16 hex
    /// digits of the digest>.params` in `dir`.
    pub fn path_for(&self, label: &str, shape: &Shape) -> PathBuf {
        self.dir
            .join(format!("{label}-{}.params", &shape.digest[..16]))
    }

    /// Loads cached parameters for the workload labelled `label`, or makes them with `generate`
    /// and caches them. A damaged cache file is reported and replaced; a cache that cannot be
    /// written costs only the caching.
    pub fn load_or_generate(
        &self,
        label: &str,
        shape: &Shape,
        generate: impl FnOnce() -> Result<Parameters>,
    ) -> Result<(Arc<Parameters>, Origin)> {
        let path = self.path_for(label, shape);
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
        let params = Arc::new(generate()?);
        let seconds = start.elapsed().as_secs_f64();
        let save = {
            let (dir, path, label, params) = (
                self.dir.clone(),
                path.clone(),
                label.to_string(),
                params.clone(),
            );
            move || save_generated(&dir, &path, &label, &params)
        };
        let path = match params.bytes() as u64 >= BACKGROUND_BYTES {
            true => save_in_background(save).then_some(path),
            false => save(),
        };
        Ok((params, Origin::Generated { path, seconds }))
    }
}

/// Sets at least this large are written to the cache beside the proofs that use them: a 32 GiB
/// PoRep's 47 GB take a minute of disk, which the first proofs need not wait for.
const BACKGROUND_BYTES: u64 = 1 << 30;

/// Cache writes still running; the process waits for them before it exits.
static WRITES: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Runs `save` on a thread of its own; false (with a warning: the set lives for this run only)
/// when the OS gives no thread.
fn save_in_background(save: impl FnOnce() -> Option<PathBuf> + Send + 'static) -> bool {
    let spawned = std::thread::Builder::new()
        .name("params-write".into())
        .spawn(move || {
            save();
        });
    match spawned {
        Ok(h) => {
            WRITES.lock().unwrap_or_else(|e| e.into_inner()).push(h);
            true
        }
        Err(e) => {
            tracing::warn!(
                "no thread to write the parameters to the cache ({e}); they live for this run only"
            );
            false
        }
    }
}

/// Waits for the parameter sets still being written to the cache, saying so when there are any:
/// a file cut short by the process's exit would cost the next start its whole setup.
pub fn finish_writes() {
    let pending = std::mem::take(&mut *WRITES.lock().unwrap_or_else(|e| e.into_inner()));
    let running = pending.iter().filter(|h| !h.is_finished()).count();
    if running > 0 {
        eprintln!("params: finishing {running} cache write(s) before exiting");
    }
    for h in pending {
        let _ = h.join();
    }
}

/// Writes a generated set into the cache at `path`, marked as generated; the path, or None
/// (with a warning) when it could not be cached and lives for this run only.
fn save_generated(dir: &Path, path: &Path, label: &str, params: &Parameters) -> Option<PathBuf> {
    let start = Instant::now();
    let saved = std::fs::create_dir_all(dir)
        .map_err(anyhow::Error::from)
        .and_then(|_| not_filecoins(dir))
        .and_then(|_| room_for(dir, params.bytes() as u64))
        .and_then(|_| set_aside(path))
        .and_then(|_| io::save_params(params, path))
        .and_then(|_| mark_generated(path, label));
    match saved {
        Ok(()) => {
            tracing::info!(
                "cached {} in {:.1} s",
                path.display(),
                start.elapsed().as_secs_f64()
            );
            Some(path.to_path_buf())
        }
        Err(e) => {
            tracing::warn!(
                "could not cache params in {} ({e:#}); they live for this run only",
                dir.display()
            );
            None
        }
    }
}

/// Generated parameters never go into Filecoin's parameter folder (`$FIL_PROOFS_PARAMETER_CACHE`,
/// which `--params-dir` sets, or any folder holding its `v28-…` files): a rig's proofs must
/// use the published ones, and a generated file beside them could be taken for one.
fn not_filecoins(dir: &Path) -> Result<()> {
    let same = |other: &Path| match (dir.canonicalize(), other.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let env = std::env::var_os("FIL_PROOFS_PARAMETER_CACHE").filter(|d| !d.is_empty());
    let holds_filecoins = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with("v28-"));
    if env.is_some_and(|d| same(Path::new(&d))) || holds_filecoins {
        bail!(
            "{} is Filecoin's parameter folder; generated parameters are kept apart from it \
             (--params-cache names another folder)",
            dir.display()
        );
    }
    Ok(())
}

/// A file already at `path` (an unusable cache file) is kept beside it as
/// `<name>.unusable-<seconds since 1970>`, never written over.
fn set_aside(path: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let aside = path.with_extension(format!("params.unusable-{secs}"));
    std::fs::rename(path, &aside)?;
    tracing::warn!(
        "kept the unusable {} as {}",
        path.display(),
        aside.display()
    );
    Ok(())
}

/// Beside a generated set, `<name>.params.generated` says what it is: made here with fresh
/// toxic waste, for tests and benchmarks, never for proofs that go on chain.
fn mark_generated(path: &Path, label: &str) -> Result<()> {
    let note = format!(
        "{} holds Groth16 parameters for {label} generated by provetop {} with fresh random \
         toxic waste, discarded after use. They are for tests and benchmarks: proofs made with \
         them verify only against this file's own verifying key, never on chain, where \
         Filecoin's published parameters are required.\n",
        path.display(),
        env!("CARGO_PKG_VERSION")
    );
    std::fs::write(path.with_extension("params.generated"), note)?;
    Ok(())
}

/// Room on `dir`'s file system for a file of `bytes`, with a GiB to spare: a 2^27 parameter
/// set (~77 GB) is generated in the run and not cached where the disk cannot hold it, rather
/// than filling the disk and failing at the end.
pub(crate) fn room_for(dir: &Path, bytes: u64) -> Result<()> {
    let free = free_bytes(dir)?;
    if free < bytes + (1 << 30) {
        bail!(
            "they take {:.1} GB and the disk has {:.1} GB free",
            bytes as f64 / 1e9,
            free as f64 / 1e9
        );
    }
    Ok(())
}

/// Bytes an unprivileged process may still write on `dir`'s file system.
fn free_bytes(dir: &Path) -> Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: statvfs is a plain C struct of integers, for which all zeros is a value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs fills the struct it is given and reads a NUL-terminated path.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        bail!(
            "statvfs {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        );
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_in_the_background_is_finished_before_the_process_exits() {
        let dir = tempfile::tempdir().unwrap();
        let (shape, p) = tiny();
        let path = dir.path().join("set.params");
        let saving = (dir.path().to_path_buf(), path.clone(), Arc::new(p));
        let background = save_in_background(move || {
            // Slower than the check below, were it not waited for.
            std::thread::sleep(std::time::Duration::from_millis(300));
            save_generated(&saving.0, &saving.1, "tiny", &saving.2)
        });
        assert!(background && !path.exists());
        finish_writes();
        let again = io::load_params(&path).unwrap();
        check_matches(&again, &shape).unwrap();
        assert!(path.with_extension("params.generated").exists());
    }

    fn tiny() -> (Shape, Parameters) {
        use crate::circuit::Workload;
        let w = Workload::Synthetic {
            log2_constraints: 4,
        };
        let shape = w.shape().unwrap();
        let none = |_: &str, _: usize, _: usize| {};
        let p = w
            .generate_params(&shape, &none, &super::super::setup::CpuProducts)
            .unwrap();
        (shape, p)
    }

    #[test]
    fn generated_sets_are_marked_and_never_written_over_a_file_or_among_filecoins() {
        let (shape, p) = tiny();
        let dir = tempfile::tempdir().unwrap();
        let cache = ParamsCache::new(Some(dir.path().to_path_buf()));
        let path = cache.path_for("k4", &shape);
        std::fs::write(&path, b"not parameters").unwrap();
        let (_, origin) = cache
            .load_or_generate("k4", &shape, || Ok(p.clone()))
            .unwrap();
        assert!(matches!(origin, Origin::Generated { path: Some(_), .. }));
        // The unusable file is kept aside, the new one marked as generated.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.contains(".params.unusable-")),
            "{names:?}"
        );
        let note = std::fs::read_to_string(path.with_extension("params.generated")).unwrap();
        assert!(note.contains("never on chain"), "{note}");
        assert!(io::load_params(&path).is_ok());

        // A folder of Filecoin's files gets none.
        let fil = tempfile::tempdir().unwrap();
        std::fs::write(fil.path().join("v28-stacked-proof-of-replication.vk"), b"").unwrap();
        let cache = ParamsCache::new(Some(fil.path().to_path_buf()));
        let (_, origin) = cache.load_or_generate("k4", &shape, || Ok(p)).unwrap();
        assert!(matches!(origin, Origin::Generated { path: None, .. }));
        assert_eq!(std::fs::read_dir(fil.path()).unwrap().count(), 1);
    }

    #[test]
    fn parameters_larger_than_the_disks_free_room_are_not_written() {
        let dir = tempfile::tempdir().unwrap();
        assert!(room_for(dir.path(), 1).is_ok());
        let e = room_for(dir.path(), u64::MAX / 4).unwrap_err().to_string();
        assert!(e.contains("GB free"), "{e}");
        assert!(free_bytes(&dir.path().join("missing")).is_err());
    }
}
