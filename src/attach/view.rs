//! The dashboard over a watched server: the stream's frames folded into the app the way a replay
//! folds a file's (the same records, the same `apply`), the server's clock followed between
//! frames, the link's state in the header, and the dashboard's changes sent as Control calls.
//! When the server is lost the view stays as it was (scroll back, inspect) and says so; when it
//! returns the stream resumes, or starts over for a restarted server.

use crossbeam_channel::Receiver;
use provetop_proto::provetop::v1::control_request::Action;
use provetop_proto::provetop::v1::{Cancel, Change, Mark, Reconfigure, Submit};
use provetop_telemetry::control::Control;
use provetop_telemetry::record::stream::decode_frame;
use provetop_telemetry::{Nanos, SessionInfo};
use provetop_ui::app::{Link, RecordingStatus, RemoteStatus};
use provetop_ui::{App, State};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::client::{Client, Incoming};
use super::record::Recorder;
use crate::dashboard::{pane_lines, Source};
use crate::logging::PaneLine;

/// Time the dashboard's loop spends on arrived messages per frame, so a long history folds in
/// while keys still answer.
const INGEST_BUDGET: Duration = Duration::from_millis(40);

/// Where the link stands, with the times the header counts from.
enum Linked {
    CatchingUp,
    Live,
    Lost {
        why: String,
        since: Instant,
        retry_at: Instant,
    },
}

/// A watched server as the dashboard's source.
pub struct Attached {
    client: Client,
    addr: String,
    session_id: String,
    control: bool,
    link: Linked,
    /// The server's session clock at an instant here: how the view follows it between frames.
    anchor: (Instant, Nanos),
    /// The latest time a record reached.
    latest: Nanos,
    recorder: Option<Recorder>,
    pane: Option<Receiver<PaneLine>>,
}

/// The first message of a stream, taken apart.
pub struct Hello {
    pub header: Vec<u8>,
    pub session: SessionInfo,
    pub session_id: String,
    pub control: bool,
    pub note: String,
    pub resumed: bool,
    pub now: Nanos,
}

/// A `Hello`'s session, read from its header with every string made safe for the terminal.
pub fn hello(m: Incoming) -> Result<Hello, String> {
    let Incoming::Hello {
        header,
        session_id,
        control,
        note,
        resumed,
        now,
    } = m
    else {
        return Err("the stream did not start with a hello".into());
    };
    let mut h = provetop_telemetry::record::stream::parse_header(&header)
        .map_err(|e| format!("the server's session header: {e}"))?;
    provetop_telemetry::text::session_printable(&mut h.session);
    Ok(Hello {
        header: header.to_vec(),
        session: h.session,
        session_id,
        control,
        note: provetop_telemetry::text::printable(&note).into_owned(),
        resumed,
        now,
    })
}

impl Attached {
    /// The source, from the stream's first hello; `app` was built on its session.
    pub fn new(
        client: Client,
        addr: &str,
        first: Hello,
        recorder: Option<Recorder>,
        app: &mut App,
    ) -> Attached {
        let mut a = Attached {
            client,
            addr: addr.to_string(),
            session_id: String::new(),
            control: false,
            link: Linked::CatchingUp,
            anchor: (Instant::now(), first.now),
            latest: 0,
            recorder,
            pane: crate::logging::pane(),
        };
        a.hello(first, app);
        a
    }

    fn hello(&mut self, h: Hello, app: &mut App) {
        // The server vouches for its clock at h.now: a notice set here lasts its 6 s from
        // there, rather than expiring as the history catches the view up to that time.
        app.state.advance(h.now);
        let now = app.state.now;
        let new_session = h.session_id != self.session_id;
        if !self.session_id.is_empty() {
            if new_session {
                let history = app.state.history;
                app.state = State::new(h.session.clone());
                app.state.history = history;
                app.state.advance(h.now);
                self.latest = 0;
                app.report("the server restarted (a new session): the view starts over");
            } else if h.resumed {
                app.ui
                    .notify(now, format!("back on {}: resumed", self.addr), false);
            } else {
                // What followed the last frame has left the server's history: the stream goes
                // on from its oldest frame, newer than anything here.
                app.report("back on the server, which no longer holds all that was missed: a gap");
            }
        }
        if new_session {
            if let Some(r) = &mut self.recorder {
                match r.session(&h.header) {
                    Ok(done) => {
                        if let Some(w) = done {
                            let msg = format!("recorded {} to {}", w.bytes, w.path.display());
                            app.ui.notify(now, msg, false);
                        }
                    }
                    Err(e) => {
                        app.report(&format!("recording stopped: {e}"));
                        self.recorder = None;
                    }
                }
            }
        }
        // Never silently read-only: the note says which, and a refused token is an error.
        if h.control || h.note.starts_with("read-only") {
            app.ui.notify(app.state.now, h.note.clone(), false);
        } else {
            app.report(&h.note);
        }
        self.session_id = h.session_id;
        self.control = h.control;
        self.anchor = (Instant::now(), h.now);
        self.link = Linked::CatchingUp;
    }

