use super::*;
use clap::Arg;
use provetop_telemetry::config::spec;

use crate::cli::Command as Sub;

fn argv(args: &[&str]) -> Vec<OsString> {
    std::iter::once("provetop")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect()
}

/// A value the flag takes, as a user would give it (none for a switch).
fn sample(a: &Arg) -> Option<String> {
    if !a.get_action().takes_values() {
        return None;
    }
    let id = a.get_id().as_str();
    if let Some(s) = spec(id) {
        return Some(s.default.to_string());
    }
    if let Some(v) = a.get_possible_values().first() {
        return Some(v.get_name().to_string());
    }
    let v = match id {
        "log2_constraints" => "10",
        "blocks" | "proofs" | "partitions" | "seed" | "sector_id" => "2",
        "concurrency" => "3",
        "sector_size" => "2KiB",
        "prover_id" => "f01000",
        "at" => "5s:lock=none",
        "metrics_addr" => "9464",
        "theme" => "light",
        "record" => "r.ptrec",
        _ => "some.file",
    };
    Some(v.to_string())
}

/// The tokens of giving `a` (with the --record that --force needs).
fn tokens(a: &Arg) -> Vec<String> {
    let mut t = vec![format!("--{}", a.get_long().unwrap_or_default())];
    t.extend(sample(a));
    if a.get_id() == "force" {
        t.extend(["--record".to_string(), "r.ptrec".to_string()]);
    }
    t
}

/// What each subcommand needs besides the flag under test: (flag id, tokens).
fn needs(name: &str) -> Vec<(&'static str, Vec<&'static str>)> {
    match name {
        "replay" => vec![("file", vec!["r.ptrec"])],
        "attach" => vec![("addr", vec!["127.0.0.1:1"])],
        "export" => vec![
            ("file", vec!["r.ptrec"]),
            ("perfetto", vec!["--perfetto", "o.json"]),
        ],
        "verify" => vec![
            ("request", vec!["--request", "q.json"]),
            ("proof", vec!["--proof", "p.bin"]),
        ],
        "gen-vanilla" => vec![("out", vec!["--out", "q.json"])],
        _ => vec![],
    }
}

/// Every flag of the main command before every subcommand: the subcommand's own when it
/// takes it, else refused with exit 2 naming the subcommand. Commands that run no engine
/// take no `[engine]` key.
#[test]
fn a_flag_before_a_subcommand_is_its_own_or_refused() {
    let cli = Cli::command();
    let top: Vec<&Arg> = cli
        .get_arguments()
        .filter(|a| a.get_long().is_some_and(|l| l != "help" && l != "version"))
        .collect();
    assert!(top.len() > 30, "{} flags", top.len());
    let mut accepted = 0;
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        let takes: BTreeSet<&str> = sub.get_arguments().map(|a| a.get_id().as_str()).collect();
        for a in &top {
            let id = a.get_id().as_str();
            let mut args: Vec<String> = tokens(a);
            args.push(name.to_string());
            for (need, t) in needs(name) {
                if need != id {
                    args.extend(t.iter().map(|s| s.to_string()));
                }
            }
            // verify's --params-cache is the cache of --test-params' keys: it comes with it.
            if name == "verify" && id == "params_cache" {
                args.push("--test-params".to_string());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let got = matches_from(argv(&args));
            let at = format!("{args:?}");
            // --force comes with --record, which the subcommand must take too.
            let companion = id != "force" || takes.contains("record");
            if takes.contains(id) && companion {
                let (_, m) = got.unwrap_or_else(|e| panic!("{at}: {e}"));
                let (sub_name, sm) = m.subcommand().unwrap();
                assert_eq!(sub_name, name, "{at}");
                assert_eq!(sm.value_source(id), Some(ValueSource::CommandLine), "{at}");
                assert_ne!(
                    m.value_source(id),
                    Some(ValueSource::CommandLine),
                    "{at}: left before"
                );
                accepted += 1;
            } else {
                let e = got.err().unwrap_or_else(|| panic!("{at}: accepted"));
                assert_eq!(e.exit_code(), 2, "{at}");
                let text = e.to_string();
                assert!(text.contains(&format!("before `{name}`")), "{at}: {text}");
                let refused = if companion {
                    shown(a)
                } else {
                    "--record".into()
                };
                assert!(text.contains(&refused), "{at}: {text}");
            }
        }
        let runs_engine = matches!(name, "bench" | "serve" | "tune");
        assert_eq!(takes.contains("lock"), runs_engine, "{name}");
    }
    assert!(accepted > 50, "{accepted} flags applied to a subcommand");
}

#[test]
fn engine_flags_before_bench_are_benchs() {
    let cli = parse_from(argv(&[
        "--config",
        "bad.toml",
        "--lock",
        "none",
        "--record",
        "r.ptrec",
        "--at",
        "p1:lock=single",
        "bench",
        "--proofs",
        "1",
        "--at",
        "p2:lock=two-lock",
    ]))
    .unwrap();
    let Some(Sub::Bench(b)) = cli.command else {
        panic!("bench")
    };
    let e = b.engine_args();
    assert_eq!(e.config.as_deref(), Some(std::path::Path::new("bad.toml")));
    assert_eq!(e.record.as_deref(), Some(std::path::Path::new("r.ptrec")));
    assert_eq!(e.config_overrides(), [("lock", "none".to_string())]);
    assert_eq!((e.proofs, e.at.len()), (Some(1), 2));
    // Given on both sides: as if given twice after it.
    let err = parse_from(argv(&["--lock", "none", "bench", "--lock", "single"])).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    // A subcommand's name as a flag's value is a value.
    let cli = parse_from(argv(&["--config", "bench", "bench"])).unwrap();
    let Some(Sub::Bench(b)) = cli.command else {
        panic!("bench")
    };
    assert_eq!(
        b.run.session.config.as_deref(),
        Some(std::path::Path::new("bench"))
    );
}

#[test]
fn refusals_name_the_subcommand() {
    for (args, needle) in [
        (
            &["--lock", "none", "replay", "r.ptrec"][..],
            "--lock is given before `replay`",
        ),
        (
            &["--proofs", "5", "serve"][..],
            "--proofs is given before `serve`",
        ),
        (
            &["--headless", "devices"][..],
            "--headless is given before `devices`",
        ),
        (
            &["--proofs", "5", "tune"][..],
            "--proofs is given before `tune`",
        ),
    ] {
        let e = parse_from(argv(args)).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{args:?}");
        assert!(e.to_string().contains(needle), "{args:?}: {e}");
    }
    // --theme where a dashboard is drawn, before or after.
    let cli = parse_from(argv(&["--theme", "light", "replay", "r.ptrec"])).unwrap();
    let Some(Sub::Replay(r)) = cli.command else {
        panic!("replay")
    };
    assert_eq!(r.theme.as_deref(), Some("light"));
}

#[test]
fn without_a_subcommand_the_flags_are_the_dashboards() {
    let cli = parse_from(argv(&["--lock", "two-lock", "--proofs", "4", "--headless"])).unwrap();
    assert!(cli.command.is_none() && cli.headless);
    let e = cli.engine_args();
    assert_eq!((e.proofs, e.config_overrides().len()), (Some(4), 1));
}
