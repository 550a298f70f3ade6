//! Playing a recording back in session time: a position that moves with the wall clock at a
//! speed, records handed out as the position passes them, and seeking. Frames are decoded one
//! at a time as playback reaches them, so opening costs the index, not the file.

use std::collections::VecDeque;
use std::fs::File;
use std::time::Instant;

use super::reader::{stop_note, Recording};
use super::Record;
use crate::{Event, Nanos};

pub const MIN_SPEED: f64 = 0.25;
pub const MAX_SPEED: f64 = 64.0;

/// What a seek did to the records already handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seek {
    /// Playback moved on: what was handed out stands, the records up to the new position follow.
    Forward,
    /// Playback went back: whoever folds the records must start over from an empty state.
    Rewound,
}

/// A recording played back against the wall clock: transport, seeking and the records due.
pub struct Player {
    rec: Recording<File>,
    next_frame: usize,
    pending: VecDeque<Record>,
    start: Nanos,
    end: Nanos,
    position: Nanos,
    playing: bool,
    speed: f64,
    /// Wall time and position when playback last (re)started.
    anchor: (Instant, Nanos),
    /// Spans and samples older than this are not handed out (after a rewind they would be
    /// evicted at once); everything else is, so counts stay whole.
    skip_before: Nanos,
    damage_told: usize,
    stop_told: bool,
}

impl Player {
    /// Plays `rec`; every string from the file (the header's too) is made safe for a
    /// terminal on the way out.
    pub fn new(mut rec: Recording<File>, now: Instant) -> Player {
        crate::text::session_printable(&mut rec.header.session);
        let (start, end) = (rec.start(), rec.end_time());
        Player {
            rec,
            next_frame: 0,
            pending: VecDeque::new(),
            start,
            end,
            position: start,
            playing: true,
            speed: 1.0,
            anchor: (now, start),
            skip_before: 0,
            damage_told: 0,
            stop_told: false,
        }
    }

    /// The recording played, its header's strings already made printable.
    pub fn recording(&self) -> &Recording<File> {
        &self.rec
    }

    /// The session time playback starts at (`Recording::start`).
    pub fn start(&self) -> Nanos {
        self.start
    }

    /// The session time playback ends at (`Recording::end_time`).
    pub fn end(&self) -> Nanos {
        self.end
    }

    /// The session time of the records handed out so far.
    pub fn position(&self) -> Nanos {
        self.position
    }

    /// Whether the position moves with the wall clock (false when paused or at the end).
    pub fn playing(&self) -> bool {
        self.playing
    }

    /// The playback speed, 0.25 to 64 (1 is real time).
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Whether everything up to the end has been handed out.
    pub fn at_end(&self) -> bool {
        self.position >= self.end
    }

    /// Where playback is at `now`: the anchor, moved on by the wall clock while playing.
    pub fn target(&self, now: Instant) -> Nanos {
        let (at, t) = self.anchor;
        let t = if self.playing {
            let dt = now.saturating_duration_since(at).as_secs_f64() * self.speed;
            t.saturating_add((dt * 1e9) as Nanos)
        } else {
            t
        };
        t.min(self.end)
    }

    /// Plays on from where playback is at `now`; nothing when already at the end.
    pub fn play(&mut self, now: Instant) {
        if self.target(now) >= self.end {
            return;
        }
        self.anchor = (now, self.target(now));
        self.playing = true;
    }

    /// Holds playback where it is at `now`.
    pub fn pause(&mut self, now: Instant) {
        self.anchor = (now, self.target(now));
        self.playing = false;
    }

    /// Sets the speed (clamped to 0.25×–64×); the position so far stands.
    pub fn set_speed(&mut self, speed: f64, now: Instant) {
        self.anchor = (now, self.target(now));
        self.speed = speed.clamp(MIN_SPEED, MAX_SPEED);
    }

    /// Hands out every record up to where playback is at `now`; pauses at the end.
    pub fn advance(&mut self, now: Instant, f: impl FnMut(&Record)) -> Nanos {
        let t = self.target(now);
        self.feed_to(t, f);
        if self.playing && t >= self.end {
            self.pause(now);
        }
        self.position
    }

    /// Moves playback to `t`; a move back rewinds to the start, and then spans and samples
    /// older than `t - keep` are skipped on the way (the caller's history would drop them).
    pub fn seek(&mut self, t: Nanos, keep: Nanos, now: Instant) -> Seek {
        let t = t.clamp(self.start, self.end);
        let how = if t < self.position {
            self.next_frame = 0;
            self.pending.clear();
            self.position = self.start;
            self.skip_before = t.saturating_sub(keep);
            Seek::Rewound
        } else {
            Seek::Forward
        };
        // The records up to `t` go out with the next `advance`.
        self.anchor = (now, t);
        how
    }

    /// The time of the first record after `after` that `pred` picks, searching forward.
    pub fn find_after(&mut self, after: Nanos, pred: impl Fn(&Record) -> bool) -> Option<Nanos> {
        let first = self.rec.frames().partition_point(|f| f.t_last <= after);
        for i in first..self.rec.frames().len() {
            if let Ok(rs) = self.rec.read_frame(i) {
                let t = rs
                    .iter()
                    .filter(|r| r.time() > after && pred(r))
                    .map(Record::time)
                    .min();
                if t.is_some() {
                    return t;
                }
            }
        }
        None
    }

    /// The time of the first mark after `after`, if any.
    pub fn next_mark(&mut self, after: Nanos) -> Option<Nanos> {
        self.find_after(after, |r| matches!(r, Record::Event(Event::Mark(_))))
    }

    /// The time of the first configuration change after `after`, if any.
    pub fn next_config(&mut self, after: Nanos) -> Option<Nanos> {
        self.find_after(after, |r| matches!(r, Record::Event(Event::Config(_))))
    }

    /// Damage met and the stop reached since the last call, as lines for the user.
    pub fn notices(&mut self) -> Vec<String> {
        let mut out = vec![];
        let damage = self.rec.damage();
        for d in &damage[self.damage_told.min(damage.len())..] {
            out.push(format!(
                "bytes {}..{} of the recording are damaged ({}): their events are lost",
                d.at,
                d.at + d.len,
                crate::text::printable(&d.why)
            ));
        }
        self.damage_told = damage.len();
        if !self.stop_told && self.next_frame >= self.rec.frames().len() {
            if let Some(s) = self.rec.stop() {
                out.push(crate::text::printable(&stop_note(s, self.rec.len())).into_owned());
            }
            self.stop_told = true;
        }
        out
    }

    fn feed_to(&mut self, t: Nanos, mut f: impl FnMut(&Record)) {
        loop {
            while let Some(r) = self.pending.front() {
                if r.time() > t {
                    self.position = self.position.max(t);
                    return;
                }
                let r = self.pending.pop_front().expect("a front");
                let old = matches!(r, Record::Event(Event::Span(_) | Event::Sample(_)))
                    && r.time() < self.skip_before;
                if !old {
                    f(&r);
                }
            }
            if !self.load_next() {
                break;
            }
        }
        self.position = self.position.max(t);
    }

    /// Decodes the next readable frame into `pending`, in time order.
    fn load_next(&mut self) -> bool {
        while self.next_frame < self.rec.frames().len() {
            let i = self.next_frame;
            self.next_frame += 1;
            if let Ok(mut rs) = self.rec.read_frame(i) {
                rs.iter_mut().for_each(crate::text::record_printable);
                rs.sort_by_key(Record::time);
                self.pending.extend(rs);
                return true;
            }
        }
        false
    }
}
