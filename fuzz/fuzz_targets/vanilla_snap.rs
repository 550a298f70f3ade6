//! Any bytes through the SnapDeals vanilla-proof decoder and its shape checks (see
//! harness.rs): a count or an error, never a panic.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::vanilla_snap(data));
