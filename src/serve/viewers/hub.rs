//! The frames every viewer is sent: one bus subscriber on its own thread gathers the events into
//! a recording's frames (a frame each `FLUSH`), keeps the last `--history` of them (at most
//! `HISTORY_BYTES`), and wakes the viewers' streams. A viewer reads the shared frames through a
//! cursor of its own, so the engine only ever pays the bus's `try_send` and the server holds
//! nothing per viewer but that cursor and the few messages in flight to it.

use parking_lot::Mutex;
use provetop_telemetry::record::stream::FrameEncoder;
use provetop_telemetry::record::{Hole, Record};
use provetop_telemetry::{Bus, Clock, Nanos};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tonic::codegen::Bytes;

/// A frame at least this often while events arrive: how far a viewer trails the engine.
const FLUSH: Duration = Duration::from_millis(200);
/// Records past which a frame is cut early (as the recorder's blocks).
const FRAME_RECORDS: u32 = 32 << 10;
/// Raw bytes past which a frame is cut early.
const FRAME_BYTES: usize = 1 << 20;
/// Frames kept, whatever `--history` says: a bound on the memory the history takes.
pub const HISTORY_BYTES: usize = 64 << 20;
/// Events the bus holds for the hub before it drops them (counted, and sent as a hole).
const BUS_CAPACITY: usize = 1 << 16;

/// One frame of the session's stream.
pub struct Frame {
    /// Its place in the stream, from 1.
    pub seq: u64,
    /// The frame's bytes, as a recording holds them.
    pub data: Bytes,
    /// What it holds by kind and the times it covers: the hole its loss leaves.
    pub kinds: Hole,
    /// Counts by kind of every frame up to this one, from the session's first: what a viewer
    /// that falls past the history missed is the difference.
    pub through: Hole,
    /// When it was made, to tell how far behind a viewer is.
    pub made: Instant,
}

struct History {
    frames: VecDeque<Arc<Frame>>,
    bytes: usize,
    next_seq: u64,
    /// Counts by kind of every frame so far.
    through: Hole,
}

/// The session's frames, shared by every viewer.
pub struct Hub {
    history: Mutex<History>,
    keep: Nanos,
    clock: Clock,
    head: watch::Sender<u64>,
    stop: AtomicBool,
}

impl Hub {
    /// Subscribes to `bus` and starts the thread that frames its events, keeping `keep` of
    /// session time.
    pub fn start(bus: &Bus, clock: Clock, keep: Duration) -> std::io::Result<Arc<Hub>> {
        let hub = Hub::new(clock, keep);
        let sub = bus.subscribe(BUS_CAPACITY);
        let h = hub.clone();
        std::thread::Builder::new()
            .name("serve-viewers".into())
            .spawn(move || h.run(&sub))?;
        Ok(hub)
    }

    /// A hub with no frames, fed by `publish`.
    fn new(clock: Clock, keep: Duration) -> Arc<Hub> {
        Arc::new(Hub {
            history: Mutex::new(History {
                frames: VecDeque::new(),
                bytes: 0,
                next_seq: 1,
                through: Hole::default(),
            }),
            keep: keep.as_nanos().min(u128::from(u64::MAX)) as Nanos,
            clock,
            head: watch::channel(0).0,
            stop: AtomicBool::new(false),
        })
    }

    /// Ends the framing thread (within a flush).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// The newest frame's number (0 before the first), and a way to wait for the next.
    pub fn head(&self) -> watch::Receiver<u64> {
        self.head.subscribe()
    }

    /// The oldest time the history holds, or now when it holds nothing.
    pub fn first_time(&self) -> Nanos {
        let h = self.history.lock();
        h.frames
            .front()
            .map_or_else(|| self.clock.now(), |f| f.kinds.from)
    }

    /// Up to `max` frames after frame `seq`; the first is later than `seq + 1` when the ones
    /// between have left the history.
    pub fn after(&self, seq: u64, max: usize) -> Vec<Arc<Frame>> {
        let h = self.history.lock();
        let first = h.frames.front().map_or(h.next_seq, |f| f.seq);
        let skip = (seq + 1).saturating_sub(first) as usize;
        h.frames.iter().skip(skip).take(max).cloned().collect()
    }

    /// The number of the newest frame held (0 when none).
    pub fn newest(&self) -> u64 {
        self.history.lock().next_seq - 1
    }

    /// Whether frame `seq` or one after it is still held: a viewer can resume after `seq - 1`.
    pub fn holds_from(&self, seq: u64) -> bool {
        let h = self.history.lock();
        seq >= h.frames.front().map_or(h.next_seq, |f| f.seq) && seq <= h.next_seq
    }

