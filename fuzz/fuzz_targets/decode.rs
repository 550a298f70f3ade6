//! Any bytes as a recording: opening, indexing, and reading every frame must end in records
//! or a reported error, never a panic, a hang or an allocation past the decoder's bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use provetop_telemetry::record::Recording;
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut rec) = Recording::from_reader(Cursor::new(data)) {
        let mut n = 0u64;
        let report = rec.for_each(|_| n += 1);
        assert!(report.records == n);
        let _ = report.notes();
        // Frames also decode one by one, in any order (what seeking does).
        for i in (0..rec.frames().len()).rev().take(4) {
            let _ = rec.read_frame(i);
        }
    }
});
