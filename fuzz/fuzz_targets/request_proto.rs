//! Any bytes through the protobuf SubmitProofRequest decoder (see harness.rs): a value that round-trips, or an error,
//! never a panic.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::request_proto(data));
