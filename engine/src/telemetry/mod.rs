//! Telemetry: the events every stage emits, one clock, and the bus that fans them out to the
//! dashboard, the recorder and the exporters.

pub mod accounting;
mod bus;
mod event;
pub mod gaps;
pub mod metrics;
pub mod prometheus;
pub mod record;
pub mod samplers;
mod session;

pub use bus::{Bus, Subscription};
pub use event::*;
pub use session::{DeviceInfo, MachineInfo, SessionInfo};

use std::time::Instant;

/// Nanoseconds since the session started, on one monotonic clock.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn start() -> Self {
        Clock {
            start: Instant::now(),
        }
    }

    pub fn now(&self) -> Nanos {
        self.at(Instant::now())
    }

    pub fn at(&self, t: Instant) -> Nanos {
        t.saturating_duration_since(self.start).as_nanos() as Nanos
    }

    pub fn origin(&self) -> Instant {
        self.start
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::start()
    }
}
