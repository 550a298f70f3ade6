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

#[derive(Clone, Default)]
pub struct Bus {
    inner: Arc<Inner>,
}

/// The receiving end of a subscription, with the count of events it missed.
pub struct Subscription {
    pub rx: Receiver<Event>,
    dropped: Arc<AtomicU64>,
}

impl Subscription {
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Bus {
    pub fn new() -> Self {
        Bus::default()
    }

    /// A bus that discards everything (`--telemetry off`).
    pub fn disabled() -> Self {
        let bus = Bus::default();
        bus.inner.disabled.store(true, Ordering::Relaxed);
        bus
    }

    pub fn is_enabled(&self) -> bool {
        !self.inner.disabled.load(Ordering::Relaxed)
    }

    pub fn subscribe(&self, capacity: usize) -> Subscription {
        let (tx, rx) = bounded(capacity);
        let dropped = Arc::new(AtomicU64::new(0));
        self.inner.subscribers.write().push(Subscriber {
            tx,
            dropped: dropped.clone(),
        });
        Subscription { rx, dropped }
    }

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
