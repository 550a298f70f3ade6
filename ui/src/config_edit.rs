//! The one writer of the config file: it edits the TOML document in place, so comments,
//! order and every key it was not asked to change stay as they were, and replaces the file
//! atomically. `[ui]` (the `w` key) and the engine values the operator changed (`W`) go
//! through it.

use std::collections::BTreeMap;
use std::path::Path;

/// Reads `path` (a missing file is empty), lets `f` change the document, writes it back.
pub fn edit(
    path: &Path,
    f: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<(), String>,
) -> Result<(), String> {
    let text = match provetop_telemetry::input::read_regular_text(
        path,
        provetop_telemetry::input::SMALL_FILE,
    ) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("reading {}: {e}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("{} is not valid TOML: {e}", path.display()))?;
    f(&mut doc)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    // A temporary file beside it, renamed into place: the old file stays whole until then.
    provetop_telemetry::output::write_bytes(path, doc.to_string().as_bytes())
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Writes `changes` (key → value as the engine reports it) into `[engine]`, typed as the
/// config file reads them: whole numbers, booleans, the rest strings (`auto`, `two-lock`).
/// A key's own comment stays with it.
pub fn save_engine(path: &Path, changes: &BTreeMap<String, String>) -> Result<(), String> {
    edit(path, |doc| {
        if !doc.contains_table("engine") {
            doc["engine"] = toml_edit::table();
        }
        let engine = doc["engine"]
            .as_table_mut()
            .ok_or_else(|| format!("{}: `engine` is not a table", path.display()))?;
        for (key, to) in changes {
            let v = if let Ok(n) = to.parse::<i64>() {
                toml_edit::Value::from(n)
            } else if let Ok(b) = to.parse::<bool>() {
                toml_edit::Value::from(b)
            } else {
                toml_edit::Value::from(to.as_str())
            };
            match engine.get_mut(key).and_then(|i| i.as_value_mut()) {
                // Keep the decoration (the comment after the value) of a key already there.
                Some(old) => {
                    let decor = old.decor().clone();
                    *old = v;
                    *old.decor_mut() = decor;
                }
                None => engine[key.as_str()] = toml_edit::value(v),
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_changes_keep_comments_and_touch_only_their_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# rig 7\n[engine]\n# the lock we settled on\nlock = \"single\" # see notes\nprover_threads = 12\n\n[ui]\ntheme = \"light\"\n";
        std::fs::write(&path, before).unwrap();
        let changes = BTreeMap::from([
            ("lock".to_string(), "two-lock".to_string()),
            ("gpu_workers_per_device".to_string(), "3".to_string()),
            ("prestage".to_string(), "false".to_string()),
        ]);
        save_engine(&path, &changes).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# rig 7\n[engine]\n# the lock we settled on\nlock = \"two-lock\" # see notes\nprover_threads = 12\n"),
            "{text}"
        );
        assert!(text.contains("[ui]\ntheme = \"light\"\n"), "{text}");
        let back: toml::Table = toml::from_str(&text).unwrap();
        let e = back["engine"].as_table().unwrap();
        assert_eq!(e["gpu_workers_per_device"].as_integer(), Some(3));
        assert_eq!(e["prestage"].as_bool(), Some(false));
        // What the engine reads back is what was changed.
        let cfg = provetop_telemetry::config::EngineConfig::from_toml_table(e).unwrap();
        assert_eq!(cfg.get("lock").as_deref(), Some("two-lock"));
        assert_eq!(cfg.get("gpu_workers_per_device").as_deref(), Some("3"));
    }
}
