//! The host through sysinfo: CPU busy per core, RAM used and total, the process's RSS.

use std::time::Duration;
use sysinfo::{
    CpuRefreshKind, MemoryRefreshKind, Pid, ProcessRefreshKind, ProcessesToUpdate, System,
};

use super::Ctx;
use crate::telemetry::metrics;

const PERIOD: Duration = Duration::from_secs(1);

pub(super) fn run(ctx: &Ctx) {
    let mut sys = match System::new() {
        Ok(s) => s,
        Err(e) => {
            tracing::info!("sysinfo not available ({e}); the system sampler is off");
            return;
        }
    };
    let pid = Pid::from_u32(std::process::id());
    // CPU usage needs two refreshes some time apart: the first one only sets the baseline.
    sys.refresh_cpu_specifics(CpuRefreshKind::nothing().with_usage());
    let core_names: Vec<String> = (0..sys.cpus().len())
        .map(|i| format!("{}{i}", metrics::CPU_CORE_PREFIX))
        .collect();
    let mut first = true;
    loop {
        let t = ctx.now();
        sys.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
        ctx.emit_at(t, metrics::HOST_RAM_USED, None, sys.used_memory() as f64);
        ctx.emit_at(t, metrics::HOST_RAM_TOTAL, None, sys.total_memory() as f64);
        sys.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            false,
            ProcessRefreshKind::nothing().with_memory(),
        );
        if let Some(p) = sys.process(pid) {
            ctx.emit_at(t, metrics::PROCESS_RSS, None, p.memory() as f64);
        }
        if !first {
            sys.refresh_cpu_specifics(CpuRefreshKind::nothing().with_usage());
            for (i, cpu) in sys.cpus().iter().enumerate() {
                let name = core_names
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("{}{i}", metrics::CPU_CORE_PREFIX));
                ctx.emit_at(t, name, None, cpu.usage() as f64 / 100.0);
            }
        }
        first = false;
        if !ctx.sleep(PERIOD) {
            return;
        }
    }
}
