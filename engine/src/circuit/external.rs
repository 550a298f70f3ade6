//! Circuits that live outside the engine, such as Filecoin's PoRep: a crate builds a
//! [`CircuitSource`] (from a C1 file, say) and names it as an [`External`]; the workload
//! `Workload::External { circuit }` then carries it through the pipeline with its job and
//! proves it like a built-in one. Nothing outlives the jobs that hold it.

use anyhow::Result;
use std::sync::Arc;

use super::precompiled::{Precompiled, Witness};
use super::{Assignment, Shape};
use crate::params::setup::{Products, Progress};
use crate::params::Parameters;

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
    /// Fresh Groth16 parameters for the structure, their fixed-base products on `products`
    /// (the GPU when the engine has one).
    fn generate_params(
        &self,
        shape: &Shape,
        progress: Progress,
        products: &dyn Products,
    ) -> Result<Parameters>;
    /// The witness alone of partition `partition` (taken modulo [`Self::partitions`]), for the
    /// pre-compiled path: what [`Self::synthesize`] assigns, without evaluating a constraint.
    fn witness(&self, partition: u32) -> Result<Witness>;
    /// The constraint structure as matrices (through [`super::precompiled::record`]).
    fn record(&self, shape: &Shape, progress: Progress) -> Result<Precompiled>;
    /// What it proves, as reports group jobs (a Filecoin proof kind: `porep`, `snap`, …).
    fn kind(&self) -> &str {
        "external"
    }
    /// Whether one partition's witness keeps several cores busy (PoRep's challenges do): a
    /// serial one (synthesis through the gadgets, one core) is better served by a partition a
    /// core than by pools whose other threads wait.
    fn parallel_witness(&self) -> bool {
        false
    }
}

/// A circuit from outside the engine as the job that proves it carries it: the source, and the
/// name that labels its jobs and keys its parameters in the cache (circuits of one kind and size
/// share a name, and their parameters).
#[derive(Clone)]
pub struct External {
    name: String,
    source: Arc<dyn CircuitSource>,
}

impl External {
    /// `source`, proved under `name`.
    pub fn new(name: impl Into<String>, source: Arc<dyn CircuitSource>) -> External {
        External {
            name: name.into(),
            source,
        }
    }

    /// The same circuit under another name (a kind and size's canonical one).
    pub fn renamed(&self, name: impl Into<String>) -> External {
        External::new(name, self.source.clone())
    }

    /// The name its jobs and parameters go by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What builds its partitions.
    pub fn source(&self) -> &dyn CircuitSource {
        &*self.source
    }
}

impl std::fmt::Debug for External {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("External").field(&self.name).finish()
    }
}

/// The same name and the very same source: two requests' circuits are never equal.
impl PartialEq for External {
    fn eq(&self, other: &External) -> bool {
        self.name == other.name && Arc::ptr_eq(&self.source, &other.source)
    }
}

impl Eq for External {}

impl std::hash::Hash for External {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

/// Written as its name, which is all a report or a recording can keep of it.
impl serde::Serialize for External {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name)
    }
}
