//! What a session is about: the machine, its devices and the starting configuration. The
//! dashboard shows it; a recording stores it in its header.

use serde::{Deserialize, Serialize};

use crate::config::EngineConfig;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    pub hostname: String,
    pub os: String,
    pub cpu: String,
    pub cores: usize,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// `gpu0`, `cpu0`: the name used by lanes and samples.
    pub id: String,
    /// `NVIDIA H200`, `CPU executor (8 threads)`.
    pub name: String,
    pub kind: String,
    pub memory_bytes: u64,
    /// PCIe generation and width, where known.
    pub pcie: Option<(u32, u32)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub machine: MachineInfo,
    pub devices: Vec<DeviceInfo>,
    pub config: EngineConfig,
    /// The workload's label, e.g. `synthetic-k14`.
    pub workload: String,
    /// Wall-clock start, seconds since the Unix epoch.
    pub started_unix: f64,
}

impl MachineInfo {
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
