//! The session clock: every event's time is nanoseconds since the session started.

use std::time::Instant;

use crate::Nanos;

/// Nanoseconds since the session started, on one monotonic clock.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        Clock {
            start: Instant::now(),
        }
    }

    /// Nanoseconds from the clock's zero to now.
    pub fn now(&self) -> Nanos {
        self.at(Instant::now())
    }

    /// Nanoseconds from the clock's zero to `t`; 0 for an instant before it.
    pub fn at(&self, t: Instant) -> Nanos {
        t.saturating_duration_since(self.start).as_nanos() as Nanos
    }

    /// The instant of the clock's zero.
    pub fn origin(&self) -> Instant {
        self.start
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::start()
    }
}
