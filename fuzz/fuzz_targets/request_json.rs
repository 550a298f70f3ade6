//! Any bytes through the request file parser (proto3 JSON) (see harness.rs): a value that round-trips, or an error,
//! never a panic.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::request_json(data));
