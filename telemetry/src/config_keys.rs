//! The `[engine]` keys as one table: name, the values each takes, its default, when a change
//! takes effect, and a line of help. The config check (`EngineConfig::set`), the command
//! line's engine flags, the dashboard's Settings rows and docs/configuration.md all read it, so
//! they cannot disagree; a test regenerates the doc's table and compares.

use std::fmt::Write as _;

use crate::config::Liveness;

/// Upper bound on thread and worker counts: a typo, not a machine, beyond this.
pub const MAX_THREADS: usize = 4096;
/// Upper bound on partitions synthesised at once.
pub const MAX_WORKERS: usize = 256;

/// What values a key takes, as checked by `EngineConfig::set`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// A whole number from the first to the second, both inclusive.
    Count(usize, usize),
    /// One of these words (the Settings form steps through them in this order).
    Choice(&'static [&'static str]),
    /// `true` or `false`.
    Bool,
    /// `auto`, a number of bytes, or a size such as `64GiB`.
    Budget,
    /// GPU ordinals such as `0,1`, or `all`.
    Devices,
}

/// One `[engine]` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySpec {
    /// The key, as in the config file and `--at`; its flag is the same with dashes.
    pub name: &'static str,
    /// The values it takes (besides `auto` where `auto` is set).
    pub check: Check,
    /// The default as `EngineConfig::get` gives it (`all` for every device).
    pub default: &'static str,
    /// For a key whose default is the engine's own choice (`auto`): how the engine chooses.
    pub auto: Option<&'static str>,
    /// When a change takes effect.
    pub live: Liveness,
    /// What it does, in a sentence or two.
    pub help: &'static str,
}

/// Every `[engine]` key, in the config file's order.
pub const ENGINE_KEYS: [KeySpec; 17] = [
    KeySpec {
        name: "backend",
        check: Check::Choice(&["auto", "cpu", "cuda"]),
        default: "auto",
        auto: None,
        live: Liveness::Startup,
        help:
            "Which executors prove: auto is cuda when a GPU and its driver can be used, else cpu.",
    },
    KeySpec {
        name: "devices",
        check: Check::Devices,
        default: "all",
        auto: None,
        live: Liveness::Startup,
        help: "The GPUs to prove on, by ordinal.",
    },
    KeySpec {
        name: "cpu_devices",
        check: Check::Count(1, 64),
        default: "1",
        auto: None,
        live: Liveness::Live,
        help: "Executors on the cpu backend, each with its own thread pool.",
    },
    KeySpec {
        name: "gpu_workers_per_device",
        check: Check::Count(1, 16),
        default: "2",
        auto: None,
        live: Liveness::Live,
        help: "Workers per device: partitions in flight on each GPU.",
    },
    KeySpec {
        name: "lock",
        check: Check::Choice(&["single", "two-lock", "none"]),
        default: "single",
        auto: None,
        live: Liveness::Live,
        help: "How a device's workers share it: single (one mutex around a partition's whole \
               device region), two-lock (a memory lock for allocation and staging, a compute \
               lock for kernels, so one worker stages while another computes), none (workers \
               never wait on each other).",
    },
    KeySpec {
        name: "synthesis_workers",
        check: Check::Count(1, MAX_WORKERS),
        default: "auto",
        auto: Some(
            "half the cores with a GPU (at least 2; every core for a serial witness, SnapDeals' \
             and PoSt's; no more than the host memory holds), else up to 2",
        ),
        live: Liveness::Live,
        help: "Partitions synthesised at once.",
    },
    KeySpec {
        name: "synthesis_threads",
        check: Check::Count(1, MAX_THREADS),
        default: "auto",
        auto: Some("every core"),
        live: Liveness::Live,
        help: "Threads synthesising, shared out among the synthesis workers (each partition on \
               its own share).",
    },
    KeySpec {
        name: "prover_threads",
        check: Check::Count(1, MAX_THREADS),
        default: "auto",
        auto: Some("every core"),
        live: Liveness::Live,
        help: "Threads of the prover pool: B in G2 on the host, assembly, verification.",
    },
    KeySpec {
        name: "precompiled",
        check: Check::Bool,
        default: "auto",
        auto: Some(
            "true, but on the cpu backend the synthetic workload keeps its fused synthesis, \
             which is faster there",
        ),
        live: Liveness::NextJob,
        help: "Synthesis computes the witness alone and a, b, c come from the circuit's recorded \
               matrices (recorded once, cached beside the parameters; on the GPU with the cuda \
               backend, resident beside the SRS when they fit the budget); false builds every \
               constraint's linear combinations.",
    },
    KeySpec {
        name: "prestage",
        check: Check::Bool,
        default: "auto",
        auto: Some("true on the cuda backend, else false"),
        live: Liveness::Live,
        help: "Synthesis lays each partition's a, b, c out in a page-locked block (within half \
               the memory available) and a worker uploads them before its lock; false copies \
               through a staging ring under the lock.",
    },
    KeySpec {
        name: "msm_double_buffer",
        check: Check::Bool,
        default: "true",
        auto: None,
        live: Liveness::Live,
        help: "MSM batches queued back to back on the stream; false synchronises after each \
               (to compare).",
    },
    KeySpec {
        name: "msm_accumulation",
        check: Check::Choice(&["xyzz", "batch-affine"]),
        default: "xyzz",
        auto: None,
        live: Liveness::Startup,
        help: "How the GPU's MSMs accumulate buckets: xyzz, or batch-affine levels before the \
               XYZZ pass (slower on the H200; to compare).",
    },
    KeySpec {
        name: "shifted_bases",
        check: Check::Choice(&["auto", "off"]),
        default: "auto",
        auto: None,
        live: Liveness::Startup,
        help: "H's MSM over shifted copies of its bases when they fit in VRAM (auto), or over \
               the bases as they are (off).",
    },
    KeySpec {
        name: "b_g2_on",
        check: Check::Choice(&["cpu", "gpu"]),
        default: "auto",
        auto: Some("gpu on the cuda backend, else cpu"),
        live: Liveness::Live,
        help: "Where B's MSM in G2 runs: cpu (the finalizer, on the prover pool) or gpu (in the \
               partition's device region; the cuda backend only).",
    },
    KeySpec {
        name: "srs_residency",
        check: Check::Choice(&["auto", "host", "device"]),
        default: "auto",
        auto: None,
        live: Liveness::NextJob,
        help: "Where the SRS lives: host (uploaded for every partition), device (uploaded once \
               per parameter set and kept), auto (today the same as device).",
    },
    KeySpec {
        name: "host_memory_budget",
        check: Check::Budget,
        default: "auto",
        auto: None,
        live: Liveness::Live,
        help: "Host memory the engine may hold: parameter sets, recorded circuits and \
               page-locked blocks, and partitions between synthesis and their proof in what those \
               leave (one at a time at least); at least what one partition holds (a refusal says \
               how much); auto is four fifths of the memory available at start.",
    },
    KeySpec {
        name: "vram_budget",
        check: Check::Budget,
        default: "auto",
        auto: None,
        live: Liveness::Live,
        help: "VRAM the engine may hold on each device, at least what one partition needs; auto \
               is what the driver allows.",
    },
];

