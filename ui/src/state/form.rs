//! The settings form: a row per `[engine]` field and per `[ui]` setting. Engine edits wait
//! as pending values until applied together (the engine takes a set of changes all or
//! nothing); each pending value is checked as it is made, and the engine's own refusal,
//! when it comes back as a `Config` event, shows on the row too.

use std::collections::BTreeMap;

use provetop_telemetry::config::{parse_budget, spec, Budget, Check, EngineConfig, Liveness, KEYS};

/// A row of the settings form, in the order of [`ROWS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// An `[engine]` field, by its config key.
    Engine(&'static str),
    /// `[ui] theme`: steps through the built-in themes.
    Theme,
    /// `[ui] refresh_hz`: frames per second while live, stepped by whole numbers.
    Refresh,
    /// Saves the `[ui]` settings to the config file; a failure shows on this row.
    Save,
}

/// Every `[engine]` key, then the `[ui]` settings and the save row.
pub const ROWS: [Row; KEYS.len() + 3] = rows();

const fn rows() -> [Row; KEYS.len() + 3] {
    let mut rows = [Row::Save; KEYS.len() + 3];
    let mut i = 0;
    while i < KEYS.len() {
        rows[i] = Row::Engine(KEYS[i]);
        i += 1;
    }
    rows[KEYS.len()] = Row::Theme;
    rows[KEYS.len() + 1] = Row::Refresh;
    rows
}

/// How an `[engine]` field is edited on its row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer stepped within (lowest, highest), both inclusive.
    Count(usize, usize),
    /// One of these values, stepped round in this order.
    Choice(&'static [&'static str]),
    /// `true` or `false`, flipped by a step.
    Bool,
    /// A memory budget: `auto` or a size, stepped through auto and powers of two GiB.
    Budget,
    /// Fixed while the engine runs.
    Startup,
}

/// How the settings form edits `key`, from the table of `[engine]` keys; a key it does not
/// know is fixed.
pub fn field_kind(key: &str) -> FieldKind {
    let Some(spec) = spec(key) else {
        return FieldKind::Startup;
    };
    if spec.live == Liveness::Startup {
        return FieldKind::Startup;
    }
    match spec.check {
        Check::Count(lo, hi) => FieldKind::Count(lo, hi),
        Check::Choice(opts) => FieldKind::Choice(opts),
        Check::Bool => FieldKind::Bool,
        Check::Budget => FieldKind::Budget,
        Check::Devices => FieldKind::Startup,
    }
}

/// The settings form's state: the selected row and what waits to be applied or saved.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Form {
    /// The selected row, an index into [`ROWS`] (clamped to it where read).
    pub row: usize,
    /// Engine values waiting to be applied, by key.
    pub pending: BTreeMap<String, String>,
    /// Text being typed into the selected row.
    pub editing: Option<String>,
    /// The outcome of the last save of `[ui]`.
    pub saved: Option<Result<String, String>>,
}

impl Form {
    /// The selected row; past the end, the last one.
    pub fn current_row(&self) -> Row {
        ROWS[self.row.min(ROWS.len() - 1)]
    }

    /// The value shown for `key`: pending if any, else the engine's.
    pub fn value(&self, key: &str, cfg: &EngineConfig) -> String {
        self.pending
            .get(key)
            .cloned()
            .unwrap_or_else(|| cfg.get(key).unwrap_or_default())
    }

    /// Why the engine would refuse a pending value, checked as the engine checks it.
    pub fn problem(&self, key: &str, cfg: &EngineConfig) -> Option<String> {
        let v = self.pending.get(key)?;
        let mut c = cfg.clone();
        c.set(key, v).err().map(|e| e.message)
    }

    /// Sets a pending value; one equal to the engine's is no change.
    pub fn set_pending(&mut self, key: &str, value: String, cfg: &EngineConfig) {
        if cfg.get(key).as_deref() == Some(value.as_str()) {
            self.pending.remove(key);
        } else {
            self.pending.insert(key.to_string(), value);
        }
    }

