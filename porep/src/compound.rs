//! One Filecoin proof's partitions as the engine's [`CircuitSource`]: each kind says how its
//! compound proof builds a partition's circuit and the blank one; the shape, parameters,
//! recorded matrices and witnesses follow the same way for every kind, and so does
//! naming them as the engine's external circuit, which the proof's jobs carry.

use anyhow::Result;
use blstrs::Scalar as Fr;
use provetop_engine::circuit::external::{CircuitSource, External};
use provetop_engine::circuit::precompiled::{self, Precompiled, Witness};
use provetop_engine::circuit::{synthesize_generic, Assignment, Shape, Workload};
use provetop_engine::params::{setup, setup::Progress, Parameters};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::filecoin;
use crate::kind::Kind;

/// A proof's circuits as the engine proves them, and where filecoin-proofs finds their keys.
#[derive(Clone, Debug)]
pub struct Registered {
    /// The engine's name for them, which labels their jobs and keys their parameters.
    pub name: String,
    /// The circuits themselves, named `name`: what [`Registered::workload`] carries.
    pub circuit: External,
    /// Groth16 partitions in one proof.
    pub partitions: u32,
    /// Filecoin's `.params` file for the circuit, from `--params-dir`.
    pub params_file: Option<PathBuf>,
    /// Where filecoin-proofs looks for the verifying key.
    pub vk_dir: PathBuf,
    /// Filecoin's name for the circuit's parameters (without `v28-` and the extension).
    pub cache_id: String,
}

/// Makes `parts` the engine's circuit `name`; with `params_dir`, Filecoin's parameters of the
/// circuit (`what`, as the error names it) must be there.
pub(crate) fn register<P: Partitions>(
    name: &str,
    parts: P,
    params_dir: Option<&Path>,
    what: &str,
) -> Result<Registered> {
    let vk_dir = filecoin::configure(params_dir)?;
    let cache_id = parts.cache_id().to_string();
    let params_file = params_file(params_dir, &cache_id, what)?;
    let partitions = parts.count();
    Ok(Registered {
        name: name.to_string(),
        circuit: External::new(name, Source::of(parts)),
        partitions,
        params_file,
        vk_dir,
        cache_id,
    })
}

impl Registered {
    /// The workload that proves these circuits: each job of it carries them.
    pub fn workload(&self) -> Workload {
        Workload::External {
            circuit: self.circuit.clone(),
        }
    }
}

/// Filecoin's parameter file of a circuit (its `cache_id`) is not in the folder: a
/// [`MissingParams`] error names it, so a server can refuse the request before it is a job.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingParams {
    /// The file looked for.
    pub file: PathBuf,
    /// The circuit's parameters, as the message names them.
    pub what: String,
}

impl std::fmt::Display for MissingParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no {} in {} (the parameters of {}; `curio fetch-params` or `paramfetch` downloads them)",
            self.file.file_name().unwrap_or_default().to_string_lossy(),
            self.file.parent().unwrap_or(Path::new("")).display(),
            self.what
        )
    }
}

impl std::error::Error for MissingParams {}

/// With `params_dir`, the `.params` file of `cache_id` in it, which must be there (else a
/// [`MissingParams`] error); None without a folder.
pub(crate) fn params_file(
    params_dir: Option<&Path>,
    cache_id: &str,
    what: &str,
) -> Result<Option<PathBuf>> {
    let Some(dir) = params_dir else {
        return Ok(None);
    };
    let file = dir.join(storage_proofs_core::parameter_cache::parameter_id(cache_id));
    if !file.is_file() {
        return Err(MissingParams {
            file,
            what: what.to_string(),
        }
        .into());
    }
    Ok(Some(file))
}

/// Runs a check of vanilla proofs (milliseconds to seconds) on a pool of its own, rayon's
/// global one may be busy with a proof for many seconds; a panic in Filecoin's crates, which
/// assume well-formed proofs in places, is the check's error.
pub(crate) fn checked<T: Send>(check: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    static CHECKS: OnceLock<rayon::ThreadPool> = OnceLock::new();
    let pool = CHECKS.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .thread_name(|i| format!("vanilla-check-{i}"))
            .build()
            .expect("a two-thread pool can be built")
    });
    pool.install(|| guarded(check))
}

