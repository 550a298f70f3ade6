//! Each command's help lists the flags it takes and no other; a flag it does not take is
//! refused (exit 2); the engine flags' help is the table's.

use super::*;
use clap::CommandFactory;
use std::collections::BTreeSet;

/// A command's long flags, less hidden ones (a measuring mode help leaves out).
fn longs(cmd: &clap::Command) -> BTreeSet<String> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long())
        .filter(|l| *l != "help" && *l != "version")
        .map(|l| format!("--{l}"))
        .collect()
}

fn help(cmd: &mut clap::Command) -> String {
    cmd.render_long_help().to_string()
}

/// Whether `help` lists `flag` (as `--flag <…>` or `--flag` at a line's start).
fn lists(help: &str, flag: &str) -> bool {
    help.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with(&format!("{flag} ")) || l == flag || l.starts_with(&format!("{flag}\t"))
    })
}

#[test]
fn each_subcommands_help_omits_foreign_flags_and_refuses_them() {
    let mut cli = Cli::command();
    cli.build();
    let mut all: BTreeSet<String> = longs(&cli);
    for sub in cli.get_subcommands() {
        all.extend(longs(sub));
    }
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let sub = cli.find_subcommand_mut(&name).unwrap();
        let own = longs(sub);
        let text = help(sub);
        for flag in &all {
            assert_eq!(
                lists(&text, flag),
                own.contains(flag),
                "{name} {flag}:\n{text}"
            );
            if own.contains(flag) {
                continue;
            }
            // After the subcommand, a flag it does not take is refused.
            let e = position::parse_from(["provetop", name.as_str(), flag.as_str()]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{name} {flag}: {e}");
        }
    }
}

#[test]
fn serve_lists_only_what_serve_uses() {
    let mut cli = Cli::command();
    let serve = cli.find_subcommand_mut("serve").unwrap();
    let text = help(serve);
    for foreign in [
        "--proofs",
        "--concurrency",
        "--c1",
        "--request",
        "--at",
        "--prover-id",
        "--sector-id",
        "--theme",
        "--headless",
        "--json",
        "--export-dir",
        "--mix",
        "--budget",
    ] {
        assert!(!lists(&text, foreign), "serve lists {foreign}:\n{text}");
    }
    // Its own workload is what viewers' jobs prove, and says so.
    let viewers = text.find("Jobs viewers submit").expect(&text);
    for own in [
        "--workload",
        "--log2-constraints",
        "--blocks",
        "--sector-size",
        "--partitions",
    ] {
        let at = text.find(&format!("{own} ")).expect(own);
        assert!(
            at > viewers,
            "{own} under the viewers' jobs heading:\n{text}"
        );
    }
    for own in ["--listen", "--in-flight", "--lock", "--record", "--config"] {
        assert!(lists(&text, own), "serve lacks {own}");
    }
}

#[test]
fn theme_only_where_a_dashboard_is_drawn() {
    let mut cli = Cli::command();
    assert!(lists(&help(&mut cli), "--theme"));
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let text = help(cli.find_subcommand_mut(&name).unwrap());
        let dashboard = matches!(name.as_str(), "replay" | "attach" | "fleet");
        assert_eq!(lists(&text, "--theme"), dashboard, "{name}");
    }
}

#[test]
fn engine_flag_help_is_the_tables() {
    let mut cli = Cli::command();
    for name in ["", "bench", "serve", "tune"] {
        let cmd = match name {
            "" => &mut cli,
            n => cli.find_subcommand_mut(n).unwrap(),
        };
        let text = help(cmd);
        let line = text
            .split("--synthesis-workers")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap_or_else(|| panic!("{name}: no --synthesis-workers"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            line.contains("[default: auto: half the cores"),
            "{name}: {line}"
        );
        assert!(!line.contains("[default: 2]"), "{name}: {line}");
        for s in &provetop_telemetry::config::ENGINE_KEYS {
            assert!(
                lists(&text, &format!("--{}", s.flag())),
                "{name}: {}",
                s.name
            );
        }
    }
}
