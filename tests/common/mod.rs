//! What the binary's integration tests share.
// Each test binary compiles this module and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
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

/// The cache the PoRep tests share (its sealed 2KiB sector, parameters and recorded circuit),
/// with porep/tests/precompiled.rs: CI seals and sets up once.
pub fn porep_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("porep-2kib-cache")
}

/// `provetop`, with the cache in `cache` and the state and config under `home`.
pub fn provetop_cached(home: &Path, cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_provetop"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .env("XDG_STATE_HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .output()
        .expect("running provetop")
}
