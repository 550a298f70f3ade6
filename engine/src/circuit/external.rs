//! Circuits that live outside the engine, such as Filecoin's PoRep: a crate builds a
//! [`CircuitSource`] (from a C1 file, say) and registers it under a name; the workload
//! `Workload::External { circuit }` then proves it like a built-in one.

use anyhow::{anyhow, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::precompiled::{Precompiled, Witness};
use super::{Assignment, Shape};
use crate::params::{setup::Progress, Parameters};

/// One circuit family whose partitions the engine proves. A bellpepper circuit's `synthesize`
/// is generic over its constraint system, so the source runs each of the engine's constraint
/// systems itself (through [`super::synthesize_generic`], [`Shape::of`] and
/// [`crate::params::setup::generate`]).
pub trait CircuitSource: Send + Sync {
    /// Partitions of one job (a PoRep C2 job: the sector's partitions).
    fn partitions(&self) -> u32;
    /// The constraint structure, shared by every partition.
    fn shape(&self) -> Result<Shape>;
    /// The witness of partition `partition` (taken modulo [`Self::partitions`]).
    fn synthesize(&self, partition: u32) -> Result<Assignment>;
    /// Fresh Groth16 parameters for the structure.
    fn generate_params(&self, shape: &Shape, progress: Progress) -> Result<Parameters>;
    /// The witness alone of partition `partition` (taken modulo [`Self::partitions`]), for the
    /// pre-compiled path: what [`Self::synthesize`] assigns, without evaluating a constraint.
    fn witness(&self, partition: u32) -> Result<Witness>;
    /// The constraint structure as matrices (through [`super::precompiled::record`]).
    fn record(&self, shape: &Shape, progress: Progress) -> Result<Precompiled>;
    /// What it proves, as reports group jobs (a Filecoin proof kind: `porep`, `snap`, …).
    fn kind(&self) -> &str {
        "external"
    }
}

fn registry() -> &'static Mutex<HashMap<String, Arc<dyn CircuitSource>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<String, Arc<dyn CircuitSource>>>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

/// Makes `source` provable as `Workload::External { circuit }`; a later source of the same name
/// replaces it.
pub fn register(name: &str, source: Arc<dyn CircuitSource>) {
    registry().lock().insert(name.to_string(), source);
}

/// Forgets the source registered as `name` (a served request's, once its proof is done);
/// whether there was one.
pub fn unregister(name: &str) -> bool {
    registry().lock().remove(name).is_some()
}

/// The source registered as `name`; an error naming it when none is.
pub fn get(name: &str) -> Result<Arc<dyn CircuitSource>> {
    registry()
        .lock()
        .get(name)
        .cloned()
        .ok_or_else(|| anyhow!("no circuit named `{name}` is registered"))
}