    /// Moves an engine field one step (`dir` is -1 or 1) as a pending value.
    pub fn step(&mut self, key: &str, dir: i64, cfg: &EngineConfig) {
        let v = self.value(key, cfg);
        let next = match field_kind(key) {
            FieldKind::Startup => return,
            FieldKind::Count(lo, hi) => {
                let n = v.parse::<i64>().unwrap_or(lo as i64) + dir;
                n.clamp(lo as i64, hi as i64).to_string()
            }
            FieldKind::Choice(opts) => {
                let i = opts.iter().position(|o| *o == v).unwrap_or(0) as i64;
                let n = opts.len() as i64;
                opts[((i + dir).rem_euclid(n)) as usize].to_string()
            }
            FieldKind::Bool => (v != "true").to_string(),
            FieldKind::Budget => step_budget(&v, dir),
        };
        self.set_pending(key, next, cfg);
    }

    /// The changes to send, in the order of the config's keys.
    pub fn take_changes(&mut self) -> Vec<(String, String)> {
        let pending = std::mem::take(&mut self.pending);
        KEYS.iter()
            .filter_map(|k| pending.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect()
    }
}

/// Budgets step through auto and powers of two GiB.
fn step_budget(v: &str, dir: i64) -> String {
    const GIB: u64 = 1 << 30;
    match (parse_budget(v), dir > 0) {
        (Ok(Budget::Auto), true) => "1GiB".into(),
        (Ok(Budget::Auto), false) => "auto".into(),
        (Ok(Budget::Bytes(b)), up) => {
            let gib = b / GIB;
            let next = if up {
                (gib + 1).next_power_of_two()
            } else if gib <= 1 {
                return "auto".into();
            } else if gib.is_power_of_two() {
                gib / 2
            } else {
                gib.next_power_of_two() / 2
            };
            format!("{}GiB", next.min(1 << 16))
        }
        (Err(_), _) => "auto".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_and_their_steps_are_the_tables() {
        use provetop_telemetry::config::{ENGINE_KEYS, MAX_WORKERS};
        for (row, s) in ROWS.iter().zip(ENGINE_KEYS.iter()) {
            assert_eq!(*row, Row::Engine(s.name));
        }
        assert_eq!(ROWS[ENGINE_KEYS.len()], Row::Theme);
        assert_eq!(
            field_kind("synthesis_workers"),
            FieldKind::Count(1, MAX_WORKERS)
        );
        assert_eq!(
            field_kind("lock"),
            FieldKind::Choice(&["single", "two-lock", "none"])
        );
        assert_eq!(field_kind("backend"), FieldKind::Startup);
        assert_eq!(field_kind("prestage"), FieldKind::Bool);
        assert_eq!(field_kind("vram_budget"), FieldKind::Budget);
        assert_eq!(field_kind("colour"), FieldKind::Startup);
    }

    #[test]
    fn steps_validate_and_collect_in_key_order() {
        let cfg = EngineConfig::default();
        let mut f = Form::default();
        f.step("lock", 1, &cfg);
        f.step("gpu_workers_per_device", 1, &cfg);
        f.step("msm_double_buffer", 1, &cfg);
        f.step("vram_budget", 1, &cfg);
        f.step("vram_budget", 1, &cfg);
        f.step("backend", 1, &cfg);
        assert_eq!(f.value("lock", &cfg), "two-lock");
        assert_eq!(f.value("vram_budget", &cfg), "2GiB");
        f.step("msm_double_buffer", 1, &cfg);
        assert!(
            !f.pending.contains_key("msm_double_buffer"),
            "back to the engine's value"
        );
        f.pending.insert("synthesis_workers".into(), "0".into());
        assert!(f
            .problem("synthesis_workers", &cfg)
            .unwrap()
            .contains("1 to 256"));
        let keys: Vec<String> = f.take_changes().into_iter().map(|c| c.0).collect();
        assert_eq!(
            keys,
            [
                "gpu_workers_per_device",
                "lock",
                "synthesis_workers",
                "vram_budget"
            ]
        );
        assert_eq!(step_budget("3GiB", -1), "2GiB");
        assert_eq!(step_budget("1GiB", -1), "auto");
    }
}
