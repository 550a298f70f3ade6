//! Live reconfiguration: validate a set of changes as a whole, record them, and bring pools,
//! devices, workers and locks in line. Running partitions keep what they started with.

use std::sync::Arc;

use super::state::{host_budget, pool, State};
use super::{worker, Shared};
use crate::backend::cpu::CpuExecutor;
use crate::backend::BackendKind;
use crate::config::{cores, ConfigError, EngineConfig, Liveness, Placement};
use crate::telemetry::{ConfigChange, Event};

pub(super) fn apply(
    shared: &Arc<Shared>,
    changes: &[(String, String)],
    by: &str,
) -> Result<Vec<ConfigChange>, ConfigError> {
    let applied = apply_locked(shared, &mut shared.state.lock(), changes, by);
    shared.cv.notify_all();
    applied
}

/// [`apply`] under a held state lock, so a change due at a partition is in the config log
/// before that partition's outcome is visible. The caller wakes waiters.
pub(super) fn apply_locked(
    shared: &Arc<Shared>,
    st: &mut State,
    changes: &[(String, String)],
    by: &str,
) -> Result<Vec<ConfigChange>, ConfigError> {
    let t = shared.clock.now();
    let mut next = st.cfg.clone();
    let checked = changes
        .iter()
        .try_for_each(|(key, value)| match EngineConfig::liveness(key) {
            Some(Liveness::Startup) => Err(ConfigError {
                key: key.clone(),
                message: "cannot change while the engine runs; restart with the new value".into(),
            }),
            _ => next.set(key, value),
        })
        .and_then(|()| fits_backend(&next, shared.backend));
    if let Err(e) = checked {
        for (key, value) in changes {
            let refused = ConfigChange {
                t,
                key: key.clone(),
                from: st.cfg.get(key).unwrap_or_default(),
                to: value.clone(),
                by: by.to_string(),
                applied: false,
                error: Some(e.to_string()),
            };
            st.config_log.push(refused.clone());
            shared.bus.publish(Event::Config(refused));
        }
        return Err(e);
    }
    // A key set back to `auto` gets the engine's choice now.
    crate::pipeline::auto::resolve(&mut next, &shared.machine);
    let mut applied = vec![];
    for (key, _) in changes {
        let (from, to) = (
            st.cfg.get(key).unwrap_or_default(),
            next.get(key).unwrap_or_default(),
        );
        if from != to && !applied.iter().any(|c: &ConfigChange| &c.key == key) {
            applied.push(ConfigChange {
                t,
                key: key.clone(),
                from,
                to,
                by: by.to_string(),
                applied: true,
                error: None,
            });
        }
    }
    let old = std::mem::replace(&mut st.cfg, next);
    if let Err(e) = sync(shared, st, &old) {
        tracing::warn!("applying the configuration: {e:#}");
    }
    for c in &applied {
        record(shared, st, c.clone());
    }
    Ok(applied)
}

/// A change applied: in the log, the config log and the event stream.
pub(super) fn record(shared: &Shared, st: &mut State, c: ConfigChange) {
    tracing::info!("config {}: {} -> {} (by {})", c.key, c.from, c.to, c.by);
    st.config_log.push(c.clone());
    shared.bus.publish(Event::Config(c));
}

/// Refuses values the backend cannot run: B in G2 on a GPU where no GPU proves.
pub fn fits_backend(cfg: &EngineConfig, backend: BackendKind) -> Result<(), ConfigError> {
    if backend != BackendKind::Cuda && cfg.b_g2_on == Placement::Gpu && !cfg.is_auto("b_g2_on") {
        return Err(ConfigError {
            key: "b_g2_on".into(),
            message: format!(
                "`gpu` needs the cuda backend; the {backend} backend computes B in G2 on the CPU"
            ),
        });
    }
    Ok(())
}

/// Creates the devices and workers of the initial configuration.
pub(super) fn sync_devices(shared: &Arc<Shared>) {
    let mut st = shared.state.lock();
    let cfg = st.cfg.clone();
    if let Err(e) = sync(shared, &mut st, &cfg) {
        tracing::warn!("starting devices: {e:#}");
    }
}

fn sync(shared: &Arc<Shared>, st: &mut State, old: &EngineConfig) -> anyhow::Result<()> {
    let cfg = st.cfg.clone();
    if (cfg.synthesis_threads, cfg.synthesis_workers)
        != (old.synthesis_threads, old.synthesis_workers)
    {
        st.synthesis
            .rebuild(cfg.synthesis_workers, cfg.synthesis_threads)?;
    }
    if cfg.prover_threads != old.prover_threads {
        st.prover_pool = pool("prover", cfg.prover_threads)?;
    }
    if cfg.host_memory_budget != old.host_memory_budget {
        st.host.set_limit(host_budget(cfg.host_memory_budget));
    }
    if cfg.lock != old.lock {
        for d in &mut st.devices {
            d.lock = Arc::from(super::locks::new_lock(cfg.lock));
        }
    }
    if shared.backend == BackendKind::Cpu {
        sync_cpu_devices(st, cfg.cpu_devices)?;
    }
    for d in 0..st.devices.len() {
        st.devices[d].target = cfg.gpu_workers_per_device;
        while !st.devices[d].retiring && st.devices[d].regular() < st.devices[d].target {
            worker::spawn(shared, st, d);
        }
    }
    Ok(())
}

/// On the cpu backend a device is an executor with its own pool; `cpu_devices` of them.
fn sync_cpu_devices(st: &mut State, want: usize) -> anyhow::Result<()> {
    let threads = (cores() / want).max(1);
    for i in 0..want.max(st.devices.len()) {
        let name = format!("cpu{i}");
        match st.devices.iter_mut().find(|d| d.exec.device() == name) {
            Some(d) => d.retiring = i >= want || d.failed.is_some(),
            None if i < want => st.add_device(Arc::new(CpuExecutor::new(i, threads)?)),
            None => {}
        }
    }
    // A retiring device whose workers have all left goes now; otherwise its last worker removes it.
    st.devices.retain(|d| !(d.retiring && d.running() == 0));
    Ok(())
}
