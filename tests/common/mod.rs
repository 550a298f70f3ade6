//! What the binary's integration tests share.

use std::path::Path;
use std::process::{Command, Output};

/// Runs provetop with its cache, state and config under `home`, and waits for it.
pub fn provetop(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_provetop"))
        .args(args)
        .env("XDG_CACHE_HOME", home)
        .env("XDG_STATE_HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .output()
        .expect("running provetop")
}
