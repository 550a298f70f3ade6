//! Any bytes as a recording (see harness.rs): opening, indexing, and reading every frame must
//! end in records or a reported error, never a panic, a hang or an allocation past the
//! decoder's bounds.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::recording(data));
