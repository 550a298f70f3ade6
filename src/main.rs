//! provetop: the command line over the engine and the dashboard.

mod bench;
mod cli;
mod config_file;
mod headless;
mod logging;
mod run;

use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let interactive = cli.command.is_none() && !cli.headless && std::io::stdout().is_terminal();
    let _guard = logging::init(!interactive);
    let result = match &cli.command {
        Some(Command::Bench(args)) => bench::main(args),
        Some(Command::Devices) => devices(),
        None if interactive => headless::main(
            &cli.engine,
            Some("provetop: the dashboard is coming; proving headless meanwhile"),
        ),
        None => headless::main(&cli.engine, None),
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("provetop: error: {e:#}");
            let usage = e.downcast_ref::<run::UsageError>().is_some();
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

fn devices() -> anyhow::Result<i32> {
    println!("backends: cpu (always), cuda (not built in)");
    println!("auto picks: cpu");
    Ok(0)
}
