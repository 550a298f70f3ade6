//! A recording as the dashboard's source: its records folded into the same `State` a live
//! engine feeds, at the pace of the transport (play, pause, 0.25×–64×, seek). Going back in
//! time starts the state over and plays forward to the new position, skipping spans and
//! samples older than the history the dashboard keeps.

use std::fs::File;
use std::time::Instant;

use provetop_telemetry::control::Transport;
use provetop_telemetry::record::{Player, Record, Recording, Seek};
use provetop_telemetry::{Event, Nanos, SessionInfo};

use crate::app::{App, ReplayStatus};
use crate::state::State;
use crate::view::fmt;

/// Records folded between two evictions while catching up, so a long seek stays bounded.
const EVICT_EVERY: usize = 1 << 16;

/// A recording playing into the dashboard, with its transport.
pub struct Replay {
    player: Player,
    session: SessionInfo,
    file: String,
}

impl Replay {
    /// A replay of `rec`, playing from its start; `app` should be built on the header's
    /// session.
    pub fn new(rec: Recording<File>, file: &str, now: Instant) -> Replay {
        let player = Player::new(rec, now);
        // The header as the player made it safe for the terminal.
        let session = player.recording().header.session.clone();
        Replay {
            player,
            session,
            file: file.to_string(),
        }
    }

    /// The session the recording's header describes, made safe for the terminal.
    pub fn session(&self) -> &SessionInfo {
        &self.session
    }

    /// The player: position, speed, the recording's start and end.
    pub fn player(&self) -> &Player {
        &self.player
    }

    /// Everything playback has reached by `now`.
    pub fn ingest(&mut self, app: &mut App, now: Instant) {
        let mut n = 0;
        let pos = self.player.advance(now, |r| fold(app, r, &mut n));
        app.state.advance(pos);
        for note in self.player.notices() {
            app.report(&note);
        }
        app.ui.replay = Some(ReplayStatus {
            file: self.file.clone(),
            playing: self.player.playing(),
            speed: self.player.speed(),
            start: self.player.start(),
            end: self.player.end(),
        });
    }

    /// Carries out a transport key (play, pause, speed, seek, next mark or change), then folds what
    /// it reached.
    pub fn transport(&mut self, t: Transport, app: &mut App, now: Instant) {
        let at = app.state.now;
        let jumped = matches!(
            t,
            Transport::SeekTo(_) | Transport::NextMark | Transport::NextConfig
        );
        match t {
            Transport::Play => {
                if self.player.at_end() {
                    app.ui
                        .notify(at, "at the end of the recording: g goes back", false);
                }
                self.player.play(now)
            }
            Transport::Pause => self.player.pause(now),
            Transport::Speed(s) => {
                self.player.set_speed(s, now);
                let s = self.player.speed();
                app.ui.notify(at, format!("speed ×{s}"), false);
            }
            Transport::SeekTo(t) => self.seek(t, app, now),
            Transport::NextMark => match self.player.next_mark(at) {
                Some(t) => self.seek(t, app, now),
                None => app.ui.notify(
                    at,
                    format!("no mark after {}", fmt::clock(at, false)),
                    false,
                ),
            },
            Transport::NextConfig => match self.player.next_config(at) {
                Some(t) => self.seek(t, app, now),
                None => app.ui.notify(
                    at,
                    format!("no config change after {}", fmt::clock(at, false)),
                    false,
                ),
            },
        }
        self.ingest(app, now);
        if jumped {
            app.state.refresh_advice();
        }
    }

    fn seek(&mut self, t: Nanos, app: &mut App, now: Instant) {
        if self.player.seek(t, app.state.history, now) == Seek::Rewound {
            let history = app.state.history;
            app.state = State::new(self.session.clone());
            app.state.history = history;
        }
        // The playhead moved: the selected gap no longer anchors `[` and `]`, nor the gap line.
        app.ui.gap = None;
        app.ui.paused_at = None;
        let t = t.clamp(self.player.start(), self.player.end());
        app.ui
            .notify(t, format!("at {}", fmt::clock(t, true)), false);
    }
}

/// One record into the state, as a replay folds it: events applied, holes counted and drawn.
pub fn apply(state: &mut State, r: &Record) {
    match r {
        Record::Event(e) => state.apply(e),
        Record::Hole(h) => state.hole(h),
        Record::Run { .. } => {}
    }
}

/// One record into the state; every so often the history is trimmed as a live session's is.
fn fold(app: &mut App, r: &Record, n: &mut usize) {
    apply(&mut app.state, r);
    *n += 1;
    if *n % EVICT_EVERY == 0 {
        let t = match r {
            Record::Event(Event::Span(s)) => s.end,
            r => r.time(),
        };
        app.state.advance(t);
    }
}
