//! A reader that stops early (`provetop bench | head -2`) ends the command quietly: Rust ignores
//! SIGPIPE, so a print to the closed pipe would panic. Commands that only print take the
//! default action back (the process ends as `head`'s writers do); the daemon and the
//! network clients keep ignoring it, since a unix socket's peer closing raises it too, and
//! handle the error where they write.

use crate::cli::{Cli, Command};

/// Whether `cli`'s command writes to sockets (and so must not die of SIGPIPE).
fn uses_sockets(cli: &Cli) -> bool {
    match &cli.command {
        Some(Command::Serve(_) | Command::Attach(_)) => true,
        Some(Command::Bench(b)) => b.server.is_some(),
        // TCP (the metrics endpoint) sends with MSG_NOSIGNAL: no SIGPIPE from it.
        _ => false,
    }
}

/// Restores SIGPIPE's default action for the commands that only print.
pub fn end_quietly(cli: &Cli) {
    if !uses_sockets(cli) {
        // SAFETY: setting a signal's disposition to the default, before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
}
