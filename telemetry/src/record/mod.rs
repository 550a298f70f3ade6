//! Recordings: a session's telemetry in a file, written while proofs run and replayed later,
//! anywhere. The recorder is one more bus subscriber; the engine never waits for it.
//!
//! # Format (version 1)
//!
//! All integers little-endian. A file header, then frames, then (on a clean stop) a trailer.
//!
//! ```text
//! file header   magic "PROVETOP-REC\r\n\x1a\n" (16) · version u16 · flags u16 · json_len u32
//!               (≤ 1 MiB) · crc32 u32 (of version..json_len and the JSON) · JSON {session, t0, writer}
//! frame         magic "PTRF" · kind u8 (1 events, 2 end) · codec u8 (0 stored, 1 zstd) · 0u16 ·
//!               stored_len u32 (≤ 4 MiB + 64 KiB) · raw_len u32 (≤ 4 MiB) · records u32 (≤ 65536) ·
//!               t_first u64 · t_last u64 · payload crc32 · header crc32 (of the 40 bytes before it) ·
//!               payload
//! trailer       "PTRX" · crc32 of "PTRX" and the offset · offset u64 of the end frame
//! ```
//!
//! Every frame stands alone: its records' strings are interned per frame and times are deltas
//! from within the frame, so a damaged frame costs only its own records, and any frame decodes
//! without the ones before it (seeking). A damaged header is found by its checksum and the
//! reader resynchronises on the next frame magic whose header checks out. The end frame holds
//! the recorder's counts and an index of every events frame, so a cleanly closed file opens
//! without a scan; a file whose writer was killed is indexed by reading frame headers only.
//!
//! Decoding never trusts a length without a bound: the JSON header, stored and raw payloads,
//! records per frame, strings, the string table and the bytes of strings a frame may expand to
//! are all capped, so the memory a decoder uses is bounded whatever a file claims.

mod codec;
mod frame;
pub mod hostile;
mod player;
mod reader;
pub mod stream;
mod writer;

pub use frame::{Header, VERSION};
pub use player::{Player, Seek};
pub use reader::{Damage, FrameInfo, OpenError, ReadReport, Recording, Stop, DEFAULT_MAX_MEMORY};
pub use writer::{
    PendingRecorder, Recorder, RecorderOptions, RecorderStatus, RecorderSummary, Writer,
};

use serde::Serialize;

use crate::{Event, Nanos};

/// What a recording holds: the events of the bus, the holes where it lost some, and the
/// window a run reported over.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// An event as the bus carried it.
    Event(Event),
    /// Events lost between two times.
    Hole(Hole),
    /// The window a run reported on (a bench: from its first submission to its last result),
    /// so a summary of the recording measures busy time over the same window as the run did.
    Run {
        /// The window's start (nanoseconds since session start).
        start: Nanos,
        /// The window's end (nanoseconds since session start).
        end: Nanos,
    },
}

impl Record {
    /// The session time the record belongs to (the end of a span, of a hole, of a run).
    pub fn time(&self) -> Nanos {
        match self {
            Record::Event(e) => e.time(),
            Record::Hole(h) => h.to,
            Record::Run { end, .. } => *end,
        }
    }
}

/// Events that are not in the file: dropped by the recorder because the disk fell behind
/// (samples first, spans only after that, anything else only when its memory budget is gone),
/// or by the bus because the recorder fell behind it (`other`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Hole {
    /// The earliest time the lost events cover (nanoseconds since session start).
    pub from: Nanos,
    /// The latest time the lost events cover (nanoseconds since session start).
    pub to: Nanos,
    /// Samples lost.
    pub samples: u64,
    /// Spans lost.
    pub spans: u64,
    /// Other events lost, and events the bus dropped before the recorder saw them.
    pub other: u64,
}

impl Hole {
    /// Counts come from a file, so they saturate instead of wrapping.
    pub fn total(&self) -> u64 {
        self.samples
            .saturating_add(self.spans)
            .saturating_add(self.other)
    }

    /// Adds `other`'s counts to these (saturating).
    pub fn add_counts(&mut self, other: &Hole) {
        self.samples = self.samples.saturating_add(other.samples);
        self.spans = self.spans.saturating_add(other.spans);
        self.other = self.other.saturating_add(other.other);
    }

    /// `1,234 samples, 5 spans` (the kinds that were lost).
    pub fn describe(&self) -> String {
        let mut parts = vec![];
        for (n, what) in [
            (self.samples, "samples"),
            (self.spans, "spans"),
            (self.other, "other events"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        if parts.is_empty() {
            "nothing".into()
        } else {
            parts.join(", ")
        }
    }
}

/// `provetop-20250101-120000.ptrec`: a default name for a recording started at `unix` seconds
/// (UTC).
pub fn default_file_name(unix: f64) -> String {
    let (year, month, day, h, m, s) = civil_utc(unix);
    format!("provetop-{year:04}{month:02}{day:02}-{h:02}{m:02}{s:02}.ptrec")
}

/// (year, month, day, hour, minute, second) in UTC of `unix` seconds (whole seconds).
pub fn civil_utc(unix: f64) -> (i64, i64, i64, i64, i64, i64) {
    let secs = unix.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, rem / 3600, rem / 60 % 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn hole_counts_saturate() {
        let mut h = super::Hole {
            samples: u64::MAX - 1,
            spans: 3,
            ..Default::default()
        };
        assert_eq!(h.total(), u64::MAX);
        h.add_counts(&h.clone());
        assert_eq!((h.samples, h.spans), (u64::MAX, 6));
    }

    #[test]
    fn default_names_are_utc_dates() {
        assert_eq!(
            super::default_file_name(0.0),
            "provetop-19700101-000000.ptrec"
        );
        assert_eq!(
            super::default_file_name(1_709_251_199.5),
            "provetop-20240229-235959.ptrec"
        );
    }
}
