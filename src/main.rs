//! provetop: the command line over the engine and the dashboard.

mod bench;
mod check;
mod cli;
mod config_file;
mod dashboard;
mod devices;
mod headless;
mod kernels;
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
    provetop_engine::backend::cuda::register(
        kernels::embedded()
            .map(|(fatbin, archs)| provetop_engine::backend::cuda::Kernels { fatbin, archs })
            .map_err(String::from),
    );
    let result = match &cli.command {
        Some(Command::Bench(args)) => bench::main(args),
        Some(Command::Devices) => devices::main(),
        Some(Command::Check { max_log2 }) => check::main(*max_log2),
        None if interactive => dashboard::main(&cli),
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
