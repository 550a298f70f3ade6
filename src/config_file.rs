//! The config file: `[engine]` (an `EngineConfig`), `[ui]` (the dashboard's settings) and
//! `[serve]` (`provetop serve`'s own).
//! Flags override the file; an unknown key or a bad value names the key and exits with 2.
//! Every mode reads the file through `load`, which checks both tables, so one file is good
//! or bad alike for the dashboard, `bench`, headless runs and `replay`.

use anyhow::{bail, Context, Result};
use provetop_telemetry::config::{parse_budget, Budget, EngineConfig};
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
    /// `provetop serve`'s settings, checked here whatever the mode.
    pub serve: ServeSettings,
    /// `[alerts]`: what `serve` watches for and whom it tells.
    pub alerts: crate::serve::alerts::Rules,
    /// `[fleet]`: the rigs `provetop fleet` watches.
    pub fleet: Vec<crate::fleet::config::Rig>,
}

/// `[serve]`: what `provetop serve` takes when its flag is not given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServeSettings {
    /// `listen = "127.0.0.1:9820"` (as `--listen`).
    pub listen: Option<String>,
    /// `drain_timeout = 60`, seconds (as `--drain-timeout`).
    pub drain_timeout: Option<u64>,
    /// `record = "/var/lib/provetop/serve.ptrec"` (as `--record`).
    pub record: Option<PathBuf>,
    /// `srs_budget = "64GiB"` (as `--srs-budget`).
    pub srs_budget: Option<Budget>,
    /// `control_token_file = "/etc/provetop/token"` (as `--control-token-file`).
    pub control_token_file: Option<PathBuf>,
    /// `history = "10m"` (as `--history`).
    pub history: Option<std::time::Duration>,
    /// `tls_cert = "server.pem"`, `tls_key = "server.key"` (as `--tls-cert`, `--tls-key`).
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// `params_dir = "/var/tmp/filecoin-proof-parameters"`: Filecoin's parameter files (as
    /// `--params-dir`).
    pub params_dir: Option<PathBuf>,
    /// `status_listen = "127.0.0.1:9821"`: cuzk's status page (as `--status-listen`).
    pub status_listen: Option<String>,
    /// `max_queued = 256`: requests waiting at most (refused RESOURCE_EXHAUSTED beyond).
    pub max_queued: Option<u64>,
    /// `queue_memory = "16GiB"`: the bytes of the requests waiting, at most.
    pub queue_memory: Option<u64>,
    /// `sets = ["porep-32g", "wpost-32g"]`: the parameter sets `PreloadSRS` may load.
    pub sets: Option<Vec<String>>,
}

