//! Where each parameter set is kept, in the tiers cuzk names: hot (deserialised in memory: a
//! proof starts at once), warm (its file mapped, so the OS keeps its pages and loading it again
//! reads no disk) or cold (its file only). Hot sets are held under a budget of bytes: a set that
//! would not fit moves the least recently used sets no job holds to warm, and is refused when the
//! sets in use leave it no room.

use anyhow::{bail, Result};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::cache::Origin;
use super::Loaded;

/// A set's tier; `code` is cuzk's `SRSStatus.Tier` number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Deserialised in memory: a proof starts at once.
    Hot,
    /// Its file mapped: loading it again reads no disk.
    Warm,
    /// Its file only.
    Cold,
}

impl Tier {
    /// cuzk's number of the tier (the `params.tier.<set>` sample's value).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Its name in logs and tests.
    pub fn key(self) -> &'static str {
        match self {
            Tier::Hot => "hot",
            Tier::Warm => "warm",
            Tier::Cold => "cold",
        }
    }
}

/// One set as reported: `GetStatus`, the samplers, the dashboard.
#[derive(Clone, Debug, PartialEq)]
pub struct SetStatus {
    /// The workload label it was made for (`porep-8MiB`, `synthetic-k12`).
    pub name: String,
    /// Its shape's digest.
    pub digest: String,
    /// Where it is kept.
    pub tier: Tier,
    /// Its bytes in memory when hot.
    pub bytes: u64,
    /// Jobs and partitions holding it now (hot sets only).
    pub users: usize,
}

struct Hot {
    name: String,
    loaded: Arc<Loaded>,
    last_used: Instant,
}

/// A set that is not hot: what is known of it to report it and to find it again.
struct Resting {
    name: String,
    bytes: u64,
    /// The mapped file of a warm set.
    map: Option<memmap2::Mmap>,
}

/// The sets a store has held, by shape digest.
#[derive(Default)]
pub struct Sets {
    hot: HashMap<String, Hot>,
    resting: HashMap<String, Resting>,
    /// Hot bytes allowed; None: no limit.
    budget: Option<u64>,
}

/// The file a set was read from or saved to.
fn path_of(origin: &Origin) -> Option<&Path> {
    match origin {
        Origin::File { path, .. } | Origin::Cached { path, .. } => Some(path),
        Origin::Generated { path, .. } => path.as_deref(),
    }
}

/// Maps `path` and asks the OS to read it ahead; None when it cannot (then the set is cold).
fn map(path: &Path) -> Option<memmap2::Mmap> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: the file is one of the parameter files, read only through this map's pages for
    // as long as the map lives; a file truncated under it would fault a reader, and nothing
    // reads it: it is held only so that the kernel keeps its pages.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let _ = map.advise(memmap2::Advice::WillNeed);
    Some(map)
}

fn gb(bytes: u64) -> String {
    format!("{:.2} GB", bytes as f64 / 1e9)
}

impl Sets {
    /// Hot bytes allowed from now on (None: no limit).
    pub fn set_budget(&mut self, budget: Option<u64>) {
        self.budget = budget;
    }

    /// A hot set, marked as just used.
    pub fn get(&mut self, digest: &str) -> Option<Arc<Loaded>> {
        let h = self.hot.get_mut(digest)?;
        h.last_used = Instant::now();
        Some(h.loaded.clone())
    }

    /// Bytes a set will take when loaded, as far as is known before loading it: its size when it
    /// was last hot, else its file's.
    pub fn estimate(&self, digest: &str, file: &Path) -> u64 {
        if let Some(r) = self.resting.get(digest) {
            return r.bytes;
        }
        std::fs::metadata(file).map_or(0, |m| m.len())
    }

    /// The hot set used least recently that no job holds, other than `keep`.
    fn least_recent_idle(&self, keep: Option<&str>) -> Option<String> {
        self.hot
            .iter()
            .filter(|(d, h)| Some(d.as_str()) != keep && Arc::strong_count(&h.loaded) == 1)
            .min_by_key(|(_, h)| h.last_used)
            .map(|(d, _)| d.clone())
    }

