//! What a session is about: the machine, its devices and the starting configuration. The
//! dashboard shows it; a recording stores it in its header.

use serde::{Deserialize, Serialize};

use crate::config::EngineConfig;

/// The host the session ran on, as `MachineInfo::detect` found it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// The kernel's hostname; empty where unreadable.
    pub hostname: String,
    /// The OS and kernel release, e.g. `linux 6.8.0-45-generic`.
    pub os: String,
    /// The CPU's model name, or the architecture where `/proc/cpuinfo` has none.
    pub cpu: String,
    /// Cores available to the process.
    pub cores: usize,
    /// Host RAM (bytes); 0 where unknown.
    pub memory_bytes: u64,
}

/// A device the engine proves on: a GPU or a CPU executor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// `gpu0`, `cpu0`: the name used by lanes and samples.
    pub id: String,
    /// `NVIDIA H200`, `CPU executor (8 threads)`.
    pub name: String,
    /// `gpu` or `cpu`.
    pub kind: String,
    /// The device's own memory (bytes); 0 for a CPU executor.
    pub memory_bytes: u64,
    /// PCIe generation and width, where known.
    pub pcie: Option<(u32, u32)>,
}

/// A session's description: a recording's header, the dashboard's header line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The host it ran on, as detected at the start.
    pub machine: MachineInfo,
    /// The devices in service at the start.
    pub devices: Vec<DeviceInfo>,
    /// The engine's configuration at the start; `Config` events change it.
    pub config: EngineConfig,
    /// The workload's label, e.g. `synthetic-k14`.
    pub workload: String,
    /// Wall-clock start, seconds since the Unix epoch.
    pub started_unix: f64,
}

impl MachineInfo {
    /// Reads the host's description from `/proc`; what it cannot read stays empty or 0.
    pub fn detect() -> Self {
        fn read(path: &str) -> Option<String> {
            std::fs::read_to_string(path)
                .ok()
                .map(|s| s.trim().to_string())
        }
        let cpu = read("/proc/cpuinfo")
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let memory_bytes = read("/proc/meminfo")
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .map_or(0, |kib| kib * 1024);
        MachineInfo {
            hostname: read("/proc/sys/kernel/hostname").unwrap_or_default(),
            os: format!(
                "{} {}",
                std::env::consts::OS,
                read("/proc/sys/kernel/osrelease").unwrap_or_default()
            )
            .trim()
            .to_string(),
            cpu,
            cores: crate::config::cores(),
            memory_bytes,
        }
    }
}

/// The workload label of a session made by `provetop serve`: what it proves is only known as
/// requests come, so its header names what it served instead ([`serving`]).
pub const SERVING: &str = "serving";

/// What a session's header says it runs: its workload label, or for a session made by `serve`
/// (`workload` starting with [`SERVING`]) the kinds it served with their job counts,
/// `serving: winning-post ×3, porep ×1` (`serving: nothing yet` before the first), followed by
/// the rest of the label (` · TEST PARAMETERS …`).
pub fn serving<'a>(workload: &str, kinds: impl IntoIterator<Item = (&'a str, usize)>) -> String {
    let Some(rest) = workload.strip_prefix(SERVING) else {
        return workload.to_string();
    };
    let served: Vec<String> = kinds
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect();
    match served.is_empty() {
        true => format!("{SERVING}: nothing yet{rest}"),
        false => format!("{SERVING}: {}{rest}", served.join(", ")),
    }
}

#[cfg(test)]
mod serving_tests {
    use super::serving;

    #[test]
    fn a_served_session_names_its_kinds_and_others_keep_their_label() {
        let kinds = [("winning-post", 3), ("porep", 1), ("snap", 0)];
        assert_eq!(
            serving("serving · TEST PARAMETERS", kinds),
            "serving: winning-post ×3, porep ×1 · TEST PARAMETERS"
        );
        assert_eq!(serving("serving", []), "serving: nothing yet");
        assert_eq!(serving("synthetic-k14", kinds), "synthetic-k14");
    }
}
