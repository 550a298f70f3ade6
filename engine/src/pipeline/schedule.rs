//! Scheduled changes (`--at WHEN:key=value[,key=value…]`): at a time from the start, or after
//! the N-th finished partition, so an operator's experiment repeats exactly. Times count from
//! when the schedule is installed, i.e. when the run starts, not from engine start-up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::state::State;
use super::Shared;
use crate::config::{ConfigError, EngineConfig};
use crate::telemetry::{ConfigChange, Event};

/// The latest time a change may be scheduled at: a week, as a run's other times.
pub const MAX_AT_SECONDS: f64 = 7.0 * 86_400.0;

/// When a scheduled change comes due.
#[derive(Clone, Debug, PartialEq)]
pub enum When {
    /// Seconds after the schedule was installed (the run's start, not the engine's).
    Seconds(f64),
    /// After this many partitions have finished.
    Partitions(u64),
}

/// Changes to apply together when they come due.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheduled {
    /// When they come due.
    pub when: When,
    /// `(key, value)` pairs as `EngineHandle::reconfigure` takes them.
    pub changes: Vec<(String, String)>,
}

impl std::str::FromStr for Scheduled {
    type Err = String;

    /// `5s:lock=two-lock`, `2.5s:a=1,b=2`, `p12:gpu_workers_per_device=3`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (when, rest) = s.split_once(':').ok_or_else(|| {
            format!("`{s}`: expected WHEN:key=value, e.g. 5s:lock=two-lock or p12:prestage=false")
        })?;
        let when = if let Some(secs) = when.strip_suffix('s') {
            match secs.parse::<f64>() {
                Ok(v) if v.is_finite() && (0.0..=MAX_AT_SECONDS).contains(&v) => When::Seconds(v),
                Ok(v) if v.is_finite() && v > MAX_AT_SECONDS => {
                    return Err(format!(
                        "`{when}`: a change is scheduled at most {MAX_AT_SECONDS} s (a week) \
                         from the start"
                    ))
                }
                _ => return Err(format!("`{when}`: a time is seconds such as 5s or 2.5s")),
            }
        } else if let Some(n) = when.strip_prefix('p') {
            When::Partitions(
                n.parse()
                    .map_err(|_| format!("`{when}`: a partition count is pN, e.g. p12"))?,
            )
        } else {
            return Err(format!(
                "`{when}`: WHEN is seconds (5s, 2.5s) or finished partitions (p12)"
            ));
        };
        let changes = rest
            .split(',')
            .map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| format!("`{kv}`: expected key=value"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Scheduled { when, changes })
    }
}

impl Scheduled {
    /// Checks every change against `base` in order, so a bad value is refused before a run.
    pub fn validate(plan: &[Scheduled], base: &EngineConfig) -> Result<(), ConfigError> {
        let mut cfg = base.clone();
        for s in plan {
            for (k, v) in &s.changes {
                if EngineConfig::liveness(k) == Some(crate::config::Liveness::Startup) {
                    return Err(ConfigError {
                        key: k.clone(),
                        message: "cannot be scheduled: it is fixed at start".into(),
                    });
                }
                cfg.set(k, v)?;
            }
        }
        Ok(())
    }
}

pub(super) fn install(shared: &Arc<Shared>, plan: Vec<Scheduled>) {
    let origin = Instant::now();
    let timed = {
        let mut st = shared.state.lock();
        for s in plan {
            match s.when {
                When::Partitions(n) => st.after_partitions.push((n, s.changes)),
                When::Seconds(t) => st.after_seconds.push((t, s.changes)),
            }
        }
        st.after_partitions.sort_by_key(|(n, _)| *n);
        st.after_seconds.sort_by(|a, b| a.0.total_cmp(&b.0));
        st.scheduled_at = Some(origin);
        !st.after_seconds.is_empty()
    };
    if !timed {
        return;
    }
    let shared = shared.clone();
    std::thread::Builder::new()
        .name("schedule".into())
        .spawn(move || loop {
            // The soonest change; none once the schedule has ended or the engine stops.
            let next = {
                let st = shared.state.lock();
                match st.after_seconds.first() {
                    Some((t, _)) if !st.shutdown => *t,
                    _ => return,
                }
            };
            let due = Duration::from_secs_f64(next);
            let now = origin.elapsed();
            if due > now {
                std::thread::sleep(due - now);
            }
            {
                let mut st = shared.state.lock();
                if st.shutdown {
                    return;
                }
                // Ended (and listed as never due) while this thread slept: nothing to apply.
                let changes = match st.after_seconds.first() {
                    Some((t, _)) if *t == next => st.after_seconds.remove(0).1,
                    _ => continue,
                };
                apply_due(&shared, &mut st, &changes);
            }
            shared.cv.notify_all();
        })
        .expect("spawning the schedule thread");
}

/// Applies the changes due now that `st.finished` partitions have finished. The caller holds
/// the state lock from counting the partition to sending its outcome, so whoever sees the
/// outcome also sees the changes in the config log; it wakes waiters afterwards.
pub(super) fn partition_finished(shared: &Arc<Shared>, st: &mut State) {
    let finished = st.finished;
    let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut st.after_partitions)
        .into_iter()
        .partition(|(n, _)| *n <= finished);
    st.after_partitions = later;
    for (_, changes) in due {
        apply_due(shared, st, &changes);
    }
}

/// Applies changes taken off the schedule under the same lock that took them, so a change is
/// never neither pending nor in the config log. Their values were validated when the schedule
/// was installed; a refusal (one the backend cannot run) is in the config log.
fn apply_due(shared: &Arc<Shared>, st: &mut State, changes: &[(String, String)]) {
    let _ = super::reconfigure::apply_locked(shared, st, changes, "schedule");
}

/// Ends the schedule: every change that has not come due is dropped and listed in the config
/// log as not applied, with when the run ended, so a report shows what never happened.
pub(super) fn end(shared: &Arc<Shared>) -> Vec<ConfigChange> {
    let t = shared.clock.now();
    let mut st = shared.state.lock();
    let seconds = st.scheduled_at.map_or(0.0, |o| o.elapsed().as_secs_f64());
    let why = format!(
        "never came due: the run ended at {seconds:.1} s, after {} partition(s)",
        st.finished
    );
    let waiting: Vec<(String, Vec<(String, String)>)> = std::mem::take(&mut st.after_partitions)
        .into_iter()
        .map(|(n, c)| (format!("p{n}"), c))
        .chain(
            std::mem::take(&mut st.after_seconds)
                .into_iter()
                .map(|(s, c)| (format!("{s}s"), c)),
        )
        .collect();
    let mut dropped = vec![];
    for (when, changes) in waiting {
        for (key, value) in changes {
            dropped.push(ConfigChange {
                t,
                from: st.cfg.get(&key).unwrap_or_default(),
                key,
                to: value,
                by: "schedule".into(),
                applied: false,
                error: Some(format!("--at {when}: {why}")),
            });
        }
    }
    st.config_log.extend(dropped.iter().cloned());
    drop(st);
    for c in &dropped {
        tracing::info!(
            "config {} = {}: {}",
            c.key,
            c.to,
            c.error.as_deref().unwrap_or("")
        );
        shared.bus.publish(Event::Config(c.clone()));
    }
    dropped
}
