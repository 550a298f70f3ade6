//! Scheduled changes (`--at WHEN:key=value[,key=value…]`): at a time from the start, or after
//! the N-th finished partition, so an operator's experiment repeats exactly. Times count from
//! when the schedule is installed, i.e. when the run starts, not from engine start-up.

use std::sync::Arc;
use std::time::Duration;

use super::Shared;
use crate::config::{ConfigError, EngineConfig};

#[derive(Clone, Debug, PartialEq)]
pub enum When {
    /// Seconds after the engine started.
    Seconds(f64),
    /// After this many partitions have finished.
    Partitions(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scheduled {
    pub when: When,
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
                Ok(v) if v.is_finite() && v >= 0.0 => When::Seconds(v),
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
    let mut timed = vec![];
    {
        let mut st = shared.state.lock();
        for s in plan {
            match s.when {
                When::Partitions(n) => st.after_partitions.push((n, s.changes)),
                When::Seconds(t) => timed.push((t, s.changes)),
            }
        }
        st.after_partitions.sort_by_key(|(n, _)| *n);
    }
    if timed.is_empty() {
        return;
    }
    timed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let shared = shared.clone();
    let origin = std::time::Instant::now();
    std::thread::Builder::new()
        .name("schedule".into())
        .spawn(move || {
            for (t, changes) in timed {
                let due = Duration::from_secs_f64(t);
                let now = origin.elapsed();
                if due > now {
                    std::thread::sleep(due - now);
                }
                if shared.state.lock().shutdown {
                    return;
                }
                let _ = super::reconfigure::apply(&shared, &changes, "schedule");
            }
        })
        .expect("spawning the schedule thread");
}