thread_local! {
    /// Set while this thread runs a guarded check: its panics are that check's error.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once) a panic hook that says nothing for a panic inside a guarded check, on its
/// own thread or the check pool's: it is the check's error, not a crash, and its text and
/// backtrace on stderr would tell an operator that a client's bytes broke the server. Every
/// other panic goes to the hook that was there before.
fn quiet_guarded_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_pool = std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with("vanilla-check-"));
            if !(GUARDED.with(|g| g.get()) || in_pool) {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, a panic in it (Filecoin's crates assume well-formed proofs in places) becoming
/// its error: `malformed (the panic's message)`, with nothing printed.
pub fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    quiet_guarded_panics();
    let outer = GUARDED.with(|g| g.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    result.unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(anyhow::anyhow!("malformed ({why})"))
    })
}

/// A proof's partitions, as its compound proof (`CompoundProof::circuit`, `blank_circuit`)
/// builds them.
pub(crate) trait Partitions: Send + Sync + 'static {
    /// The circuit type of one partition.
    type Circuit: bellpepper_core::Circuit<Fr>;
    /// Partitions of one proof.
    fn count(&self) -> u32;
    /// Partition `k`'s circuit with its witness.
    fn circuit(&self, k: usize) -> Result<Self::Circuit>;
    /// The circuit without values: the structure every proof of the kind and size shares.
    fn blank(&self) -> Self::Circuit;
    /// Filecoin's parameter id of that structure (one per kind, size and version).
    fn cache_id(&self) -> &str;
    /// The proof kind.
    fn kind(&self) -> Kind;
    /// Partition `k`'s witness alone, with room for `aux` values: the circuit's synthesis in a
    /// system that keeps values only, unless the kind has a faster way.
    fn witness(&self, k: usize, aux: usize) -> Result<Witness> {
        precompiled::witness_of(self.circuit(k)?, aux)
    }
    /// Whether [`Self::witness`] uses several cores: the synthesis through the gadgets is one
    /// core's (snap-2KiB's witness: 0.40 s on one thread and on two; the porep bench).
    fn parallel_witness(&self) -> bool {
        false
    }
}

/// The engine's view of a [`Partitions`].
pub(crate) struct Source<P> {
    parts: P,
    shape: OnceLock<Shape>,
}

impl<P: Partitions> Source<P> {
    fn of(parts: P) -> Arc<dyn CircuitSource> {
        Arc::new(Source {
            parts,
            shape: OnceLock::new(),
        })
    }

    fn index(&self, partition: u32) -> usize {
        partition as usize % self.parts.count().max(1) as usize
    }
}