    fn hot_bytes(&self) -> u64 {
        self.hot
            .values()
            .map(|h| h.loaded.params.bytes() as u64)
            .sum()
    }

    /// Moves the least recently used sets no job holds to warm until `need` more bytes fit the
    /// budget; an error naming the sets in the way when they cannot.
    pub fn make_room(&mut self, need: u64, name: &str) -> Result<()> {
        let Some(budget) = self.budget else {
            return Ok(());
        };
        while self.hot_bytes() + need > budget {
            let Some(digest) = self.least_recent_idle(None) else {
                let held: Vec<String> = self
                    .hot
                    .values()
                    .map(|h| format!("{} ({})", h.name, gb(h.loaded.params.bytes() as u64)))
                    .collect();
                bail!(
                    "{name} needs {} of parameter memory; the budget of {} holds {} in sets \
                     that proofs are using: {}. Raise the budget (--srs-budget) or wait for them",
                    gb(need),
                    gb(budget),
                    gb(self.hot_bytes()),
                    held.join(", ")
                );
            };
            self.rest(&digest, true);
        }
        Ok(())
    }

    /// Takes a set out of the hot tier: to warm (`warm`, where its file can be mapped) or cold.
    /// Its memory goes once the last job holding it lets go. Its bytes, when it was hot.
    fn rest(&mut self, digest: &str, warm: bool) -> Option<u64> {
        let h = self.hot.remove(digest)?;
        let bytes = h.loaded.params.bytes() as u64;
        let path = path_of(&h.loaded.origin);
        if path.is_none() {
            // Made in this run and never saved: nothing is left of it to report.
            tracing::info!("parameters: {} ({}) dropped", h.name, gb(bytes));
            return Some(bytes);
        }
        let map = if warm { path.and_then(map) } else { None };
        let tier = if map.is_some() { "warm" } else { "cold" };
        tracing::info!("parameters: {} ({}) hot → {tier}", h.name, gb(bytes));
        self.resting.insert(
            digest.to_string(),
            Resting {
                name: h.name,
                bytes,
                map,
            },
        );
        Some(bytes)
    }

    /// A set just loaded becomes hot, and sets no job holds move to warm if it took the hot
    /// tier past its budget (its estimate, checked before loading, can fall short).
    pub fn insert(&mut self, name: &str, loaded: Arc<Loaded>) {
        let digest = loaded.shape.digest.clone();
        // A set loaded again keeps the name it was first loaded under.
        let name = self
            .resting
            .remove(&digest)
            .map_or(name.to_string(), |r| r.name);
        self.hot.insert(
            digest.clone(),
            Hot {
                name,
                loaded,
                last_used: Instant::now(),
            },
        );
        if let Some(budget) = self.budget {
            while self.hot_bytes() > budget {
                let Some(d) = self.least_recent_idle(Some(&digest)) else {
                    break;
                };
                self.rest(&d, true);
            }
        }
    }

    /// Moves a set to cold (an operator's eviction): its bytes when it was hot, else None.
    pub fn evict(&mut self, digest: &str) -> Option<u64> {
        self.rest(digest, false)
    }

    /// Every set held now or before, hot ones first, each group by name.
    pub fn status(&self) -> Vec<SetStatus> {
        let mut out: Vec<SetStatus> = self
            .hot
            .iter()
            .map(|(d, h)| SetStatus {
                name: h.name.clone(),
                digest: d.clone(),
                tier: Tier::Hot,
                bytes: h.loaded.params.bytes() as u64,
                // The store's own reference is not a user.
                users: Arc::strong_count(&h.loaded) - 1,
            })
            .chain(self.resting.iter().map(|(d, r)| SetStatus {
                name: r.name.clone(),
                digest: d.clone(),
                tier: if r.map.is_some() {
                    Tier::Warm
                } else {
                    Tier::Cold
                },
                bytes: r.bytes,
                users: 0,
            }))
            .collect();
        out.sort_by(|a, b| (a.tier.code(), &a.name).cmp(&(b.tier.code(), &b.name)));
        out
    }
}