    fn take(&mut self, m: Incoming, app: &mut App) {
        match m {
            Incoming::Hello { .. } => match hello(m) {
                Ok(h) => self.hello(h, app),
                Err(e) => app.report(&e),
            },
            Incoming::Frame(bytes) => {
                let mut records = match decode_frame(&bytes) {
                    Ok(r) => r,
                    Err(e) => return app.report(&format!("a damaged frame from the server: {e}")),
                };
                records
                    .iter_mut()
                    .for_each(provetop_telemetry::text::record_printable);
                if let Some(r) = &mut self.recorder {
                    if let Err(e) = r.frame(&bytes, &records) {
                        app.report(&format!("recording stopped: {e}"));
                        self.recorder = None;
                    }
                }
                for r in &records {
                    self.latest = self.latest.max(r.time());
                    provetop_ui::replay::apply(&mut app.state, r);
                }
            }
            Incoming::CaughtUp => self.link = Linked::Live,
            Incoming::Lost { why, retry_in } => {
                let why = provetop_telemetry::text::printable(&why).into_owned();
                if !matches!(self.link, Linked::Lost { .. }) {
                    app.report(&format!("lost the server {}: {why}", self.addr));
                    self.link = Linked::Lost {
                        why,
                        since: Instant::now(),
                        retry_at: Instant::now() + retry_in,
                    };
                } else if let Linked::Lost {
                    why: w, retry_at, ..
                } = &mut self.link
                {
                    *w = why;
                    *retry_at = Instant::now() + retry_in;
                }
            }
            // The first attempt's failure ends attach before the dashboard opens.
            Incoming::Refused { why, .. } => app.report(&why),
            Incoming::Reply { text, error, .. } => {
                let text = provetop_telemetry::text::printable(&text).into_owned();
                match error {
                    true => app.report(&format!("refused: {text}")),
                    false => app.ui.notify(app.state.now, text, false),
                }
            }
        }
    }

    /// The recording in progress, for the header.
    fn recording(&self) -> Option<RecordingStatus> {
        self.recorder.as_ref().map(|r| {
            let (path, bytes, lost) = r.status();
            RecordingStatus {
                file: path.display().to_string(),
                bytes,
                dropped: lost.total(),
            }
        })
    }

    /// R: starts recording what arrives from now (the session's next frames), or stops.
    fn record(&mut self, path: Option<PathBuf>, app: &mut App) {
        let now = app.state.now;
        if let Some(r) = self.recorder.take() {
            match r.finish() {
                Ok(Some(w)) => app.ui.notify(
                    now,
                    format!("recorded {} bytes to {}", w.bytes, w.path.display()),
                    false,
                ),
                Ok(None) => {}
                Err(e) => app.report(&format!("recording: {e}")),
            }
            if path.is_none() {
                return;
            }
        }
        let Some(path) = path else { return };
        let mut session = app.state.session.clone();
        session.config = app.state.config.current.clone();
        let header =
            provetop_telemetry::record::stream::header_bytes(&provetop_telemetry::record::Header {
                session,
                t0: now,
                writer: format!("provetop {}", env!("CARGO_PKG_VERSION")),
                version: provetop_telemetry::record::VERSION,
            });
        let mut r = Recorder::new(&path, false);
        match r.session(&header) {
            Ok(_) => {
                app.ui
                    .notify(now, format!("recording to {}", path.display()), false);
                self.recorder = Some(r);
            }
            Err(e) => app.report(&format!("recording to {}: {e}", path.display())),
        }
    }

    /// The recording's last file, closed (on quit).
    pub fn finish(self) -> Option<String> {
        let r = self.recorder?;
        Some(match r.finish() {
            Ok(Some(w)) => format!("attach: recorded {} bytes to {}", w.bytes, w.path.display()),
            Ok(None) => return None,
            Err(e) => format!("attach: the recording: {e}"),
        })
    }
}

impl Source for Attached {
    fn ingest(&mut self, app: &mut App) {
        let start = Instant::now();
        while start.elapsed() < INGEST_BUDGET {
            let Some(m) = self.client.try_recv() else {
                break;
            };
            self.take(m, app);
        }
        // The server's clock runs on between frames; while it is lost the view holds still.
        if !matches!(self.link, Linked::Lost { .. }) {
            let (at, t) = self.anchor;
            let now = t.saturating_add(at.elapsed().as_nanos() as Nanos);
            app.state.advance(now.max(self.latest));
        }
        let now = app.state.now;
        pane_lines(app, self.pane.as_ref(), |_| now);
        app.ui.recording = self.recording();
        app.ui.remote = Some(RemoteStatus {
            addr: self.addr.clone(),
            control: self.control,
            link: match &self.link {
                Linked::CatchingUp => Link::CatchingUp,
                Linked::Live => Link::Live,
                Linked::Lost {
                    why,
                    since,
                    retry_at,
                } => Link::Lost {
                    why: why.clone(),
                    for_s: since.elapsed().as_secs(),
                    retry_in_s: retry_at
                        .saturating_duration_since(Instant::now())
                        .as_secs_f64()
                        .ceil() as u64,
                },
            },
        });
    }

    fn control(&mut self, c: Control, app: &mut App) -> bool {
        let action = match c {
            Control::Quit => return false,
            Control::Record { path } => {
                self.record(path, app);
                return true;
            }
            // The UI says where transport keys work.
            Control::Replay(_) => return true,
            Control::Reconfigure { changes } => Action::Reconfigure(Reconfigure {
                changes: changes
                    .into_iter()
                    .map(|(key, value)| Change { key, value })
                    .collect(),
            }),
            Control::Submit { partitions } => Action::Submit(Submit { partitions }),
            Control::Cancel { job } => Action::Cancel(Cancel { job }),
            Control::Mark { label } => Action::Mark(Mark { label }),
        };
        if matches!(self.link, Linked::Lost { .. }) {
            app.report(&format!("not sent: the server {} is lost", self.addr));
            return true;
        }
        self.client.control(action);
        true
    }
}
