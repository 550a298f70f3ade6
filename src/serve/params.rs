//! The parameter sets the server holds, one per proof kind and sector size, by cuzk's
//! `circuit_id` (`porep-32g`, `wpost-32g`): loaded ahead (`PreloadSRS`) or on a request's first
//! use, kept in the engine's store in its tiers (hot, warm, cold) under `--srs-budget`, evicted
//! only when no request uses them, and filecoin-proofs' verification of a finished proof with
//! their key.

use anyhow::{anyhow, bail, Context, Result};
use parking_lot::Mutex;
use provetop_engine::circuit::{external::External, Workload};
use provetop_engine::params::residency::{SetStatus, Tier};
use provetop_engine::pipeline::EngineHandle;
use provetop_porep::{Kind, Prepared, Registered, SectorSize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

/// The sets the server has held, through the engine's parameter store.
pub struct ParamSets {
    engine: EngineHandle,
    /// Page-locked bytes reserved for prestaging (once, for the first set).
    pinned: Mutex<Option<u64>>,
    /// Filecoin's parameter folder; None with `--test-params` (parameters made here).
    pub dir: Option<PathBuf>,
    /// When each set (by circuit_id) was last asked for by a proof.
    used: Mutex<HashMap<String, Instant>>,
    /// `[serve] sets`: the sets `PreloadSRS` may load; None: see [`ParamSets::may_preload`].
    sets: Option<Vec<String>>,
    /// Each kind and size's circuit under its canonical name: the first request's stands for
    /// every one of them (they share a shape), so its parameters load without a request.
    canonical: Mutex<HashMap<String, External>>,
}

/// One set as `GetStatus` lists it.
pub struct Listed {
    pub circuit_id: String,
    pub tier: Tier,
    pub bytes: u64,
    /// Its recorded circuit's bytes, when one is held (cuzk's "pce").
    pub recorded_bytes: Option<u64>,
}

impl ParamSets {
    pub fn new(
        engine: EngineHandle,
        budget: Option<u64>,
        dir: Option<PathBuf>,
        sets: Option<Vec<String>>,
    ) -> ParamSets {
        engine.store().set_budget(budget);
        ParamSets {
            engine,
            pinned: Mutex::default(),
            dir,
            used: Mutex::default(),
            sets,
            canonical: Mutex::default(),
        }
    }

    /// Whether `PreloadSRS` may load `id`: a set the server is configured to prove (`[serve]
    /// sets`), else a 2KiB set or one a request has used. Any other would make its circuit
    /// from a test sector sealed here (GBs written, minutes of every core) for any client.
    pub fn may_preload(&self, id: &str, size: SectorSize) -> Result<(), String> {
        let shown = super::identity::shown(id);
        match &self.sets {
            Some(sets) if sets.iter().any(|s| s == id) => Ok(()),
            Some(sets) => Err(format!(
                "`{shown}` is not a set this server proves ([serve] sets: {})",
                sets.join(", ")
            )),
            None if matches!(size, SectorSize::S2KiB) => Ok(()),
            None => match Kind::of_circuit_id(id) {
                Ok((kind, _))
                    if self
                        .canonical
                        .lock()
                        .contains_key(&Self::canonical(kind, size)) =>
                {
                    Ok(())
                }
                _ => Err(format!(
                    "`{shown}` is not a set this server proves yet: PreloadSRS loads a 2KiB \
                     set, one a request has used, or one `[serve] sets` names"
                )),
            },
        }
    }

    /// Where proofs' parameters come from, as the log, `GetStatus` and `/status` say it.
    pub fn source(&self) -> String {
        match &self.dir {
            Some(d) => format!("filecoin: {}", d.display()),
            None => "test: made here (--test-params); their proofs verify only against this \
                     machine's keys, never on chain"
                .to_string(),
        }
    }

    /// The engine's name of a kind and size's canonical circuit (as `bench --workload KIND`
    /// names it, so the parameter cache is shared with it).
    fn canonical(kind: Kind, size: SectorSize) -> String {
        format!("{kind}-{size}")
    }

    /// The canonical circuit of a kind and size, taken from `source` the first time.
    fn workload(&self, kind: Kind, size: SectorSize, source: &External) -> Workload {
        let name = Self::canonical(kind, size);
        let mut known = self.canonical.lock();
        let circuit = known
            .entry(name.clone())
            .or_insert_with(|| source.renamed(name));
        Workload::External {
            circuit: circuit.clone(),
        }
    }

    /// The store's record of a kind and size's set, if it has held it.
    fn status_of(&self, kind: Kind, size: SectorSize) -> Option<SetStatus> {
        let name = Self::canonical(kind, size);
        self.engine
            .store()
            .sets()
            .into_iter()
            .find(|s| s.name == name)
    }

    /// Loads (or finds hot) the parameters of `kind` and `size`; `source` is a registered
    /// circuit of theirs (a request's) whose shape they are made for, and `file` Filecoin's
    /// file of them, where it names one. Returns whether they were hot already.
    pub fn ensure(&self, kind: Kind, size: SectorSize, source: &Registered) -> Result<bool> {
        self.ensure_named(kind, size, &source.circuit, source.params_file.as_ref())
    }

    fn ensure_named(
        &self,
        kind: Kind,
        size: SectorSize,
        source: &External,
        file: Option<&PathBuf>,
    ) -> Result<bool> {
        let id = kind.circuit_id(size);
        self.used.lock().insert(id.clone(), Instant::now());
        if self
            .status_of(kind, size)
            .is_some_and(|s| s.tier == Tier::Hot)
        {
            return Ok(true);
        }
        // Every proof of a kind and size has the same circuit shape: the request's stands for it.
        let workload = self.workload(kind, size, source);
        if let Some(file) = file {
            self.engine.store().use_file(&workload, file.clone());
        }
        let start = Instant::now();
        let quiet = |_: &str, _: usize, _: usize| {};
        let precompiled = self.engine.precompiled_for(&workload);
        let (loaded, recorded) = self
            .engine
            .store()
            .get_and_record(&workload, precompiled, (&quiet, &quiet))
            .with_context(|| format!("parameters for {id}"))?;
        // A size the GPUs cannot hold is refused with the figures, not failed partition by
        // partition.
        let circuit = recorded.as_ref().map(|(pc, _)| &**pc);
        self.engine
            .check_fits(&loaded, circuit)
            .with_context(|| format!("proving {id}"))?;
        let mut pinned = self.pinned.lock();
        if pinned.is_none() {
            let reserved = self
                .engine
                .reserve_prestage(&workload, &loaded, precompiled);
            *pinned = Some(reserved.unwrap_or_else(|e| {
                tracing::warn!("prestage: could not page-lock memory ahead ({e:#})");
                0
            }));
        }
        let load_ms = start.elapsed().as_millis() as u64;
        tracing::info!("serve: parameters for {id} loaded in {load_ms} ms");
        Ok(false)
    }

    /// `PreloadSRS`: makes a kind and size's parameters hot ahead of its requests. A test size
    /// with no request seen yet gets its circuit from the test sector sealed here (cached).
    pub fn preload(&self, kind: Kind, size: SectorSize) -> Result<(bool, u64)> {
        let id = kind.circuit_id(size);
        let canonical = Self::canonical(kind, size);
        let known = self.canonical.lock().get(&canonical).cloned();
        let circuit = match known {
            Some(c) => c,
            None => {
                if !size.sealable() {
                    bail!(
                        "{id}: its circuit is known from a request's vanilla proofs; send one first"
                    );
                }
                // The test sector's circuit stands for the kind and size; its statement is not
                // needed here.
                let sealed = provetop_porep::prepared::prepare_sealed(
                    kind,
                    size,
                    0,
                    self.dir.as_deref(),
                    &|m| tracing::info!("{kind}: {m}"),
                )?;
                let circuits = sealed.circuits();
                if let Some(file) = &circuits.params_file {
                    let workload = self.workload(kind, size, &circuits.circuit);
                    self.engine.store().use_file(&workload, file.clone());
                }
                circuits.circuit.clone()
            }
        };
        let start = Instant::now();
        let already = self.ensure_named(kind, size, &circuit, None)?;
        Ok((already, start.elapsed().as_millis() as u64))
    }

    /// `EvictSRS`: moves a set no request is using (`in_use` of them) to cold; Some(bytes freed),
    /// None when it was not hot.
    pub fn evict(&self, kind: Kind, size: SectorSize, in_use: u32) -> Result<Option<u64>> {
        let id = kind.circuit_id(size);
        if in_use > 0 {
            bail!("{id} is in use by {in_use} request(s): evict it once they finish");
        }
        let Some(set) = self.status_of(kind, size).filter(|s| s.tier == Tier::Hot) else {
            return Ok(None);
        };
        Ok(self.engine.store().evict(&set.digest))
    }

    /// Every set the server has held, hot ones first.
    pub fn list(&self) -> Vec<Listed> {
        let names: Vec<(String, String)> = Kind::ALL
            .into_iter()
            .flat_map(|k| SectorSize::ALL.map(|s| (Self::canonical(k, s), k.circuit_id(s))))
            .collect();
        let store = self.engine.store();
        let recorded = store.recorded();
        store
            .sets()
            .into_iter()
            .filter_map(|s| {
                let (_, id) = names.iter().find(|(name, _)| *name == s.name)?;
                Some(Listed {
                    circuit_id: id.clone(),
                    tier: s.tier,
                    bytes: s.bytes,
                    recorded_bytes: recorded.iter().find(|r| r.0 == s.digest).map(|r| r.1),
                })
            })
            .collect()
    }

    /// When a proof last asked for the set `circuit_id`.
    pub fn last_used(&self, circuit_id: &str) -> Option<Instant> {
        self.used.lock().get(circuit_id).copied()
    }

    /// Page-locked bytes reserved for witnesses.
    pub fn pinned_bytes(&self) -> u64 {
        self.pinned.lock().unwrap_or(0)
    }

    /// filecoin-proofs' own verifier over a request's proof bytes with the key of its kind and
    /// size.
    pub fn verify(&self, proof: &Prepared, bytes: &[u8]) -> Result<bool> {
        let quiet = |_: &str, _: usize, _: usize| {};
        let (kind, size) = (proof.kind(), proof.size());
        let key = self
            .engine
            .store()
            .get(
                &self.workload(kind, size, &proof.circuits().circuit),
                &quiet,
            )
            .with_context(|| format!("the key of {}", kind.circuit_id(size)))?;
        proof
            .verify(&key.params.vk, bytes)?
            .ok_or_else(|| anyhow!("the prover or sector id is unknown"))
    }
}
