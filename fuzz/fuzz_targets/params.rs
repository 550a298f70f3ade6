//! Any bytes through the params parser (see harness.rs): a value or an error, never a panic.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::params(data));
