//! The bounds of a run, checked before any work: each failure is bad input (exit 2) and
//! names the flag (or `[engine]` key) and the value it needs.

use anyhow::{bail, Result};
use provetop_engine::backend::BackendKind;
use provetop_engine::circuit::Workload;
use provetop_engine::config::{Budget, EngineConfig, Placement};
use provetop_engine::pipeline::MAX_PARTITIONS;

/// Jobs a run proves at most (`--proofs`): a week of the smallest proofs.
pub const MAX_PROOFS: u64 = 1_000_000;
/// Jobs kept in flight at most (`--concurrency`).
pub const MAX_CONCURRENCY: u64 = 4096;
/// `--drain-timeout` at most, as the config file's `drain_timeout`: a day.
pub const MAX_DRAIN_S: u64 = 86_400;
/// `check --max-log2` at most: the largest NTT and MSM the checks allocate.
pub const MAX_CHECK_LOG2: u32 = 28;

/// Every count and duration of the command line, before anything is allocated or started:
/// each failure names its flag (exit 2).
pub fn command(cli: &crate::cli::Cli) -> Result<()> {
    use crate::cli::Command;
    let engine = match &cli.command {
        None => Some(cli.engine_args()),
        Some(Command::Bench(a)) => Some(a.engine_args()),
        Some(Command::Tune(a)) => Some(a.engine_args()),
        Some(Command::Serve(a)) => {
            if let Some(s) = a.drain_timeout.filter(|s| *s > MAX_DRAIN_S) {
                bail!("--drain-timeout {s}: at most {MAX_DRAIN_S} seconds (a day)");
            }
            Some(a.engine_args())
        }
        Some(Command::Check { max_log2 }) if *max_log2 > MAX_CHECK_LOG2 => {
            bail!("--max-log2 {max_log2}: at most {MAX_CHECK_LOG2}")
        }
        Some(_) => None,
    };
    if let Some(e) = engine {
        counts(e.proofs(), e.partitions)?;
        if let crate::cli::Concurrency::Jobs(c) = e.concurrency {
            if c > MAX_CONCURRENCY {
                bail!("--concurrency {c}: at most {MAX_CONCURRENCY} jobs in flight");
            }
        }
    }
    Ok(())
}

/// `--proofs` and `--partitions`.
pub fn counts(proofs: u64, partitions: u32) -> Result<()> {
    if proofs == 0 {
        bail!("--proofs 0: a run proves at least one job");
    }
    if proofs > MAX_PROOFS {
        bail!("--proofs {proofs}: a run proves at most {MAX_PROOFS} jobs");
    }
    if !(1..=MAX_PARTITIONS).contains(&partitions) {
        bail!("--partitions {partitions}: a job has 1 to {MAX_PARTITIONS} partitions");
    }
    Ok(())
}

/// The backend the run proves on, as resolved, and what the config asks of it.
pub fn backend(cfg: &EngineConfig, resolved: BackendKind) -> Result<()> {
    if cfg.backend == BackendKind::Cuda {
        if let Some(why) = provetop_engine::backend::cuda::probe().unavailable() {
            bail!("--backend cuda: no GPU can be used here: {why}; give --backend cpu or auto");
        }
    }
    provetop_engine::pipeline::fits_backend(cfg, resolved)
        .map_err(|e| anyhow::anyhow!("--b-g2-on (b_g2_on) {}", e.message))
}

/// Memory budgets given in bytes: at least what one partition of `workload` holds.
pub fn budgets(cfg: &EngineConfig, resolved: BackendKind, workload: &Workload) -> Result<()> {
    let host = match cfg.host_memory_budget {
        Budget::Bytes(b) => Some(b),
        Budget::Auto => None,
    };
    let vram = match cfg.vram_budget {
        Budget::Bytes(b) if resolved == BackendKind::Cuda => Some(b),
        _ => None,
    };
    if host.is_none() && vram.is_none() {
        return Ok(());
    }
    // Cheap for the built-in workloads: no witness, no parameters.
    let shape = workload.shape()?;
    let label = workload.label();
    if let Some(b) = host {
        let need = provetop_engine::pipeline::partition_bytes(shape.num_rows());
        below("--host-memory-budget (host_memory_budget)", b, need, &label)?;
    }
    if let Some(b) = vram {
        let b_g2 = cfg.b_g2_on == Placement::Gpu;
        let need = provetop_engine::backend::cuda::partition_vram_bytes(&shape, b_g2);
        below("--vram-budget (vram_budget)", b, need, &label)?;
    }
    Ok(())
}

fn below(flag: &str, given: u64, need: u64, label: &str) -> Result<()> {
    if given < need {
        bail!(
            "{flag} {given}: one partition of {label} needs at least {need} bytes ({:.1} MiB)",
            need as f64 / (1u64 << 20) as f64
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_outside_their_bounds_name_the_flag() {
        assert!(counts(1, 1).is_ok() && counts(5, MAX_PARTITIONS).is_ok());
        for (proofs, partitions, flag) in [
            (0, 1, "--proofs"),
            (1, 0, "--partitions"),
            (1, MAX_PARTITIONS + 1, "--partitions"),
            (1, u32::MAX, "--partitions"),
            (MAX_PROOFS + 1, 1, "--proofs"),
            (u64::MAX, 1, "--proofs"),
        ] {
            let e = counts(proofs, partitions).unwrap_err().to_string();
            assert!(e.starts_with(flag), "{e}");
        }
    }

    #[test]
    fn a_budget_below_one_partition_gives_the_minimum() {
        let k10 = Workload::Synthetic {
            log2_constraints: 10,
        };
        let need = provetop_engine::pipeline::partition_bytes(1 << 10);
        let mut cfg = EngineConfig::default();
        cfg.set("host_memory_budget", &need.to_string()).unwrap();
        assert!(budgets(&cfg, BackendKind::Cpu, &k10).is_ok());
        cfg.set("host_memory_budget", &(need - 1).to_string())
            .unwrap();
        let e = budgets(&cfg, BackendKind::Cpu, &k10)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("host_memory_budget") && e.contains(&need.to_string()),
            "{e}"
        );
        // A VRAM budget only bounds the cuda backend.
        let mut cfg = EngineConfig::default();
        cfg.set("vram_budget", "1").unwrap();
        assert!(budgets(&cfg, BackendKind::Cpu, &k10).is_ok());
        let e = budgets(&cfg, BackendKind::Cuda, &k10)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("vram_budget") && e.contains("needs at least"),
            "{e}"
        );
    }
}
