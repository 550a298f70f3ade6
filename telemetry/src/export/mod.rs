//! Exporters: the event stream in other tools' formats. `prometheus` serves a live session's
//! counters over HTTP; `perfetto` writes a recording as a trace Perfetto opens.

pub mod perfetto;
pub mod prometheus;
