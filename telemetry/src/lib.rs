//! provetop-telemetry: the contract between the engine, the dashboard, the recorder and the
//! exporters. It knows nothing of curves, GPUs or the operating system, so a front end or a
//! tool over recordings builds on it alone.
//!
//! One module per concern: `advice` (the bottleneck and the knobs to change, from a report),
//! the events (`Event` and its parts) and `metrics` names, the `Bus`
//! that fans events out and the session `Clock`, `session` (what a session is about), `config`
//! and `control` (the engine's knobs and what a front end asks of it), `config_keys` (the
//! table of `[engine]` keys that the check, help, Settings rows and docs come from), `gaps`
//! (why a device was idle), `record` (recordings: writer, reader, player), `report` (the run
//! report of `bench --json` and `replay --summary`), `export` (Prometheus, Perfetto), `input`
//! (what commands read), `output` (where commands write), `text` (strings from files made safe
//! for a terminal) and `fixture` (a made-up session for tests and benchmarks).
//!
//! Where this crate sits among the others, and the data flow: docs/architecture.md.

#![warn(missing_docs)]

pub mod advice;
mod bus;
mod clock;
pub mod config;
pub mod config_keys;
pub mod control;
mod event;
pub mod export;
pub mod fixture;
pub mod gaps;
pub mod input;
pub mod metrics;
pub mod output;
pub mod record;
pub mod report;
mod session;
pub mod text;

pub use bus::{Bus, Subscription};
pub use clock::Clock;
pub use event::*;
pub use session::{serving, DeviceInfo, MachineInfo, SessionInfo, SERVING};
