//! `EngineConfig`: every knob of the engine, its validation, and changes by key.
//!
//! Field names are a contract (the `[engine]` table of the config file, `--at key=value`, the
//! JSON report): add fields, never rename them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

pub use crate::config_keys::{
    spec, Check, KeySpec, AUTO_KEYS, ENGINE_KEYS, KEYS, MAX_THREADS, MAX_WORKERS,
};

/// Which executors prove: `auto` picks cuda where a GPU and its driver are present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// `cuda` where a GPU and its driver can be used, else `cpu`.
    Auto,
    /// CPU executors only (`cpu_devices` of them).
    Cpu,
    /// The GPUs in `devices`.
    Cuda,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Auto => "auto",
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
        })
    }
}

/// How a device's workers share it (`lock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LockStrategy {
    /// One mutex per device around a partition's whole GPU region.
    #[serde(rename = "single")]
    Single,
    /// A memory lock for allocation and staging, a compute lock for kernels.
    #[serde(rename = "two-lock")]
    TwoLock,
    /// Workers never wait on each other.
    #[serde(rename = "none")]
    None,
}

/// Where B's MSM in G2 runs (`b_g2_on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// On the host, in the finalizer (`prover` pool).
    Cpu,
    /// On the device, in the partition's region (the cuda backend only).
    Gpu,
}

/// Whether the SRS stays on the device between partitions (`srs_residency`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Residency {
    /// The engine's choice; today the same as `device`.
    Auto,
    /// Uploaded again for every partition, without H's shifted copies.
    Host,
    /// Uploaded once per parameter set and kept on the device.
    Device,
}

/// How the MSM kernels accumulate their buckets: XYZZ additions, or pairwise affine levels
/// with one inversion per batch before the XYZZ pass (correct, slower on the H200 at 2^24).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Accumulation {
    /// XYZZ additions into the buckets (the default).
    #[serde(rename = "xyzz")]
    Xyzz,
    /// Pairwise affine levels with one inversion per batch, then the XYZZ pass.
    #[serde(rename = "batch-affine")]
    BatchAffine,
}

/// Whether H's MSM runs over shifted copies of its bases (one per window, resident beside the
/// SRS) when they fit in VRAM (`auto`), or over the bases as they are (`off`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShiftedBases {
    /// H over its shifted copies when they fit in VRAM, else over its bases.
    Auto,
    /// H over its bases as they are.
    Off,
}

/// A memory budget: `auto` or a number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// The engine's choice (host: four fifths of available memory; VRAM: the driver's limit).
    Auto,
    /// A cap in bytes.
    Bytes(u64),
}

impl Serialize for Budget {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Budget::Auto => s.serialize_str("auto"),
            Budget::Bytes(b) => s.serialize_u64(*b),
        }
    }
}

impl<'de> Deserialize<'de> for Budget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(Budget::Bytes(n)),
            Raw::S(s) => parse_budget(&s).map_err(serde::de::Error::custom),
        }
    }
}

/// `auto`, a byte count, or a count with a binary suffix (`64GiB`, `512MiB`).
pub fn parse_budget(s: &str) -> Result<Budget, String> {
    let s = s.trim();
    if s == "auto" {
        return Ok(Budget::Auto);
    }
    let (num, mult) = [
        ("KiB", 1u64 << 10),
        ("MiB", 1 << 20),
        ("GiB", 1 << 30),
        ("TiB", 1 << 40),
    ]
    .iter()
    .find_map(|(suf, m)| s.strip_suffix(suf).map(|n| (n, *m)))
    .unwrap_or((s, 1));
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .map(Budget::Bytes)
        .ok_or_else(|| {
            format!("expected `auto` or a size in bytes such as 68719476736 or 64GiB, got `{s}`")
        })
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Budget::Auto => f.write_str("auto"),
            Budget::Bytes(b) => write!(f, "{b}"),
        }
    }
}

