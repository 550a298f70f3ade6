use super::*;
use crate::config::EngineConfig;

/// docs/configuration.md, from this crate.
const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/configuration.md");
const BEGIN: &str = "<!-- BEGIN engine keys:";
const END: &str = "<!-- END engine keys -->";
/// Set to rewrite the doc's table from the table here instead of comparing.
const WRITE_ENV: &str = "PROVETOP_WRITE_DOCS";

#[test]
fn the_defaults_are_the_engine_configs() {
    let cfg = EngineConfig::default();
    for s in &ENGINE_KEYS {
        let got = cfg.get(s.name).unwrap();
        let got = if got.is_empty() { "all".into() } else { got };
        assert_eq!(got, s.default, "{}: the table's default", s.name);
        assert_eq!(s.auto.is_some(), cfg.is_auto(s.name), "{}: auto", s.name);
        assert!(s.auto.is_none() || s.default == "auto", "{}", s.name);
    }
    assert_eq!(AUTO_KEYS.len(), cfg.auto.len());
}

#[test]
fn the_check_is_the_tables() {
    for s in &ENGINE_KEYS {
        let mut cfg = EngineConfig::default();
        match s.check {
            Check::Count(lo, hi) => {
                for bad in [lo - 1, hi + 1] {
                    let e = cfg.set(s.name, &bad.to_string()).unwrap_err();
                    assert!(e.message.contains(&format!("{lo} to {hi}")), "{e}");
                }
                for good in [lo, hi] {
                    cfg.set(s.name, &good.to_string()).unwrap();
                    assert_eq!(cfg.get(s.name).unwrap(), good.to_string());
                }
            }
            Check::Choice(opts) => {
                for o in opts {
                    cfg.set(s.name, o).unwrap();
                    assert_eq!(cfg.get(s.name).unwrap(), *o, "{}", s.name);
                }
                let e = cfg.set(s.name, "sideways").unwrap_err();
                assert!(e.message.contains(&opts.join(", ")), "{e}");
            }
            Check::Bool => {
                for b in ["true", "false"] {
                    cfg.set(s.name, b).unwrap();
                    assert_eq!(cfg.get(s.name).unwrap(), b);
                }
                assert!(cfg.set(s.name, "yes").is_err());
            }
            Check::Budget => {
                cfg.set(s.name, "2GiB").unwrap();
                assert_eq!(cfg.get(s.name).unwrap(), (2u64 << 30).to_string());
                assert!(cfg.set(s.name, "lots").is_err());
            }
            Check::Devices => {
                cfg.set(s.name, "0,2").unwrap();
                assert_eq!(cfg.get(s.name).unwrap(), "0,2");
                assert!(cfg.set(s.name, "first").is_err());
            }
        }
        assert_eq!(
            cfg.set(s.name, "auto").is_ok(),
            s.auto.is_some() || s.values().contains("auto"),
            "{}: auto",
            s.name
        );
        assert_eq!(EngineConfig::liveness(s.name), Some(s.live));
    }
    assert_eq!(EngineConfig::liveness("colour"), None);
}

#[test]
fn the_flag_help_says_what_the_engine_does() {
    let s = spec("synthesis_workers").unwrap();
    let help = s.flag_help();
    assert!(help.contains("[default: auto: half the cores"), "{help}");
    assert!(!help.contains("[default: 2]"), "{help}");
    assert_eq!(s.placeholder(), "N|auto");
    assert_eq!(spec("lock").unwrap().placeholder(), "single|two-lock|none");
    assert!(spec("backend")
        .unwrap()
        .flag_help()
        .contains("at start only"));
    assert_eq!(
        spec("gpu_workers_per_device").unwrap().flag(),
        "gpu-workers-per-device"
    );
}

/// docs/configuration.md's table is this table: regenerate it with
/// `PROVETOP_WRITE_DOCS=1 cargo test -p provetop-telemetry config_keys`.
#[test]
fn docs_configuration_md_has_the_tables_keys() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let begin = doc.find(BEGIN).expect("the doc's BEGIN marker");
    // The table starts on the line after the BEGIN comment's end.
    let comment_end = begin + doc[begin..].find("-->").expect("the BEGIN comment's end");
    let after_begin = comment_end + doc[comment_end..].find('\n').expect("a line after it") + 1;
    let end = doc.find(END).expect("the doc's END marker");
    assert!(after_begin <= end, "BEGIN before END");
    let want = markdown_table();
    if std::env::var_os(WRITE_ENV).is_some() {
        let new = format!("{}{want}{}", &doc[..after_begin], &doc[end..]);
        std::fs::write(DOC, new).unwrap();
        return;
    }
    assert!(
        doc[after_begin..end] == want,
        "docs/configuration.md's table differs from telemetry/src/config_keys.rs; \
         rewrite it with {WRITE_ENV}=1 cargo test -p provetop-telemetry config_keys\n\
         doc:\n{}\ntable:\n{want}",
        &doc[after_begin..end]
    );
    for s in &ENGINE_KEYS {
        assert!(doc.contains(&format!("| `{}` |", s.name)), "{}", s.name);
    }
}