impl ServeSettings {
    fn from_table(t: &toml::Table) -> Result<ServeSettings> {
        let mut s = ServeSettings::default();
        for (key, value) in t {
            let text = || {
                value
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| anyhow::anyhow!("[serve] {key} must be a string, not {value}"))
            };
            match key.as_str() {
                "listen" => s.listen = Some(text()?),
                "record" => s.record = Some(PathBuf::from(text()?)),
                "control_token_file" => s.control_token_file = Some(PathBuf::from(text()?)),
                "tls_cert" => s.tls_cert = Some(PathBuf::from(text()?)),
                "tls_key" => s.tls_key = Some(PathBuf::from(text()?)),
                "params_dir" => s.params_dir = Some(PathBuf::from(text()?)),
                "status_listen" => s.status_listen = Some(text()?),
                "history" => {
                    let d = crate::cli::parse_duration(&text()?);
                    s.history = Some(d.map_err(|e| anyhow::anyhow!("[serve] history: {e}"))?);
                }
                "drain_timeout" => {
                    let n = value.as_integer().filter(|n| (0..=86_400).contains(n));
                    let n = n.ok_or_else(|| {
                        anyhow::anyhow!("[serve] drain_timeout is seconds, 0 to 86400, not {value}")
                    })?;
                    s.drain_timeout = Some(n as u64);
                }
                "srs_budget" => {
                    let b = match value {
                        toml::Value::Integer(n) if *n >= 0 => Ok(Budget::Bytes(*n as u64)),
                        toml::Value::String(t) => parse_budget(t),
                        _ => Err(format!(
                            "expected `auto` or a size such as 64GiB, not {value}"
                        )),
                    };
                    s.srs_budget = Some(b.map_err(|e| anyhow::anyhow!("[serve] srs_budget: {e}"))?);
                }
                "max_queued" => {
                    let n = value.as_integer().filter(|n| (1..=1_000_000).contains(n));
                    let n = n.ok_or_else(|| {
                        anyhow::anyhow!("[serve] max_queued is a count, 1 to 1000000, not {value}")
                    })?;
                    s.max_queued = Some(n as u64);
                }
                "queue_memory" => {
                    let b = match value {
                        toml::Value::Integer(n) if *n > 0 => Ok(Budget::Bytes(*n as u64)),
                        toml::Value::String(t) => parse_budget(t),
                        _ => Err(format!("expected a size such as 16GiB, not {value}")),
                    };
                    match b.map_err(|e| anyhow::anyhow!("[serve] queue_memory: {e}"))? {
                        Budget::Bytes(n) if n > 0 => s.queue_memory = Some(n),
                        _ => bail!("[serve] queue_memory is a size such as 16GiB, not {value}"),
                    }
                }
                "sets" => {
                    let ids = value.as_array().and_then(|a| {
                        a.iter()
                            .map(|v| v.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                    });
                    let ids = ids.ok_or_else(|| {
                        anyhow::anyhow!(
                            "[serve] sets is a list of circuit ids such as [\"porep-32g\"], not {value}"
                        )
                    })?;
                    for id in &ids {
                        provetop_porep::Kind::of_circuit_id(id)
                            .with_context(|| format!("[serve] sets: `{id}`"))?;
                    }
                    s.sets = Some(ids);
                }
                _ => bail!(
                    "[serve] has no key `{key}`; it takes listen, drain_timeout, record, \
                     srs_budget, control_token_file, history, tls_cert, tls_key, params_dir, \
                     status_listen, max_queued, queue_memory and sets"
                ),
            }
        }
        Ok(s)
    }
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
            serve: ServeSettings::default(),
            alerts: Default::default(),
            fleet: vec![],
        });
    };
    let text =
        provetop_telemetry::input::read_regular_text(&path, provetop_telemetry::input::SMALL_FILE)
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
    let serve = table("serve")?;
    let alerts = table("alerts")?;
    let fleet = table("fleet")?;
    if let Some(key) = doc.keys().next() {
        bail!(
            "config file {}: unknown key `{key}`; the file has [engine], [ui], [serve], [alerts] \
             and [fleet] tables",
            path.display()
        );
    }
    let serve = ServeSettings::from_table(&serve)
        .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))?;
    EngineConfig::from_toml_table(&engine)
        .map_err(|e| anyhow::anyhow!("config file {}: [engine] {e}", path.display()))?;
    let ui = UiSettings::from_table(&ui)
        .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))?;
    let alerts = crate::serve::alerts::Rules::from_table(&alerts)
        .map_err(|e| anyhow::anyhow!("config file {}: [alerts] {e}", path.display()))?;
    let fleet = crate::fleet::config::rigs(&fleet)
        .map_err(|e| anyhow::anyhow!("config file {}: [fleet] {e}", path.display()))?;
    Ok(ConfigFile {
        path: Some(path),
        engine,
        ui,
        serve,
        alerts,
        fleet,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(text: &str) -> Result<ServeSettings> {
        ServeSettings::from_table(&toml::from_str(text)?)
    }

    #[test]
    fn the_serve_table_is_read_and_checked() {
        let s = serve("listen = \"unix:///run/p.sock\"\ndrain_timeout = 5\nrecord = \"s.ptrec\"")
            .unwrap();
        assert_eq!(s.listen.as_deref(), Some("unix:///run/p.sock"));
        assert_eq!(s.drain_timeout, Some(5));
        assert_eq!(s.record, Some(PathBuf::from("s.ptrec")));
        assert_eq!(serve("").unwrap(), ServeSettings::default());
        let err = |t: &str| format!("{:#}", serve(t).unwrap_err());
        assert!(err("port = 1").contains("no key `port`"));
        assert!(err("drain_timeout = -1").contains("0 to 86400"));
        assert!(err("drain_timeout = \"60\"").contains("0 to 86400"));
        assert!(err("listen = 9820").contains("must be a string"));
        assert_eq!(
            serve("srs_budget = \"2GiB\"").unwrap().srs_budget,
            Some(Budget::Bytes(2 << 30))
        );
        assert!(err("srs_budget = \"lots\"").contains("srs_budget"));
        let s = serve("control_token_file = \"/etc/t\"\nhistory = \"90s\"\ntls_cert = \"c.pem\"")
            .unwrap();
        assert_eq!(s.control_token_file, Some(PathBuf::from("/etc/t")));
        assert_eq!(s.history, Some(std::time::Duration::from_secs(90)));
        assert_eq!(s.tls_cert, Some(PathBuf::from("c.pem")));
        assert!(err("history = \"soon\"").contains("[serve] history"));
    }
}
