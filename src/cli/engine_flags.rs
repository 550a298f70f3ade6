//! The `[engine]` keys as flags, made from the table in `provetop_telemetry::config_keys`: one
//! flag per key (`--gpu-workers-per-device`), its help, values, default and when a change takes
//! effect from the table, its value checked as the config file's is.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use provetop_telemetry::config::{EngineConfig, KeySpec, ENGINE_KEYS};
use std::sync::OnceLock;

/// Where the engine flags are listed in `--help`.
pub const HEADING: &str =
    "Engine settings (the config file's [engine] keys: docs/configuration.md)";

/// The `[engine]` keys given as flags, as (key, value), in the table's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineFlags {
    pub given: Vec<(&'static str, String)>,
}

/// A flag's value, checked as `EngineConfig::set` checks the key (so a bad value is refused,
/// exit 2, before anything starts).
fn checked(spec: &'static KeySpec, v: &str) -> Result<String, String> {
    EngineConfig::default()
        .set(spec.name, v)
        .map(|()| v.to_string())
        .map_err(|e| e.message)
}

/// Each key's flag and value placeholder, made once: clap takes names as `&'static str`.
fn names() -> &'static [(String, String)] {
    static NAMES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        ENGINE_KEYS
            .iter()
            .map(|s| (s.flag(), s.placeholder()))
            .collect()
    })
}

fn flag(spec: &'static KeySpec, (long, value): &'static (String, String)) -> Arg {
    Arg::new(spec.name)
        .long(long.as_str())
        .value_name(value.as_str())
        .help(spec.flag_help())
        .help_heading(HEADING)
        .action(ArgAction::Set)
        .value_parser(move |v: &str| checked(spec, v))
}

impl Args for EngineFlags {
    fn augment_args(cmd: Command) -> Command {
        ENGINE_KEYS
            .iter()
            .zip(names())
            .fold(cmd, |cmd, (spec, names)| cmd.arg(flag(spec, names)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for EngineFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = ENGINE_KEYS
            .iter()
            .filter_map(|s| Some((s.name, m.get_one::<String>(s.name)?.clone())))
            .collect();
        Ok(EngineFlags { given })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        let new = Self::from_arg_matches(m)?;
        for (k, v) in new.given {
            match self.given.iter_mut().find(|(key, _)| *key == k) {
                Some(slot) => slot.1 = v,
                None => self.given.push((k, v)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct T {
        #[command(flatten)]
        engine: EngineFlags,
    }

    #[test]
    fn every_key_is_a_flag_checked_as_the_config_is() {
        let t =
            T::try_parse_from(["t", "--lock", "two-lock", "--synthesis-workers", "auto"]).unwrap();
        assert_eq!(
            t.engine.given,
            [
                ("lock", "two-lock".to_string()),
                ("synthesis_workers", "auto".to_string())
            ]
        );
        let e = T::try_parse_from(["t", "--gpu-workers-per-device", "17"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("1 to 16"), "{e}");
        let help = T::command_for_help();
        for s in &ENGINE_KEYS {
            assert!(help.contains(&format!("--{}", s.flag())), "{}", s.name);
        }
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("[default: auto: half the cores"), "{help}");
    }

    impl T {
        fn command_for_help() -> String {
            use clap::CommandFactory;
            T::command().render_long_help().to_string()
        }
    }
}
