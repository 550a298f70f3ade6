//! The session clock: every event's time is nanoseconds since the session started.

use std::time::Instant;

use crate::Nanos;

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