/// The keys' names, in the table's order.
pub const KEYS: [&str; ENGINE_KEYS.len()] = names();

const fn names() -> [&'static str; ENGINE_KEYS.len()] {
    let mut out = [""; ENGINE_KEYS.len()];
    let mut i = 0;
    while i < ENGINE_KEYS.len() {
        out[i] = ENGINE_KEYS[i].name;
        i += 1;
    }
    out
}

const AUTO_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < ENGINE_KEYS.len() {
        if ENGINE_KEYS[i].auto.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
};

/// Keys whose default is the engine's choice (`auto`): it picks a value for the machine and
/// the backend when it starts, and again when one is set to `auto` while running.
pub const AUTO_KEYS: [&str; AUTO_COUNT] = auto_names();

const fn auto_names() -> [&'static str; AUTO_COUNT] {
    let mut out = [""; AUTO_COUNT];
    let (mut i, mut n) = (0, 0);
    while i < ENGINE_KEYS.len() {
        if ENGINE_KEYS[i].auto.is_some() {
            out[n] = ENGINE_KEYS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

/// The table's entry for `key`.
pub fn spec(key: &str) -> Option<&'static KeySpec> {
    ENGINE_KEYS.iter().find(|s| s.name == key)
}

impl Liveness {
    /// How a change is said to take effect, in help, docs and the Settings rows.
    pub fn label(self) -> &'static str {
        match self {
            Liveness::Live => "live",
            Liveness::NextJob => "next job",
            Liveness::Startup => "restart",
        }
    }
}

impl KeySpec {
    /// The command-line flag, without its dashes: the name with `-` for `_`.
    pub fn flag(&self) -> String {
        self.name.replace('_', "-")
    }

    /// The flag's value placeholder: `N|auto`, `single|two-lock|none`, …
    pub fn placeholder(&self) -> String {
        let base = match self.check {
            Check::Count(..) => "N".to_string(),
            Check::Choice(opts) => opts.join("|"),
            Check::Bool => "true|false".into(),
            Check::Budget => "BYTES|auto".into(),
            Check::Devices => "LIST|all".into(),
        };
        match self.auto {
            Some(_) => format!("{base}|auto"),
            None => base,
        }
    }

    /// The values it takes, in words: `1 to 256, auto`, `single, two-lock, none`, …
    pub fn values(&self) -> String {
        let base = match self.check {
            Check::Count(lo, hi) => format!("{lo} to {hi}"),
            Check::Choice(opts) => opts.join(", "),
            Check::Bool => "true, false".into(),
            Check::Budget => "bytes (or 64GiB), auto".into(),
            Check::Devices => "GPU ordinals (0,1), all".into(),
        };
        match self.auto {
            Some(_) => format!("{base}, auto"),
            None => base,
        }
    }

    /// The default in words: `auto: every core` for the engine's choice, else the value.
    pub fn default_text(&self) -> String {
        match self.auto {
            Some(how) => format!("auto: {how}"),
            None => self.default.to_string(),
        }
    }

    /// The flag's help: what it does, its values, when a change takes effect, its default.
    pub fn flag_help(&self) -> String {
        format!(
            "{} Values: {}; a change applies {}. [default: {}]",
            self.help,
            self.values(),
            match self.live {
                Liveness::Live => "live",
                Liveness::NextJob => "from the next job",
                Liveness::Startup => "at start only",
            },
            self.default_text()
        )
    }
}

/// The table of docs/configuration.md: a row per key.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| `[engine]` key | values | default | takes effect | what it does |\n|---|---|---|---|---|\n",
    );
    for s in &ENGINE_KEYS {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            s.name,
            s.values(),
            s.default_text(),
            s.live.label(),
            s.help
        );
    }
    out
}

#[cfg(test)]
mod tests;
