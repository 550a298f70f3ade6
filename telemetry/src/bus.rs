//! The telemetry bus: one publisher side shared by every stage, any number of subscribers.
//! Publishing never blocks: a subscriber that falls behind loses events and the loss is
//! counted, so a slow dashboard or disk can never stall a proof.

use crossbeam_channel::{bounded, Receiver, Sender, TrySendError};
use parking_lot::RwLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::Event;

struct Subscriber {
    tx: Sender<Event>,
    dropped: Arc<AtomicU64>,
}

#[derive(Default)]
struct Inner {
    subscribers: RwLock<Vec<Subscriber>>,
    disabled: AtomicBool,
}

/// The publisher side; clones share one set of subscribers.
#[derive(Clone, Default)]
pub struct Bus {
    inner: Arc<Inner>,
}

/// The receiving end of a subscription, with the count of events it missed.
pub struct Subscription {
    /// Events in publication order, less those dropped while it was full.
    pub rx: Receiver<Event>,
    dropped: Arc<AtomicU64>,
}

impl Subscription {
    /// Events this subscriber lost because its channel was full, since it subscribed.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Bus {
    /// A bus with no subscribers yet.
    pub fn new() -> Self {
        Bus::default()
    }

    /// A bus that discards everything (`--telemetry off`).
    pub fn disabled() -> Self {
        let bus = Bus::default();
        bus.inner.disabled.store(true, Ordering::Relaxed);
        bus
    }

    /// False for `Bus::disabled`: publishers may skip building events.
    pub fn is_enabled(&self) -> bool {
        !self.inner.disabled.load(Ordering::Relaxed)
    }

    /// A new subscriber that buffers up to `capacity` events; it sees events published from now.
    pub fn subscribe(&self, capacity: usize) -> Subscription {
        let (tx, rx) = bounded(capacity);
        let dropped = Arc::new(AtomicU64::new(0));
        self.inner.subscribers.write().push(Subscriber {
            tx,
            dropped: dropped.clone(),
        });
        Subscription { rx, dropped }
    }

    /// Sends `event` to every subscriber without blocking; a full one counts it as dropped,
    /// a dropped receiver is unsubscribed.
    pub fn publish(&self, event: Event) {
        if !self.is_enabled() {
            return;
        }
        let subs = self.inner.subscribers.read();
        let mut gone = Vec::new();
        for s in subs.iter() {
            match s.tx.try_send(event.clone()) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    s.dropped.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Disconnected(_)) => gone.push(s.dropped.clone()),
            }
        }
        drop(subs);
        if !gone.is_empty() {
            self.inner
                .subscribers
                .write()
                .retain(|s| !gone.iter().any(|g| Arc::ptr_eq(g, &s.dropped)));
        }
    }
}
