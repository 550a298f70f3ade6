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

pub struct ConfigState {
    pub current: EngineConfig,
    pub history: Ring<ConfigChange>,
    /// The last refused change per key, until a later change of that key is applied.
    pub refused: BTreeMap<String, Refusal>,
    /// The latest value of each key the operator changed from the dashboard: what `W` saves.
    pub changed_by_ui: BTreeMap<String, String>,
}

impl ConfigState {
    pub fn new(current: EngineConfig) -> Self {
        ConfigState {
            current,
            history: Ring::new(1000),
            refused: BTreeMap::new(),
            changed_by_ui: BTreeMap::new(),
        }
    }

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

    pub fn get(&self, key: &str) -> String {
        self.current.get(key).unwrap_or_default()
    }
}
