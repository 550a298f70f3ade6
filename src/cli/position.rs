//! Where a flag may stand. One rule: a flag given before a subcommand is the subcommand's own
//! when the subcommand takes it (`provetop --lock none bench` is `provetop bench --lock none`),
//! and is refused, exit 2, naming the subcommand, when it does not (`provetop --lock none
//! replay FILE`: replay runs no engine). Nothing given is dropped.

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, Command, CommandFactory, FromArgMatches};
use std::collections::BTreeSet;
use std::ffi::OsString;

use super::Cli;

/// The command line of this process; a bad one prints why and exits 2 (help and version 0).
pub fn parse() -> Cli {
    parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// Parses `argv` (the program's name first) under the rule above.
pub fn parse_from<I, T>(argv: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let (mut cmd, m) = matches_from(argv.into_iter().map(Into::into).collect())?;
    Cli::from_arg_matches(&m).map_err(|e| e.format(&mut cmd))
}

/// The matches of `argv` with the flags before its subcommand moved after it, or why not.
fn matches_from(argv: Vec<OsString>) -> Result<(Command, ArgMatches), clap::Error> {
    let argv = moved(argv)?;
    let mut cmd = Cli::command();
    let m = cmd.try_get_matches_from_mut(argv)?;
    Ok((cmd, m))
}

/// `argv` with the flags before its subcommand moved after the subcommand's name, or the
/// refusal of one it does not take. The first look forgives errors (a required flag of the
/// subcommand may be among those before it); the parse of what this returns does not.
fn moved(argv: Vec<OsString>) -> Result<Vec<OsString>, clap::Error> {
    let mut cmd = Cli::command().ignore_errors(true);
    let m = cmd.try_get_matches_from_mut(argv.iter())?;
    let Some(name) = m.subcommand_name().map(str::to_string) else {
        return Ok(argv);
    };
    let before: Vec<(String, String)> = cmd
        .get_arguments()
        .filter(|a| m.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .map(|a| (a.get_id().to_string(), shown(a)))
        .collect();
    let Some(sub) = cmd.find_subcommand(&name).filter(|_| !before.is_empty()) else {
        return Ok(argv);
    };
    let takes: BTreeSet<String> = sub
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    let refuse = |msg: String| Err(Cli::command().error(ErrorKind::ArgumentConflict, msg));
    if let Some((_, flag)) = before.iter().find(|(id, _)| !takes.contains(id)) {
        return refuse(format!(
            "{flag} is given before `{name}`, which does not take it: `provetop {name} --help` \
             lists what it takes (flags before a subcommand are the subcommand's own)"
        ));
    }
    // Every token between the program's name and the subcommand's is a flag before it.
    let values: BTreeSet<usize> = before
        .iter()
        .filter_map(|(id, _)| m.indices_of(id))
        .flatten()
        .collect();
    let at = (1..argv.len()).find(|i| !values.contains(i) && argv[*i] == *name.as_str());
    let Some(at) = at else {
        return refuse(format!(
            "cannot tell where `{name}` begins: give its flags after it"
        ));
    };
    let mut out = vec![argv[0].clone(), argv[at].clone()];
    out.extend(argv[1..at].iter().cloned());
    out.extend(argv[at + 1..].iter().cloned());
    Ok(out)
}

/// An argument as a user writes it: `--lock`.
fn shown(a: &clap::Arg) -> String {
    match a.get_long() {
        Some(l) => format!("--{l}"),
        None => a.get_id().to_string(),
    }
}

#[cfg(test)]
mod tests;
