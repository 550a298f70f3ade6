//! Log lines about clients' refused actions, rate-limited: a client that repeats a refused
//! action in a loop gets a few lines a window into the log, then one saying how many were left
//! out, instead of a line each (1.2 MB/s from one loop before).

use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// Lines logged a window, at most.
const PER_WINDOW: u32 = 10;
/// The window.
const WINDOW: Duration = Duration::from_secs(10);

/// The refusals of the whole server (every viewer and connection shares it).
pub static REFUSALS: Limiter = Limiter::new(PER_WINDOW, WINDOW);

/// A window's count of lines logged, and the lines left out since the last one logged.
pub struct Limiter {
    state: Mutex<State>,
    per_window: u32,
    window: Duration,
}

struct State {
    start: Option<Instant>,
    logged: u32,
    left_out: u64,
}

impl Limiter {
    /// A limiter of `per_window` lines each `window`.
    pub const fn new(per_window: u32, window: Duration) -> Limiter {
        Limiter {
            state: Mutex::new(State {
                start: None,
                logged: 0,
                left_out: 0,
            }),
            per_window,
            window,
        }
    }

    /// Whether a line may be logged at `now`: `Some(n)` with the lines left out before it,
    /// `None` when it is left out too.
    pub fn admit(&self, now: Instant) -> Option<u64> {
        let mut s = self.state.lock();
        if s.start
            .is_none_or(|t| now.saturating_duration_since(t) >= self.window)
        {
            s.start = Some(now);
            s.logged = 0;
        }
        if s.logged < self.per_window {
            s.logged += 1;
            Some(std::mem::take(&mut s.left_out))
        } else {
            s.left_out += 1;
            None
        }
    }
}

/// Logs a refusal at warn, within the server's rate.
pub fn warn(line: impl FnOnce() -> String) {
    if let Some(left_out) = REFUSALS.admit(Instant::now()) {
        let line = line();
        match left_out {
            0 => tracing::warn!("{line}"),
            n => tracing::warn!("{line} (and {n} refusals before it not logged: too many)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_refusals_logs_a_few_lines_a_window_then_the_count() {
        let l = Limiter::new(10, Duration::from_secs(10));
        let t0 = Instant::now();
        let logged = (0..10_000)
            .filter(|i| l.admit(t0 + Duration::from_micros(*i)).is_some())
            .count();
        assert_eq!(logged, 10);
        // The next window's first line says how many were left out.
        assert_eq!(l.admit(t0 + Duration::from_secs(10)), Some(9_990));
        assert_eq!(l.admit(t0 + Duration::from_secs(11)), Some(0));
    }
}
