//! Back-pressure: how many requests may wait (accepted, not yet proving), and how many bytes of
//! them, before a new one is refused RESOURCE_EXHAUSTED. A flood of PoRep work never takes the
//! room a WindowPoSt or WinningPoSt needs: NORMAL and LOW requests fill three quarters of each
//! bound, HIGH and CRITICAL all of it.

use provetop_engine::pipeline::Priority;

use super::identity::Refusal;

/// Requests waiting at most when `[serve] max_queued` does not say: far more than a rig's
/// engine takes at once, far fewer than a flood.
pub const DEFAULT_MAX_QUEUED: u64 = 256;

/// The share of available memory the waiting requests' bytes may take when `[serve]
/// queue_memory` does not say. Bytes are counted as received; parsed, a request holds a few
/// times that (docs/hardening.md, row 6), so an eighth keeps the queue well inside memory.
const DEFAULT_MEMORY_SHARE: u64 = 8;

/// The bounds, fixed at start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub max_queued: u64,
    pub max_bytes: u64,
}

/// What waits now.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Load {
    pub queued: u64,
    pub bytes: u64,
}

impl Limits {
    /// The configured bounds, else the defaults (`available`: the host's available memory).
    pub fn new(max_queued: Option<u64>, max_bytes: Option<u64>, available: u64) -> Limits {
        Limits {
            max_queued: max_queued.unwrap_or(DEFAULT_MAX_QUEUED),
            max_bytes: max_bytes.unwrap_or(available / DEFAULT_MEMORY_SHARE).max(1),
        }
    }

    /// The share of a bound a priority may fill: all of it for HIGH and CRITICAL work, three
    /// quarters for the rest, so deadlines keep their room.
    fn share(bound: u64, priority: Priority) -> u64 {
        match priority {
            Priority::High | Priority::Critical => bound,
            Priority::Normal | Priority::Low => bound - bound / 4,
        }
    }

    /// Whether one more request of `bytes` at `priority` may wait beside `load`; else why not.
    pub fn admit(&self, load: Load, priority: Priority, bytes: u64) -> Result<(), Refusal> {
        let (count, memory) = (
            Limits::share(self.max_queued, priority),
            Limits::share(self.max_bytes, priority),
        );
        let name = priority.name().to_uppercase();
        if load.queued >= count {
            return Err(Refusal::Exhausted(format!(
                "the queue is full: {} requests wait, at most {count} for {name} work \
                 ([serve] max_queued {}); retry later or send it to another server",
                load.queued, self.max_queued
            )));
        }
        if load.bytes.saturating_add(bytes) > memory {
            return Err(Refusal::Exhausted(format!(
                "the queue's memory is full: {} bytes wait and this request has {bytes}, over \
                 the {memory} bytes {name} work may take ([serve] queue_memory {}); retry later \
                 or send it to another server",
                load.bytes, self.max_bytes
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_either_bound_a_request_is_refused_and_deadlines_keep_a_quarter() {
        let l = Limits::new(Some(8), Some(8000), 1 << 40);
        let load = |queued, bytes| Load { queued, bytes };
        assert!(l.admit(load(5, 5000), Priority::Normal, 1000).is_ok());
        // Six of eight waiting: normal work is refused, a WindowPoSt (HIGH) still fits.
        let r = l.admit(load(6, 0), Priority::Normal, 10).unwrap_err();
        assert!(matches!(r, Refusal::Exhausted(_)), "{r:?}");
        assert!(r.message().contains("max_queued 8"), "{r:?}");
        assert!(l.admit(load(6, 0), Priority::High, 10).is_ok());
        assert!(l.admit(load(8, 0), Priority::Critical, 10).is_err());
        // Bytes: normal work fills 6000 of 8000.
        let r = l.admit(load(0, 5500), Priority::Low, 501).unwrap_err();
        assert!(r.message().contains("queue_memory 8000"), "{r:?}");
        assert!(l.admit(load(0, 5500), Priority::Critical, 2500).is_ok());
        // One request larger than the whole budget never waits.
        assert!(l.admit(Load::default(), Priority::Critical, 8001).is_err());
        assert_eq!(
            tonic::Status::from(r).code(),
            tonic::Code::ResourceExhausted
        );
    }

    #[test]
    fn the_defaults_bound_both() {
        let l = Limits::new(None, None, 64 << 30);
        assert_eq!(l.max_queued, DEFAULT_MAX_QUEUED);
        assert_eq!(l.max_bytes, 8 << 30);
    }
}
