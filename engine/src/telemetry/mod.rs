//! Telemetry: the contract (`provetop-telemetry`: events, bus, clock, gap attribution,
//! recordings, exporters), re-exported so the engine's paths stay short, and what measures
//! the engine itself and needs the machine to do so: the byte `accounting` its executors
//! update and the `samplers` that read it, NVML, the host and the memory-bandwidth probe.

pub use provetop_telemetry::*;

pub mod accounting;
pub mod samplers;
