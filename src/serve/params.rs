//! The parameter sets the server holds, one per PoRep sector size, by cuzk's `circuit_id`
//! (`porep-32g`): loaded ahead (`PreloadSRS`) or on a request's first use, evicted only when no
//! request uses them, and filecoin-proofs' verification of a finished proof with their key.

use anyhow::{anyhow, bail, Context, Result};
use parking_lot::Mutex;
use provetop_engine::circuit::{external, Workload};
use provetop_engine::params::store::Loaded;
use provetop_engine::pipeline::EngineHandle;
use provetop_porep::{Porep, SectorSize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::request::circuit_id;

/// One loaded set.
pub struct Held {
    pub loaded: Arc<Loaded>,
    pub load_ms: u64,
}

/// The sets loaded now, by sector size.
pub struct ParamSets {
    engine: EngineHandle,
    held: Mutex<BTreeMap<String, Held>>,
    /// Page-locked bytes reserved for prestaging (once, for the first set).
    pinned: Mutex<Option<u64>>,
}

impl ParamSets {
    pub fn new(engine: EngineHandle) -> ParamSets {
        ParamSets {
            engine,
            held: Mutex::default(),
            pinned: Mutex::default(),
        }
    }

    /// The engine's name of a size's canonical circuit (as `bench --workload porep` names it,
    /// so the parameter cache is shared with it).
    fn canonical(size: SectorSize) -> String {
        format!("porep-{size}")
    }

    /// Loads (or finds loaded) the parameters of `size`; `source_name` is a registered circuit of
    /// that size (a request's) whose shape they are made for. Returns whether they were loaded
    /// already.
    pub fn ensure(&self, size: SectorSize, source_name: &str) -> Result<bool> {
        let id = circuit_id(size);
        if self.held.lock().contains_key(&id) {
            return Ok(true);
        }
        let canonical = Self::canonical(size);
        if external::get(&canonical).is_err() {
            // Every sector of a size has the same circuit shape: the request's stands for it.
            external::register(&canonical, external::get(source_name)?);
        }
        let workload = Workload::External { circuit: canonical };
        let start = Instant::now();
        let quiet = |_: &str, _: usize, _: usize| {};
        let loaded = self
            .engine
            .store()
            .get(&workload, &quiet)
            .with_context(|| format!("parameters for {id}"))?;
        let precompiled = self.engine.precompiled_for(&workload);
        if precompiled {
            self.engine.store().circuit(&workload, &quiet)?;
        }
        let mut pinned = self.pinned.lock();
        if pinned.is_none() {
            let reserved = self.engine.reserve_prestage(&loaded, precompiled);
            *pinned = Some(reserved.unwrap_or_else(|e| {
                tracing::warn!("prestage: could not page-lock memory ahead ({e:#})");
                0
            }));
        }
        let load_ms = start.elapsed().as_millis() as u64;
        tracing::info!("serve: parameters for {id} loaded in {load_ms} ms");
        self.held.lock().insert(id, Held { loaded, load_ms });
        Ok(false)
    }

    /// `PreloadSRS`: loads a size's parameters ahead of its requests. A test size with no
    /// request seen yet gets its circuit from the test sector sealed here (cached).
    pub fn preload(&self, size: SectorSize) -> Result<(bool, u64)> {
        let id = circuit_id(size);
        if let Some(h) = self.held.lock().get(&id) {
            return Ok((true, h.load_ms));
        }
        let canonical = Self::canonical(size);
        if external::get(&canonical).is_err() {
            if !size.sealable() {
                bail!("{id}: its circuit is known from a request's vanilla proof; send one first");
            }
            provetop_porep::prepare(
                &provetop_porep::PorepArgs {
                    sector_size: Some(size),
                    ..Default::default()
                },
                &|m| tracing::info!("porep: {m}"),
            )?;
        }
        let start = Instant::now();
        let already = self.ensure(size, &canonical)?;
        Ok((already, start.elapsed().as_millis() as u64))
    }

    /// `EvictSRS`: forgets a set no request is using (`in_use` of them); Some(bytes freed), None
    /// when it was not loaded.
    pub fn evict(&self, size: SectorSize, in_use: u32) -> Result<Option<u64>> {
        let id = circuit_id(size);
        if in_use > 0 {
            bail!("{id} is in use by {in_use} request(s): evict it once they finish");
        }
        let Some(h) = self.held.lock().remove(&id) else {
            return Ok(None);
        };
        self.engine.store().evict(&h.loaded.shape.digest);
        Ok(Some(h.loaded.params.bytes() as u64))
    }

    /// (circuit_id, bytes) of every set loaded now.
    pub fn list(&self) -> Vec<(String, u64)> {
        self.held
            .lock()
            .iter()
            .map(|(id, h)| (id.clone(), h.loaded.params.bytes() as u64))
            .collect()
    }

    /// Page-locked bytes reserved for witnesses.
    pub fn pinned_bytes(&self) -> u64 {
        self.pinned.lock().unwrap_or(0)
    }

    /// filecoin-proofs' `verify_seal` over a request's proof bytes with the key of its size.
    pub fn verify(&self, porep: &Porep, proof: &[u8]) -> Result<bool> {
        let id = circuit_id(porep.c1.size);
        let vk = {
            let held = self.held.lock();
            let h = held
                .get(&id)
                .ok_or_else(|| anyhow!("{id} was evicted before the proof was checked"))?;
            h.loaded.clone()
        };
        provetop_porep::filecoin::verify(porep, &vk.params.vk, proof)?
            .ok_or_else(|| anyhow!("the prover or sector id is unknown"))
    }
}
