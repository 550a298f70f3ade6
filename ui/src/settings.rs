//! The dashboard's own settings: the `[ui]` table of the config file (theme, refresh rate,
//! key bindings), read with errors that name the key, and saved back without touching the
//! rest of the file.

use std::path::Path;

use crate::keys::KeyMap;

/// The range `refresh_hz` may take, in frames per second, both ends inclusive.
pub const REFRESH_HZ: (f64, f64) = (1.0, 60.0);

/// The `[ui]` table of the config file, as read or as changed from the settings form.
#[derive(Clone, Debug, PartialEq)]
pub struct UiSettings {
    /// A built-in theme name or a path.
    pub theme: String,
    /// Frames per second while live.
    pub refresh_hz: f64,
    /// `[ui.keys]` as written: (action, keys); kept to save them back.
    pub keys: Vec<(String, Vec<String>)>,
    /// The bindings in effect: the defaults with `keys` over them.
    pub keymap: KeyMap,
}

impl Default for UiSettings {
    fn default() -> Self {
        UiSettings {
            theme: crate::theme::DEFAULT.to_string(),
            refresh_hz: 10.0,
            keys: vec![],
            keymap: KeyMap::default(),
        }
    }
}

impl UiSettings {
    /// Reads the `[ui]` table; an unknown key or a bad value is an error naming it.
    pub fn from_table(t: &toml::Table) -> Result<UiSettings, String> {
        let mut s = UiSettings::default();
        for (key, v) in t {
            match key.as_str() {
                "theme" => {
                    s.theme = v
                        .as_str()
                        .ok_or("[ui] theme: expected a theme name or a path")?
                        .to_string()
                }
                "refresh_hz" => {
                    let hz = v
                        .as_float()
                        .or_else(|| v.as_integer().map(|i| i as f64))
                        .filter(|hz| (REFRESH_HZ.0..=REFRESH_HZ.1).contains(hz))
                        .ok_or_else(|| {
                            format!(
                                "[ui] refresh_hz: expected frames per second from {} to {}, got {v}",
                                REFRESH_HZ.0, REFRESH_HZ.1
                            )
                        })?;
                    s.refresh_hz = hz;
                }
                "keys" => {
                    let table = v
                        .as_table()
                        .ok_or("[ui] keys: expected a table ([ui.keys])")?;
                    for (action, keys) in table {
                        let keys = match keys {
                            toml::Value::String(k) => vec![k.clone()],
                            toml::Value::Array(a) => a
                                .iter()
                                .map(|k| k.as_str().map(str::to_string))
                                .collect::<Option<Vec<_>>>()
                                .ok_or_else(|| {
                                    format!("[ui] keys.{action}: expected a key or a list of keys")
                                })?,
                            _ => {
                                return Err(format!(
                                    "[ui] keys.{action}: expected a key or a list of keys"
                                ))
                            }
                        };
                        s.keys.push((action.clone(), keys));
                    }
                    s.keymap = KeyMap::with(&s.keys).map_err(|e| format!("[ui] {e}"))?;
                }
                other => {
                    return Err(format!(
                        "[ui] {other}: unknown key; the keys are theme, refresh_hz, keys"
                    ))
                }
            }
        }
        Ok(s)
    }

    /// Writes `[ui]` into the config file at `path` (created if missing), keeping every other
    /// table, and comments, as they were. The write is atomic: a new file renamed over.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        crate::config_edit::edit(path, |doc| {
            if !doc.contains_table("ui") {
                doc["ui"] = toml_edit::table();
            }
            let ui = doc["ui"]
                .as_table_mut()
                .ok_or_else(|| format!("{}: `ui` is not a table", path.display()))?;
            ui["theme"] = toml_edit::value(self.theme.clone());
            ui["refresh_hz"] = if self.refresh_hz.fract() == 0.0 {
                toml_edit::value(self.refresh_hz as i64)
            } else {
                toml_edit::value(self.refresh_hz)
            };
            if !self.keys.is_empty() {
                let mut keys = toml_edit::Table::new();
                for (action, k) in &self.keys {
                    keys[action] = if k.len() == 1 {
                        toml_edit::value(k[0].clone())
                    } else {
                        toml_edit::value(k.iter().cloned().collect::<toml_edit::Array>())
                    };
                }
                ui["keys"] = toml_edit::Item::Table(keys);
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_key() {
        let parse = |s: &str| UiSettings::from_table(&toml::from_str(s).unwrap());
        assert!(parse("them = \"dark\"").unwrap_err().contains("[ui] them"));
        assert!(parse("refresh_hz = 0").unwrap_err().contains("refresh_hz"));
        assert!(parse("keys = { quit = 3 }")
            .unwrap_err()
            .contains("keys.quit"));
        let s = parse("theme = \"light\"\nrefresh_hz = 4\nkeys = { quit = [\"Q\", \"ctrl-d\"] }")
            .unwrap();
        assert_eq!((s.theme.as_str(), s.refresh_hz), ("light", 4.0));
    }

    #[test]
    fn save_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("provetop").join("config.toml");
        let mut s = UiSettings::default();
        s.save(&path).unwrap();
        std::fs::write(
            &path,
            "# mine\n[engine]\nlock = \"two-lock\" # why\n\n[ui]\ntheme = \"dark\"\n",
        )
        .unwrap();
        s.theme = "high-contrast".into();
        s.refresh_hz = 2.5;
        s.keys = vec![("quit".into(), vec!["Q".into()])];
        s.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# mine\n[engine]\nlock = \"two-lock\" # why\n"),
            "{text}"
        );
        let back: toml::Table = toml::from_str(&text).unwrap();
        let ui = UiSettings::from_table(back["ui"].as_table().unwrap()).unwrap();
        assert_eq!((ui.theme, ui.refresh_hz, ui.keys), (s.theme, 2.5, s.keys));
    }
}
