//! Any bytes through the c1 parser (see harness.rs): a value or an error, never a panic.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::c1(data));