/// The `[engine]` table: what the engine runs with; a missing field takes its default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineConfig {
    /// Which executors prove (startup only).
    pub backend: BackendKind,
    /// GPU ordinals; empty means all.
    pub devices: Vec<u32>,
    /// Executors on the cpu backend, each with its own pool, 1 to 64.
    pub cpu_devices: usize,
    /// Workers (partitions in flight) per GPU, 1 to 16.
    pub gpu_workers_per_device: usize,
    /// How a device's workers share it.
    pub lock: LockStrategy,
    /// Partitions synthesised at once, 1 to `MAX_WORKERS`.
    pub synthesis_workers: usize,
    /// Threads synthesising, shared out among the synthesis workers, 1 to `MAX_THREADS`.
    pub synthesis_threads: usize,
    /// Threads of the `prover` pool (finalize, verify, B in G2 on the host), 1 to `MAX_THREADS`.
    pub prover_threads: usize,
    /// Synthesis computes the witness alone and a, b, c come from the circuit's recorded
    /// matrices (`abc_eval`); `false` builds every constraint's linear combinations.
    pub precompiled: bool,
    /// Synthesis lays each witness out in a page-locked block, so a worker uploads before its
    /// lock; `false` copies through a staging ring under the lock.
    pub prestage: bool,
    /// MSMs queued back to back on the stream; `false` synchronises after each (for comparison).
    pub msm_double_buffer: bool,
    /// How the MSM kernels accumulate their buckets (startup only).
    pub msm_accumulation: Accumulation,
    /// Whether H's MSM uses shifted copies of its bases (startup only).
    pub shifted_bases: ShiftedBases,
    /// Where B's MSM in G2 runs.
    pub b_g2_on: Placement,
    /// Whether the SRS stays on the device (from the next job).
    pub srs_residency: Residency,
    /// Cap on host memory held by partitions between synthesis and their proof.
    pub host_memory_budget: Budget,
    /// Cap on the VRAM the engine holds on each device.
    pub vram_budget: Budget,
    /// The keys set to `auto` (of [`AUTO_KEYS`]), each with why the engine chose its value;
    /// `None` until the engine has resolved it (the field then holds a placeholder).
    pub auto: BTreeMap<String, Option<String>>,
}

/// Cores available to the process (1 where unknown): the `auto` thread counts.
pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            backend: BackendKind::Auto,
            devices: vec![],
            cpu_devices: 1,
            gpu_workers_per_device: 2,
            lock: LockStrategy::Single,
            synthesis_workers: 2,
            synthesis_threads: cores(),
            prover_threads: cores(),
            precompiled: true,
            prestage: true,
            msm_double_buffer: true,
            msm_accumulation: Accumulation::Xyzz,
            shifted_bases: ShiftedBases::Auto,
            b_g2_on: Placement::Cpu,
            srs_residency: Residency::Auto,
            host_memory_budget: Budget::Auto,
            vram_budget: Budget::Auto,
            auto: AUTO_KEYS.iter().map(|k| (k.to_string(), None)).collect(),
        }
    }
}

/// A refused change or a bad config value; always names the key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ConfigError {
    /// The key as given, known or not.
    pub key: String,
    /// What was wrong, e.g. what the key expects and what it got.
    pub message: String,
}

impl ConfigError {
    fn new(key: &str, message: impl Into<String>) -> Self {
        ConfigError {
            key: key.to_string(),
            message: message.into(),
        }
    }
}

/// When a change to a key takes effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// At the next safe point of running work.
    Live,
    /// For jobs submitted after the change.
    NextJob,
    /// Only at start.
    Startup,
}

/// A value that passed its key's check in the table, ready to be stored.
enum Checked {
    Count(usize),
    Word(&'static str),
    Bool(bool),
    Budget(Budget),
    Devices(Vec<u32>),
}

/// Checks `v` against what `spec` says the key takes.
fn check(spec: &KeySpec, v: &str) -> Result<Checked, ConfigError> {
    let key = spec.name;
    let t = v.trim();
    let fail = |what: String| Err(ConfigError::new(key, format!("expected {what}, got `{v}`")));
    match spec.check {
        Check::Count(lo, hi) => match t.parse::<usize>() {
            Ok(n) if (lo..=hi).contains(&n) => Ok(Checked::Count(n)),
            _ => fail(format!("a whole number from {lo} to {hi}")),
        },
        Check::Choice(opts) => match opts.iter().find(|o| **o == t) {
            Some(o) => Ok(Checked::Word(o)),
            None => fail(format!("one of {}", opts.join(", "))),
        },
        Check::Bool => match t {
            "true" => Ok(Checked::Bool(true)),
            "false" => Ok(Checked::Bool(false)),
            _ => fail("`true` or `false`".into()),
        },
        Check::Budget => parse_budget(v)
            .map(Checked::Budget)
            .map_err(|m| ConfigError::new(key, m)),
        Check::Devices if t.is_empty() || t == "all" => Ok(Checked::Devices(vec![])),
        Check::Devices => match t.split(',').map(|d| d.trim().parse::<u32>()).collect() {
            Ok(d) => Ok(Checked::Devices(d)),
            Err(_) => fail("GPU ordinals such as 0,1 or `all`".into()),
        },
    }
}

/// A word of a `Choice` as the field's enum (the table's words are the enums' serde names).
fn word<T: for<'de> Deserialize<'de>>(key: &str, w: &str) -> Result<T, ConfigError> {
    T::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(w))
        .map_err(|e| ConfigError::new(key, format!("`{w}` is in the table but not the type: {e}")))
}

