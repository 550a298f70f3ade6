//! What the run's report says about the machine.

use serde::Serialize;

#[derive(Serialize, Debug, Clone)]
pub struct Machine {
    pub hostname: String,
    pub os: String,
    pub cpu: String,
    pub cores: usize,
    pub memory_bytes: u64,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

pub fn describe() -> Machine {
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
    Machine {
        hostname: read("/proc/sys/kernel/hostname").unwrap_or_default(),
        os: format!(
            "{} {}",
            std::env::consts::OS,
            read("/proc/sys/kernel/osrelease").unwrap_or_default()
        )
        .trim()
        .to_string(),
        cpu,
        cores: provetop_engine::config::cores(),
        memory_bytes,
    }
}