    fn run(&self, sub: &provetop_telemetry::Subscription) {
        let mut enc = FrameEncoder::new(3);
        let mut lost_seen = 0u64;
        let mut deadline = Instant::now() + FLUSH;
        let mut last_t: Nanos = 0;
        while !self.stop.load(Ordering::Relaxed) {
            let wait = deadline.saturating_duration_since(Instant::now());
            match sub.rx.recv_timeout(wait) {
                Ok(e) => {
                    last_t = last_t.max(e.time());
                    enc.push(&Record::Event(e));
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            }
            // Events the bus could not hand over: a hole of unknown kinds, now.
            let lost = sub.dropped();
            if lost > lost_seen {
                enc.push(&Record::Hole(Hole {
                    from: last_t,
                    to: last_t,
                    other: lost - lost_seen,
                    ..Hole::default()
                }));
                lost_seen = lost;
            }
            let full = enc.count() >= FRAME_RECORDS || enc.raw_bytes() >= FRAME_BYTES;
            if full || Instant::now() >= deadline {
                if let Some(f) = enc.frame() {
                    self.publish(f.bytes, f.kinds);
                }
                deadline = Instant::now() + FLUSH;
            }
        }
    }

    /// Adds a frame, drops what is past the history, and wakes the viewers.
    pub(super) fn publish(&self, data: Vec<u8>, kinds: Hole) {
        let seq = {
            let mut h = self.history.lock();
            let seq = h.next_seq;
            h.next_seq += 1;
            h.bytes += data.len();
            h.through.add_counts(&kinds);
            let through = h.through;
            h.frames.push_back(Arc::new(Frame {
                seq,
                data: Bytes::from(data),
                kinds,
                through,
                made: Instant::now(),
            }));
            let cutoff = self.clock.now().saturating_sub(self.keep);
            while let Some(f) = h.frames.front().cloned() {
                let old = f.kinds.to < cutoff || h.bytes > HISTORY_BYTES;
                if !old || f.seq == seq {
                    break;
                }
                h.frames.pop_front();
                h.bytes -= f.data.len();
            }
            seq
        };
        self.head.send_replace(seq);
    }
}

/// What lies between a frame a viewer had (its counts `through`, its end `t`) and the next it
/// gets, `next`, when the frames between left the history before it read them.
pub fn missed(through: &Hole, t: Nanos, next: &Frame) -> Hole {
    let before = |a: u64, b: u64, c: u64| a.saturating_sub(b).saturating_sub(c);
    Hole {
        from: t,
        to: next.kinds.from.max(t),
        samples: before(next.through.samples, next.kinds.samples, through.samples),
        spans: before(next.through.spans, next.kinds.spans, through.spans),
        other: before(next.through.other, next.kinds.other, through.other),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use provetop_telemetry::record::stream::{decode_frame, FrameEncoder};
    use provetop_telemetry::{Event, Sample};

    /// A frame of `n` samples at `t`.., as the framing thread makes them.
    pub fn samples(t: Nanos, n: u64) -> (Vec<u8>, Hole) {
        let mut enc = FrameEncoder::new(3);
        for i in 0..n {
            enc.push(&Record::Event(Event::Sample(Sample {
                t: t + i,
                metric: "m".into(),
                device: None,
                value: i as f64,
            })));
        }
        let f = enc.frame().expect("a frame");
        (f.bytes, f.kinds)
    }

    pub fn hub(keep: Duration) -> Arc<Hub> {
        Hub::new(Clock::start(), keep)
    }

    #[test]
    fn the_history_keeps_its_time_and_counts_what_left_it() {
        let h = hub(Duration::from_secs(3600));
        assert_eq!((h.newest(), h.after(0, 10).len()), (0, 0));
        for k in 0..5 {
            let (b, kinds) = samples(k * 100, k + 1);
            h.publish(b, kinds);
        }
        assert_eq!(h.newest(), 5);
        let all = h.after(0, 10);
        assert_eq!(
            all.iter().map(|f| f.seq).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(all[4].through.samples, 15);
        assert_eq!(h.after(3, 10).len(), 2);
        assert_eq!(
            h.after(1, 2).iter().map(|f| f.seq).collect::<Vec<_>>(),
            [2, 3]
        );
        assert!(h.holds_from(1) && h.holds_from(6) && !h.holds_from(7));
        let rs = decode_frame(&all[2].data).expect("decodes");
        assert_eq!(rs.len(), 3);
        // A viewer that had frame 1, when frames 2 and 3 are gone: 5 samples missed.
        let gone = missed(&all[0].through, all[0].kinds.to, &all[3]);
        assert_eq!((gone.samples, gone.from, gone.to), (5, 0, 300));
    }

    #[test]
    fn frames_past_the_history_leave_it() {
        // A history of nothing keeps only the newest frame.
        let h = hub(Duration::ZERO);
        std::thread::sleep(Duration::from_millis(2));
        for k in 0..3 {
            let (b, kinds) = samples(k, 1);
            h.publish(b, kinds);
        }
        assert_eq!(
            h.after(0, 10).iter().map(|f| f.seq).collect::<Vec<_>>(),
            [3]
        );
        assert!(!h.holds_from(2) && h.holds_from(3));
    }
}