impl EngineConfig {
    /// When a change to `key` takes effect; `None` for an unknown key.
    pub fn liveness(key: &str) -> Option<Liveness> {
        spec(key).map(|s| s.live)
    }

    /// The value of `key` as `set` would take it (`auto` while the engine has not chosen it).
    pub fn get(&self, key: &str) -> Option<String> {
        if matches!(self.auto.get(key), Some(None)) {
            return Some("auto".into());
        }
        let json = serde_json::to_value(self).ok()?;
        Some(match json.get(key)? {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(","),
            v => v.to_string(),
        })
    }

    /// Whether `key` holds a value the engine chose (`auto`), resolved or not.
    pub fn is_auto(&self, key: &str) -> bool {
        self.auto.contains_key(key)
    }

    /// Sets one key from its text form, validating it; on error nothing changes. `auto`, for
    /// the keys that take it, leaves the value for the engine to choose.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        if AUTO_KEYS.contains(&key) {
            if value.trim() == "auto" {
                self.auto.insert(key.to_string(), None);
                return Ok(());
            }
            let mut chosen = self.clone();
            chosen.set_value(key, value).map_err(|mut e| {
                e.message = e.message.replacen("expected ", "expected `auto` or ", 1);
                e
            })?;
            chosen.auto.remove(key);
            *self = chosen;
            return Ok(());
        }
        self.set_value(key, value)
    }

    fn set_value(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let Some(spec) = spec(key) else {
            return Err(ConfigError::new(
                key,
                format!("unknown key; the keys are {}", KEYS.join(", ")),
            ));
        };
        let mismatch = || {
            ConfigError::new(
                key,
                "the key's check in the table does not fit its field".to_string(),
            )
        };
        match (key, check(spec, value)?) {
            ("backend", Checked::Word(w)) => self.backend = word(key, w)?,
            ("devices", Checked::Devices(d)) => self.devices = d,
            ("cpu_devices", Checked::Count(n)) => self.cpu_devices = n,
            ("gpu_workers_per_device", Checked::Count(n)) => self.gpu_workers_per_device = n,
            ("lock", Checked::Word(w)) => self.lock = word(key, w)?,
            ("synthesis_workers", Checked::Count(n)) => self.synthesis_workers = n,
            ("synthesis_threads", Checked::Count(n)) => self.synthesis_threads = n,
            ("prover_threads", Checked::Count(n)) => self.prover_threads = n,
            ("precompiled", Checked::Bool(b)) => self.precompiled = b,
            ("prestage", Checked::Bool(b)) => self.prestage = b,
            ("msm_double_buffer", Checked::Bool(b)) => self.msm_double_buffer = b,
            ("msm_accumulation", Checked::Word(w)) => self.msm_accumulation = word(key, w)?,
            ("shifted_bases", Checked::Word(w)) => self.shifted_bases = word(key, w)?,
            ("b_g2_on", Checked::Word(w)) => self.b_g2_on = word(key, w)?,
            ("srs_residency", Checked::Word(w)) => self.srs_residency = word(key, w)?,
            ("host_memory_budget", Checked::Budget(b)) => self.host_memory_budget = b,
            ("vram_budget", Checked::Budget(b)) => self.vram_budget = b,
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    /// Parses the `[engine]` table of a config file, key by key through `set`, so a file
    /// and a live change are validated alike and every error names its key.
    pub fn from_toml_table(table: &toml::Table) -> Result<Self, ConfigError> {
        let mut cfg = EngineConfig::default();
        for (key, value) in table {
            let text = match value {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::Array(a) => a
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                other => return Err(ConfigError::new(key, format!("unexpected value {other}"))),
            };
            cfg.set(key, &text)?;
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_validates_and_leaves_config_unchanged_on_error() {
        let mut c = EngineConfig::default();
        let before = c.clone();
        for (k, v) in [
            ("lock", "triple"),
            ("gpu_workers_per_device", "0"),
            ("gpu_workers_per_device", "17"),
            ("prestage", "yes"),
            ("synthesis_threads", "-1"),
            ("vram_budget", "lots"),
            ("colour", "blue"),
        ] {
            let err = c.set(k, v).unwrap_err();
            assert_eq!(err.key, k);
            assert_eq!(c, before);
        }
        c.set("lock", "two-lock").unwrap();
        assert_eq!(c.lock, LockStrategy::TwoLock);
        assert_eq!(c.get("lock").unwrap(), "two-lock");
        c.set("vram_budget", "64GiB").unwrap();
        assert_eq!(c.vram_budget, Budget::Bytes(64 << 30));
        for key in KEYS {
            let v = c.get(key).unwrap();
            let mut d = c.clone();
            d.set(key, &v).unwrap();
            assert_eq!(d, c, "{key} round-trips through get/set");
        }
    }

    #[test]
    fn the_msm_paths_are_startup_keys_and_older_configs_get_their_defaults() {
        let mut c = EngineConfig::default();
        c.set("msm_accumulation", "batch-affine").unwrap();
        c.set("shifted_bases", "off").unwrap();
        assert_eq!(
            (c.msm_accumulation, c.shifted_bases),
            (Accumulation::BatchAffine, ShiftedBases::Off)
        );
        let err = c.set("shifted_bases", "sideways").unwrap_err();
        assert!(err.message.contains("auto, off"), "{}", err.message);
        for key in ["msm_accumulation", "shifted_bases"] {
            assert_eq!(EngineConfig::liveness(key), Some(Liveness::Startup));
        }
        // A session header written before the keys existed.
        let mut old = serde_json::to_value(EngineConfig::default()).unwrap();
        let o = old.as_object_mut().unwrap();
        o.remove("msm_accumulation");
        o.remove("shifted_bases");
        let back: EngineConfig = serde_json::from_value(old).unwrap();
        assert_eq!(back, EngineConfig::default());
    }

    #[test]
    fn auto_keys_take_auto_and_a_value_replaces_it() {
        let mut c = EngineConfig::default();
        for key in AUTO_KEYS {
            assert_eq!(c.get(key).unwrap(), "auto", "{key} defaults to auto");
        }
        c.set("synthesis_workers", "6").unwrap();
        assert_eq!(
            (c.synthesis_workers, c.is_auto("synthesis_workers")),
            (6, false)
        );
        let err = c.set("synthesis_workers", "0").unwrap_err();
        assert!(
            err.message.starts_with("expected `auto` or"),
            "{}",
            err.message
        );
        c.set("synthesis_workers", "auto").unwrap();
        assert_eq!(c.get("synthesis_workers").unwrap(), "auto");
        // Once the engine chose, `get` gives the chosen value.
        c.auto
            .insert("synthesis_workers".into(), Some("why".into()));
        assert_eq!(c.get("synthesis_workers").unwrap(), "6");
        assert!(c.set("lock", "auto").is_err(), "lock takes no auto");
    }

    #[test]
    fn toml_errors_name_the_key() {
        let parse = |s: &str| EngineConfig::from_toml_table(&toml::from_str(s).unwrap());
        assert_eq!(
            parse("lock = \"single\"\nlokc = 1").unwrap_err().key,
            "lokc"
        );
        assert_eq!(
            parse("gpu_workers_per_device = 99").unwrap_err().key,
            "gpu_workers_per_device"
        );
        assert_eq!(parse("lock = \"quad\"").unwrap_err().key, "lock");
        assert_eq!(parse("devices = [0, 1]").unwrap().devices, vec![0, 1]);
        let c = parse("vram_budget = \"8GiB\"\nprestage = false").unwrap();
        assert_eq!((c.vram_budget, c.prestage), (Budget::Bytes(8 << 30), false));
    }
}
