//! The engine's configuration as the event stream tells it: the starting config, every
//! applied change, and the latest refusal per key (shown inline in the settings panel).

use std::collections::BTreeMap;

use provetop_telemetry::config::EngineConfig;
use provetop_telemetry::{ConfigChange, Nanos};

use super::Ring;

#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub t: Nanos,
    pub to: String,
    pub error: String,
}

/// The engine's configuration as the stream has told it, with its history of changes.
pub struct ConfigState {
    /// The config with every applied change so far.
    pub current: EngineConfig,
    /// Every change, applied or refused, the oldest dropped past 1000.
    pub history: Ring<ConfigChange>,
    /// The last refused change per key, until a later change of that key is applied.
    pub refused: BTreeMap<String, Refusal>,
    /// The latest value of each key the operator changed from the dashboard: what `W` saves.
    pub changed_by_ui: BTreeMap<String, String>,
}

impl ConfigState {
    /// The state of a session that started with `current`: no change yet.
    pub fn new(current: EngineConfig) -> Self {
        ConfigState {
            current,
            history: Ring::new(1000),
            refused: BTreeMap::new(),
            changed_by_ui: BTreeMap::new(),
        }
    }

    /// Folds one change in: an applied one updates `current`, a refused one is kept per key.
    pub fn apply(&mut self, c: &ConfigChange) {
        if c.applied {
            // The engine validated the value; a key this build does not know is still history.
            let _ = self.current.set(&c.key, &c.to);
            self.refused.remove(&c.key);
            if c.by == "ui" {
                self.changed_by_ui.insert(c.key.clone(), c.to.clone());
            }
        } else {
            self.refused.insert(
                c.key.clone(),
                Refusal {
                    t: c.t,
                    to: c.to.clone(),
                    error: c.error.clone().unwrap_or_else(|| "refused".into()),
                },
            );
        }
        self.history.push(c.clone());
    }

    /// The current value of `key` as the config writes it; empty for an unknown key.
    pub fn get(&self, key: &str) -> String {
        self.current.get(key).unwrap_or_default()
    }
}
