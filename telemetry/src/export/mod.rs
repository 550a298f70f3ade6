//! Exporters: the event stream in other tools' formats. `prometheus` serves a live session's
//! counters over HTTP; `perfetto` writes a recording as a trace Perfetto opens (JSON), and
//! `pftrace` as Perfetto's native protobuf trace.

pub mod perfetto;
pub mod pftrace;
pub mod prometheus;
mod protobuf;
