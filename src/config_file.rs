//! The config file: `[engine]` (an `EngineConfig`) and `[ui]` (the dashboard's settings).
//! Flags override the file; an unknown key or a bad value names the key and exits with 2.
//! Every mode reads the file through `load`, which checks both tables, so one file is good
//! or bad alike for the dashboard, `bench`, headless runs and `replay`.

use anyhow::{bail, Context, Result};
use provetop_telemetry::config::EngineConfig;
use provetop_ui::UiSettings;
use std::path::{Path, PathBuf};

use crate::cli::EngineArgs;

/// `$XDG_CONFIG_HOME/provetop/config.toml`, else `~/.config/provetop/config.toml`.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("provetop").join("config.toml"))
}

pub struct ConfigFile {
    pub path: Option<PathBuf>,
    pub engine: toml::Table,
    /// The dashboard's settings, checked here whatever the mode.
    pub ui: UiSettings,
}

/// Reads the named file (it must exist) or the default one (it may not).
pub fn load(named: Option<&Path>) -> Result<ConfigFile> {
    let (path, required) = match named {
        Some(p) => (Some(p.to_path_buf()), true),
        None => (default_path(), false),
    };
    let Some(path) = path.filter(|p| required || p.exists()) else {
        return Ok(ConfigFile {
            path: None,
            engine: toml::Table::new(),
            ui: UiSettings::default(),
        });
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading config file {}", path.display()))?;
    let mut doc: toml::Table = toml::from_str(&text)
        .with_context(|| format!("config file {} is not valid TOML", path.display()))?;
    let mut table = |name: &str| -> Result<toml::Table> {
        match doc.remove(name) {
            None => Ok(toml::Table::new()),
            Some(toml::Value::Table(t)) => Ok(t),
            Some(_) => bail!(
                "config file {}: `{name}` must be a table ([{name}])",
                path.display()
            ),
        }
    };
    let engine = table("engine")?;
    let ui = table("ui")?;
    if let Some(key) = doc.keys().next() {
        bail!(
            "config file {}: unknown key `{key}`; the file has [engine] and [ui] tables",
            path.display()
        );
    }
    EngineConfig::from_toml_table(&engine)
        .map_err(|e| anyhow::anyhow!("config file {}: [engine] {e}", path.display()))?;
    let ui = UiSettings::from_table(&ui)
        .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))?;
    Ok(ConfigFile {
        path: Some(path),
        engine,
        ui,
    })
}

/// The engine configuration: defaults, then the file's `[engine]`, then flags.
pub fn engine_config(file: &ConfigFile, args: &EngineArgs) -> Result<EngineConfig> {
    let where_ = file
        .path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut cfg = EngineConfig::from_toml_table(&file.engine)
        .map_err(|e| anyhow::anyhow!("config file {where_}: [engine] {e}"))?;
    for (key, value) in args.config_overrides() {
        cfg.set(key, &value)
            .map_err(|e| anyhow::anyhow!("--{}: {}", key.replace('_', "-"), e.message))?;
    }
    Ok(cfg)
}
