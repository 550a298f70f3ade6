//! Parameters in memory: loaded or generated once per circuit shape and shared by every job
//! of that shape, with their prepared verifying key; likewise each shape's recorded circuit
//! for the pre-compiled path.

use anyhow::{Context, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::circuit::precompiled::{CircuitCache, Precompiled};
use crate::circuit::Workload;
use crate::memory::{MemoryBudget, Reservation};
use crate::params::cache::{check_counts, check_matches, Origin, ParamsCache};
use crate::params::residency::{SetStatus, Sets};
use crate::params::PreparedVerifyingKey;
use crate::params::{io, setup};

// Loaded is the parameters' own type; found here as ever.
pub use crate::params::Loaded;

/// A recorded circuit, and how it came (`None`: it was in memory already).
pub type Recorded = (Arc<Precompiled>, Option<Origin>);

/// The parameters and recorded circuits of every shape in use, loaded or made once each and shared
/// by every job.
pub struct ParamsStore {
    cache: ParamsCache,
    /// `--params FILE`: used for every workload whose shape it fits.
    file: Option<PathBuf>,
    /// Files for single workloads, by label (Filecoin's, one per circuit): ahead of `file`.
    files: Mutex<HashMap<String, PathBuf>>,
    /// Every set loaded here, by shape digest, in its tier.
    sets: Mutex<Sets>,
    circuits: CircuitCache,
    /// Recorded circuits by shape digest, their bytes counted in `resident`. Held while
    /// recording, so two jobs of one shape record it once.
    recorded: Mutex<HashMap<String, (Arc<Precompiled>, Reservation)>>,
    /// Host bytes of the parameters and recorded circuits held here: what the pipeline's host
    /// budget leaves partitions is what remains of it beside these.
    resident: Arc<MemoryBudget>,
    /// Where a new setup's fixed-base products run.
    products: Mutex<Arc<dyn setup::Products>>,
}

impl ParamsStore {
    /// A store caching in `cache_dir` (else the default cache) and, with `file`, reading parameters
    /// from it for every shape it fits.
    pub fn new(cache_dir: Option<PathBuf>, file: Option<PathBuf>) -> Self {
        ParamsStore {
            circuits: CircuitCache::new(cache_dir.clone()),
            cache: ParamsCache::new(cache_dir),
            file,
            files: Mutex::default(),
            sets: Mutex::default(),
            recorded: Mutex::default(),
            resident: MemoryBudget::new(u64::MAX),
            products: Mutex::new(Arc::new(setup::CpuProducts)),
        }
    }

    /// Reads `workload`'s parameters from `path` (checked to fit, as `--params`) instead of the
    /// cache: a server proving several circuits with Filecoin's files names each one's.
    pub fn use_file(&self, workload: &Workload, path: PathBuf) {
        self.files.lock().insert(workload.label(), path);
    }

    /// Runs the fixed-base products of every later setup on `products` (a GPU's).
    pub fn set_products(&self, products: Arc<dyn setup::Products>) {
        *self.products.lock() = products;
    }

    /// Host bytes held here (parameters, recorded circuits) and by whoever else counts in it.
    pub fn resident(&self) -> &Arc<MemoryBudget> {
        &self.resident
    }

    /// The on-disk cache of generated parameters.
    pub fn cache(&self) -> &ParamsCache {
        &self.cache
    }

    /// The recorded circuit of `workload` (`precompiled`): from memory, the cache beside the
    /// parameters, or recorded now.
    pub fn circuit(&self, workload: &Workload, progress: setup::Progress) -> Result<Recorded> {
        let shape = workload.shape()?;
        let mut recorded = self.recorded.lock();
        if let Some((pc, _)) = recorded.get(&shape.digest) {
            return Ok((pc.clone(), None));
        }
        let (pc, origin) = self
            .circuits
            .load_or_record(workload, &shape, progress)
            .with_context(|| format!("recording the circuit of {}", workload.label()))?;
        let counted = self.resident.reserve(pc.bytes() as u64);
        recorded.insert(shape.digest, (pc.clone(), counted));
        Ok((pc, Some(origin)))
    }

    /// [`Self::get`] and, when `record`, [`Self::circuit`] side by side: each is mostly one
    /// core's pass over every constraint (evaluating it at tau, recording it), so a first start
    /// at production size pays the longer of the two rather than their sum.
    pub fn get_and_record(
        &self,
        workload: &Workload,
        record: bool,
        (params, recording): (setup::Progress, setup::Progress),
    ) -> Result<(Arc<Loaded>, Option<Recorded>)> {
        // The shape first, once: both need it.
        workload.shape()?;
        let (loaded, recorded) = std::thread::scope(|s| {
            let recorder = record.then(|| {
                let thread = std::thread::Builder::new().name("record".into());
                thread.spawn_scoped(s, || self.circuit(workload, recording))
            });
            let loaded = self.get(workload, params);
            let recorded = recorder.map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("recording the circuit panicked"))),
                // No thread to spare: one after the other.
                Err(_) => self.circuit(workload, recording),
            });
            (loaded, recorded)
        });
        let recorded = recorded.transpose()?;
        Ok((loaded?, recorded))
    }

    /// Moves the parameters of the shape with `digest` to cold and forgets its recorded circuit,
    /// so their memory goes once no job holds them; the next `get` loads them again. The
    /// parameters' bytes when they were hot.
    pub fn evict(&self, digest: &str) -> Option<u64> {
        self.recorded.lock().remove(digest);
        self.sets.lock().evict(digest)
    }

    /// Every recorded circuit held in memory: its shape's digest and its bytes.
    pub fn recorded(&self) -> Vec<(String, u64)> {
        let recorded = self.recorded.lock();
        let mut out: Vec<(String, u64)> = recorded
            .iter()
            .map(|(digest, (pc, _))| (digest.clone(), pc.bytes() as u64))
            .collect();
        out.sort();
        out
    }

    /// Hot parameter bytes allowed (None: no limit); sets no job holds make room for others.
    pub fn set_budget(&self, budget: Option<u64>) {
        self.sets.lock().set_budget(budget);
    }

    /// Every parameter set held now or before, with its tier.
    pub fn sets(&self) -> Vec<SetStatus> {
        self.sets.lock().status()
    }

    /// Parameters for `workload`: from memory, the `--params` file, the cache, or a new setup.
    pub fn get(&self, workload: &Workload, progress: setup::Progress) -> Result<Arc<Loaded>> {
        let shape = workload.shape()?;
        let name = workload.label();
        let named = self.files.lock().get(&name).cloned().or(self.file.clone());
        {
            let mut sets = self.sets.lock();
            if let Some(l) = sets.get(&shape.digest) {
                return Ok(l);
            }
            let file = (named.clone()).unwrap_or_else(|| self.cache.path_for(&name, &shape));
            let need = sets.estimate(&shape.digest, &file);
            sets.make_room(need, &name)?;
        }
        let (params, origin) = match &named {
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
            None => {
                let products = self.products.lock().clone();
                self.cache.load_or_generate(&name, &shape, || {
                    workload.generate_params(&shape, progress, &*products)
                })?
            }
        };
        let loaded = Arc::new(Loaded {
            _counted: self.resident.reserve(params.bytes() as u64),
            pvk: Arc::new(PreparedVerifyingKey::new(&params.vk)),
            params,
            shape,
            origin,
        });
        self.sets.lock().insert(&name, loaded.clone());
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::fixed_base::FixedBase;
    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Clone, Copy, PartialEq)]
    enum Fault {
        None,
        /// As a GPU out of memory would.
        Fails,
        /// Every second point wrong, as from a broken kernel.
        Wrong,
    }

    /// The CPU's products, counted (G1, G2), with a fault added.
    struct Scripted(Fault, AtomicUsize, AtomicUsize);

    impl Scripted {
        fn new(fault: Fault) -> Self {
            Scripted(fault, AtomicUsize::new(0), AtomicUsize::new(0))
        }

        fn make<A: Copy + Default>(&self, count: &AtomicUsize, cpu: Vec<A>) -> Result<Vec<A>> {
            count.fetch_add(cpu.len(), Ordering::SeqCst);
            let mut points = cpu;
            match self.0 {
                Fault::None => {}
                Fault::Fails => anyhow::bail!("out of memory"),
                Fault::Wrong => points.iter_mut().step_by(2).for_each(|p| *p = A::default()),
            }
            Ok(points)
        }
    }

    impl setup::Products for Scripted {
        fn name(&self) -> String {
            "scripted".into()
        }
        fn g1(
            &self,
            t: &FixedBase<G1Projective>,
            s: &[Scalar],
            tick: &(dyn Fn(usize) + Sync),
        ) -> Result<Vec<G1Affine>> {
            self.make(&self.1, t.mul_many(s, tick))
        }
        fn g2(
            &self,
            t: &FixedBase<G2Projective>,
            s: &[Scalar],
            tick: &(dyn Fn(usize) + Sync),
        ) -> Result<Vec<G2Affine>> {
            self.make(&self.2, t.mul_many(s, tick))
        }
    }

    #[test]
    fn failing_or_wrong_products_are_made_on_the_cpu_instead() {
        for fault in [Fault::Fails, Fault::Wrong] {
            let dir = tempfile::tempdir().unwrap();
            let store = ParamsStore::new(Some(dir.path().to_path_buf()), None);
            store.set_products(Arc::new(Scripted::new(fault)));
            let w = Workload::Synthetic {
                log2_constraints: 6,
            };
            let loaded = store.get(&w, &|_, _, _| {}).unwrap();
            let asg = w.synthesize(1, 0).unwrap();
            let cpu = crate::backend::cpu::CpuExecutor::new(0, 1).unwrap();
            let (r, s) = (Scalar::from(3u64), Scalar::from(5u64));
            let proof = crate::prover::prove_with(&cpu, asg.clone(), &loaded.params, r, s);
            let ok = crate::prover::verify(&loaded.pvk, &proof.unwrap(), asg.public_inputs());
            assert!(ok.is_ok(), "wrong = {}", fault == Fault::Wrong);
        }
    }

    fn synthetic(k: u32) -> Workload {
        Workload::Synthetic {
            log2_constraints: k,
        }
    }

    fn tiers(store: &ParamsStore) -> Vec<(String, &'static str)> {
        let mut t: Vec<_> = store
            .sets()
            .into_iter()
            .map(|s| (s.name, s.tier.key()))
            .collect();
        t.sort();
        t
    }

    #[test]
    fn sets_past_the_budget_rest_least_recently_used_first_and_never_while_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let store = ParamsStore::new(Some(dir.path().to_path_buf()), None);
        let quiet = |_: &str, _: usize, _: usize| {};
        // Cache all three first, with no budget, to learn their sizes.
        let bytes: Vec<u64> = [6, 7, 8]
            .map(|k| store.get(&synthetic(k), &quiet).unwrap().params.bytes() as u64)
            .to_vec();
        for k in [6, 7, 8] {
            store.evict(&synthetic(k).shape().unwrap().digest);
        }
        assert!(tiers(&store).iter().all(|(_, t)| *t == "cold"));
        // Room for the two larger sets, not all three.
        store.set_budget(Some(bytes[1] + bytes[2]));
        let k6 = store.get(&synthetic(6), &quiet).unwrap();
        drop(k6);
        let held7 = store.get(&synthetic(7), &quiet).unwrap();
        // 8 needs room: 6 is the least recently used and idle; 7 is held.
        store.get(&synthetic(8), &quiet).unwrap();
        assert_eq!(
            tiers(&store),
            [
                ("synthetic-k6".to_string(), "warm"),
                ("synthetic-k7".to_string(), "hot"),
                ("synthetic-k8".to_string(), "hot"),
            ]
        );
        let users = store.sets().into_iter().find(|s| s.name == "synthetic-k7");
        assert_eq!(users.unwrap().users, 1);
        // With 7 and 8 both held, 6 cannot come back: the error names what is in the way.
        let held8 = store.get(&synthetic(8), &quiet).unwrap();
        let Err(err) = store.get(&synthetic(6), &quiet) else {
            panic!("synthetic-k6 was loaded past the budget");
        };
        let err = format!("{err:#}");
        assert!(err.contains("synthetic-k6 needs"), "{err}");
        assert!(
            err.contains("synthetic-k7") && err.contains("synthetic-k8"),
            "{err}"
        );
        // Once 8 is let go, 6 takes its place; 8 rests warm, its file mapped.
        drop(held8);
        let k6 = store.get(&synthetic(6), &quiet).unwrap();
        assert!(matches!(k6.origin, Origin::Cached { .. }));
        assert_eq!(tiers(&store)[2], ("synthetic-k8".to_string(), "warm"));
        drop(held7);
    }

    #[test]
    fn an_evicted_set_is_cold_and_loads_again_under_its_first_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = ParamsStore::new(Some(dir.path().to_path_buf()), None);
        let quiet = |_: &str, _: usize, _: usize| {};
        let w = synthetic(6);
        let bytes = store.get(&w, &quiet).unwrap().params.bytes() as u64;
        let digest = w.shape().unwrap().digest;
        assert_eq!(store.evict(&digest), Some(bytes));
        assert_eq!(store.evict(&digest), None, "already cold");
        assert_eq!(tiers(&store), [("synthetic-k6".to_string(), "cold")]);
        store.get(&w, &quiet).unwrap();
        assert_eq!(tiers(&store), [("synthetic-k6".to_string(), "hot")]);
    }

    #[test]
    fn a_new_setup_runs_its_products_where_the_store_was_told() {
        let dir = tempfile::tempdir().unwrap();
        let store = ParamsStore::new(Some(dir.path().to_path_buf()), None);
        let counted = Arc::new(Scripted::new(Fault::None));
        store.set_products(counted.clone());
        let w = Workload::Synthetic {
            log2_constraints: 8,
        };
        let loaded = store.get(&w, &|_, _, _| {}).unwrap();
        let p = &loaded.params;
        let g1 = p.h.len() + p.l.len() + p.vk.ic.len() + p.a.len() + p.b_g1.len();
        assert_eq!(counted.1.load(Ordering::SeqCst), g1, "every G1 query point");
        assert_eq!(counted.2.load(Ordering::SeqCst), p.b_g2.len());
    }
}