/// Shapes by parameter cache id. Every proof of one kind, size and version has the same circuit
/// structure, so each served request's source finds it here instead of synthesising its blank
/// circuit again (seconds of one core for each 8MiB PoRep request, which serialised `serve`).
/// Beyond the process, a shape is kept on disk (`shapes/` in provetop's cache) under its cache
/// id and this executable's size and time: deriving it is a pass over every constraint (88 s of
/// one core at 32 GiB), which a rig's next start then skips, and a new build derives again.
fn known_shape(cache_id: &str, derive: impl FnOnce() -> Result<Shape>) -> Result<Shape> {
    static SHAPES: OnceLock<Mutex<HashMap<String, Shape>>> = OnceLock::new();
    let shapes = || {
        SHAPES
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(s) = shapes().get(cache_id) {
        return Ok(s.clone());
    }
    let s = kept_or_derived(shape_file(cache_id).as_deref(), derive)?;
    shapes().insert(cache_id.to_string(), s.clone());
    Ok(s)
}

/// The shape kept in `file`, else derived and kept there (a damaged file is derived again).
fn kept_or_derived(file: Option<&Path>, derive: impl FnOnce() -> Result<Shape>) -> Result<Shape> {
    let kept = file.and_then(|f| std::fs::read(f).ok());
    if let Some(s) = kept.and_then(|b| serde_json::from_slice::<Shape>(&b).ok()) {
        return Ok(s);
    }
    let s = derive()?;
    if let Some(f) = file {
        keep_shape(f, &s);
    }
    Ok(s)
}

/// Where the shape of `cache_id` is kept for this executable; None when the executable cannot
/// be identified (then shapes are derived in every process).
fn shape_file(cache_id: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.metadata().ok()?;
    let built = exe
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let dir = provetop_engine::params::cache::cache_root().join("shapes");
    let safe: String = cache_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Some(dir.join(format!(
        "{safe}-{:x}-{:x}.json",
        exe.len(),
        built.as_nanos()
    )))
}

/// Writes a shape beside others, whole or not at all (a temporary file renamed); a cache that
/// cannot be written costs only the next start's pass.
fn keep_shape(file: &Path, s: &Shape) {
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    let ok = file
        .parent()
        .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
        && serde_json::to_vec(s).is_ok_and(|b| std::fs::write(&tmp, b).is_ok())
        && std::fs::rename(&tmp, file).is_ok();
    if !ok {
        let _ = std::fs::remove_file(&tmp);
    }
}

impl<P: Partitions> CircuitSource for Source<P> {
    fn partitions(&self) -> u32 {
        self.parts.count()
    }

    fn shape(&self) -> Result<Shape> {
        if let Some(s) = self.shape.get() {
            return Ok(s.clone());
        }
        let s = known_shape(self.parts.cache_id(), || Shape::of(self.parts.blank()))?;
        Ok(self.shape.get_or_init(|| s).clone())
    }

    fn synthesize(&self, partition: u32) -> Result<Assignment> {
        synthesize_generic(self.parts.circuit(self.index(partition))?)
    }

    fn generate_params(
        &self,
        shape: &Shape,
        progress: Progress,
        products: &dyn setup::Products,
    ) -> Result<Parameters> {
        let blank = self.parts.blank();
        let rng = &mut rand::rngs::OsRng;
        setup::generate_with(shape, rng, progress, products, |lagrange| {
            setup::evaluate_reporting(blank, shape, lagrange, progress)
        })
    }

    fn witness(&self, partition: u32) -> Result<Witness> {
        let aux = self.shape()?.num_aux;
        self.parts.witness(self.index(partition), aux)
    }

    fn record(&self, shape: &Shape, progress: Progress) -> Result<Precompiled> {
        precompiled::record(self.parts.blank(), shape, progress)
    }

    fn kind(&self) -> &str {
        self.parts.kind().name()
    }

    fn parallel_witness(&self) -> bool {
        self.parts.parallel_witness()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
    use provetop_engine::params::fixed_base::FixedBase;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The CPU's products, counted: where a Filecoin circuit's setup made them.
    #[derive(Default)]
    struct Counted(AtomicUsize);

    impl setup::Products for Counted {
        fn name(&self) -> String {
            "counted".into()
        }
        fn g1(
            &self,
            t: &FixedBase<G1Projective>,
            s: &[Fr],
            tick: &(dyn Fn(usize) + Sync),
        ) -> Result<Vec<G1Affine>> {
            self.0.fetch_add(s.len(), Ordering::SeqCst);
            setup::CpuProducts.g1(t, s, tick)
        }
        fn g2(
            &self,
            t: &FixedBase<G2Projective>,
            s: &[Fr],
            tick: &(dyn Fn(usize) + Sync),
        ) -> Result<Vec<G2Affine>> {
            self.0.fetch_add(s.len(), Ordering::SeqCst);
            setup::CpuProducts.g2(t, s, tick)
        }
    }

    /// A Filecoin circuit's setup makes its products where the engine says (the GPU when it
    /// has one), not on the CPU regardless.
    #[test]
    fn a_filecoin_circuits_setup_makes_its_products_where_it_is_told() {
        let inputs =
            crate::sparse::inputs(Kind::WinningPost, crate::SectorSize::S2KiB, 0, None).unwrap();
        let prepared = crate::prepared::register(&inputs, None, "winning-post-2KiB").unwrap();
        let source = prepared.circuits().circuit.source();
        let shape = source.shape().unwrap();
        let counted = Counted::default();
        let p = source
            .generate_params(&shape, &|_, _, _| {}, &counted)
            .unwrap();
        let points =
            p.h.len() + p.l.len() + p.vk.ic.len() + p.a.len() + p.b_g1.len() + p.b_g2.len();
        assert_eq!(counted.0.load(Ordering::SeqCst), points);
    }

    #[test]
    fn a_kept_shape_is_read_back_and_a_damaged_one_derived_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("shapes").join("v28-test.json");
        let shape = Shape {
            num_inputs: 3,
            num_aux: 5,
            num_constraints: 7,
            digest: "ab".repeat(32),
        };
        let derived = kept_or_derived(Some(&file), || Ok(shape.clone())).unwrap();
        assert_eq!(derived, shape);
        // The next process reads it, deriving nothing.
        let read = kept_or_derived(Some(&file), || anyhow::bail!("derived again")).unwrap();
        assert_eq!(read, shape);
        std::fs::write(&file, b"{\"num_inputs\": 3").unwrap();
        let err = kept_or_derived(Some(&file), || anyhow::bail!("derived again")).unwrap_err();
        assert!(err.to_string().contains("derived again"), "{err}");
        assert_eq!(kept_or_derived(None, || Ok(shape.clone())).unwrap(), shape);
    }
}
