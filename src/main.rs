//! provetop: the command line over the engine and the dashboard.
//!
//! Where this crate sits among the others, and the data flow: docs/architecture.md.

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod alloc;
mod attach;
mod bench;
mod bench_control;
mod bench_remote;
mod bounds;
mod check;
mod cli;
mod closed_pipe;
mod config_file;
mod cuzk;
mod dashboard;
mod devices;
mod export;
mod filecoin;
mod filecoin_check;
mod fleet;
mod gen_vanilla;
mod headless;
mod kernels;
mod logging;
mod mix;
mod params;
mod proof_file;
mod replay;
mod report_text;
mod request_file;
mod run;
mod serve;
mod token;
mod tune;
mod verify;

use std::io::IsTerminal;
use std::process::ExitCode;

use cli::Command;

fn main() -> ExitCode {
    let cli = cli::parse();
    if let Err(e) = bounds::command(&cli) {
        eprintln!("provetop: error: {e:#}");
        return ExitCode::from(2);
    }
    closed_pipe::end_quietly(&cli);
    let tty = std::io::stdout().is_terminal();
    let interactive = match &cli.command {
        None => !cli.headless && tty,
        Some(Command::Replay(r)) => replay::interactive(r) && tty,
        Some(Command::Attach(a)) => attach::interactive(a) && tty,
        Some(Command::Fleet(a)) => a.print.is_none() && a.simulate.is_none() && tty,
        Some(_) => false,
    };
    let _guard = logging::init(!interactive);
    provetop_engine::backend::cuda::register(
        kernels::embedded()
            .map(|(fatbin, archs)| provetop_engine::backend::cuda::Kernels { fatbin, archs })
            .map_err(String::from),
    );
    let result = match &cli.command {
        Some(Command::Bench(args)) => bench::main(args),
        Some(Command::Serve(args)) => serve::main(args),
        Some(Command::GenVanilla(args)) => gen_vanilla::main(args),
        Some(Command::Verify(args)) => verify::main(args),
        Some(Command::Devices) => devices::main(),
        Some(Command::Check { max_log2 }) => check::main(*max_log2),
        Some(Command::Replay(args)) => replay::main(args, interactive, args.theme.as_deref()),
        Some(Command::Attach(args)) => {
            attach::main(args, interactive, args.theme.as_deref(), false)
        }
        Some(Command::Fleet(args)) => fleet::main(args, interactive),
        Some(Command::Export(args)) => export::main(args),
        Some(Command::Tune(args)) => tune::main(args),
        None if interactive => dashboard::main(&cli),
        None => headless::main(&cli.engine_args(), None),
    };
    // A generated set still being written to the cache is finished, not cut short.
    provetop_engine::params::cache::finish_writes();
    match result {
        Ok(code) => ExitCode::from(code as u8),
        // A reader that stopped early (`| head`) is not an error of ours.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("provetop: error: {e:#}");
            let usage = e.downcast_ref::<run::UsageError>().is_some();
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let kind = c
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| c.downcast_ref::<serde_json::Error>()?.io_error_kind());
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}
