//! `provetop.v1.Telemetry` on serve's listener: the session's telemetry for `provetop attach`, and
//! the changes a viewer holding the control token makes. `hub` frames the events and keeps the
//! history; `Watch` streams the frames to each viewer from a cursor of its own (a viewer that
//! falls `MAX_LAG` behind skips ahead, and what it skipped reaches it as a hole record, counted);
//! `Control` checks the token and hands the change to the engine as made by `attach:<name>`.

pub mod hub;
mod refusals;

use provetop_engine::pipeline::{EngineHandle, JobSpec};
use provetop_proto::provetop::v1::control_request::Action;
use provetop_proto::provetop::v1::telemetry_server::Telemetry;
use provetop_proto::provetop::v1::watch_message::Body;
use provetop_proto::provetop::v1::*;
use provetop_telemetry::record::stream::{header_bytes, FrameEncoder};
use provetop_telemetry::record::{Header, Hole, Record};
use provetop_telemetry::{Event, LogLine, SessionInfo};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tonic::{Request, Response, Status};

use crate::token::Token;
use hub::Hub;

/// A viewer whose next frame is older than this skips to the newer ones.
const MAX_LAG: Duration = Duration::from_secs(5);
/// Messages a viewer's stream holds in flight besides what its connection buffers.
const IN_FLIGHT: usize = 4;
/// Frames taken from the history at a time.
const BATCH: usize = 16;
/// Viewers at once; more are refused.
const MAX_VIEWERS: usize = 64;
/// Of those, the slots only a viewer holding the control token takes: the operator is never
/// locked out by read-only viewers.
const TOKEN_SLOTS: usize = 4;
/// A viewer that takes no message for this long (its connection full) is let go.
const VIEWER_IDLE: Duration = Duration::from_secs(60);
/// Changes in one Reconfigure, and bytes of a key, value or mark.
const MAX_CHANGES: usize = 64;
const MAX_TEXT: usize = 256;

/// The telemetry service's state.
pub struct Viewers {
    /// The frames; `None` with `--telemetry off`.
    pub hub: Option<Arc<Hub>>,
    pub engine: EngineHandle,
    /// The control token's digest; `None`: no viewer may change anything.
    pub token: Option<Token>,
    /// A job of the server's own workload, for Submit.
    pub spec: JobSpec,
    /// The session as it started (machine, workload, start time).
    pub session: SessionInfo,
    /// Names this run of the server.
    pub session_id: String,
    /// The history a new viewer is sent.
    pub history: Duration,
    /// Turns true when the server stops: every stream ends.
    pub stopping: watch::Receiver<bool>,
    pub watching: Arc<AtomicUsize>,
}

/// A session id from the time and the process: a restarted server has another.
pub fn session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}-{:x}", nanos, std::process::id())
}

/// A viewer's name as the log will show it: 1 to 64 of letters, digits and `._@+-`.
fn viewer_name(name: &str) -> Result<&str, String> {
    let ok = (1..=64).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "._@+-".contains(c));
    if ok {
        Ok(name)
    } else {
        Err(format!(
            "a viewer's name is 1 to 64 letters, digits or ._@+-, not {:?}",
            name.chars().take(80).collect::<String>()
        ))
    }
}

fn message(body: Body) -> WatchMessage {
    WatchMessage { body: Some(body) }
}

/// A frame made for one viewer: the hole of what it missed.
fn hole_frame(h: Hole) -> WatchMessage {
    let mut enc = FrameEncoder::new(3);
    enc.push(&Record::Hole(h));
    let data = enc.frame().map(|f| f.bytes).unwrap_or_default();
    message(Body::Frame(Frame {
        data: data.into(),
        seq: 0,
    }))
}

/// Whether `token` lets viewer `by` change the engine of a server holding `server`'s token, and
/// why (or why not), in words.
fn access(server: Option<&Token>, token: &[u8], by: &str) -> (bool, String) {
    let (ok, note) = match (server, token.is_empty()) {
        (None, true) => (
            false,
            "read-only: this server takes no changes from viewers (it was started without \
                 control_token_file)",
        ),
        (None, false) => (
            false,
            "the token is not used: this server takes no changes from viewers (it was \
                 started without control_token_file)",
        ),
        (Some(_), true) => (
            false,
            "read-only: changes need the server's control token (attach --token-file FILE)",
        ),
        (Some(t), false) if t.matches(token) => (true, ""),
        (Some(_), false) => (
            false,
            "the token was refused: it is not this server's control token",
        ),
    };
    match ok {
        true => (true, format!("control: changes are logged as made by {by}")),
        false => (false, note.to_string()),
    }
}

impl Viewers {
    /// The file header a viewer starts from: the session with the configuration in force now,
    /// from the oldest time the history holds.
    fn header(&self, hub: &Hub) -> Vec<u8> {
        let mut session = self.session.clone();
        session.devices = self.engine.devices();
        session.config = self.engine.config();
        header_bytes(&Header {
            session,
            t0: hub.first_time(),
            writer: format!("provetop {}", env!("CARGO_PKG_VERSION")),
            version: provetop_telemetry::record::VERSION,
        })
    }

    /// A line every viewer sees in its log pane, and the server's log.
    fn log(&self, message: String) {
        tracing::info!("{message}");
        self.engine.bus().publish(Event::Log(LogLine {
            t: self.engine.clock().now(),
            level: "INFO".into(),
            message,
        }));
    }
}

/// Counts a viewer while its stream lives.
struct Watching(Arc<AtomicUsize>);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

type Tx = mpsc::Sender<Result<WatchMessage, Status>>;

/// Returns once the server stops.
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    // The borrow `wait_for` returns is not `Send`: dropped here, before any other await.
    let _ = stopping.wait_for(|s| *s).await.map(|_| ());
}

/// Takes a viewer's slot: a read-only viewer only while more than `TOKEN_SLOTS` are free;
/// else why not (for RESOURCE_EXHAUSTED).
fn admit(watching: &Arc<AtomicUsize>, control: bool) -> Result<Watching, String> {
    let bound = match control {
        true => MAX_VIEWERS,
        false => MAX_VIEWERS - TOKEN_SLOTS,
    };
    if watching.fetch_add(1, Ordering::SeqCst) >= bound {
        watching.fetch_sub(1, Ordering::SeqCst);
        let why = match control {
            true => format!("{MAX_VIEWERS} viewers are watching already"),
            false => format!(
                "{bound} read-only viewers are watching already (the last {TOKEN_SLOTS} places \
                 are kept for viewers with the control token)"
            ),
        };
        return Err(why);
    }
    Ok(Watching(watching.clone()))
}

/// Sends `m`, unless the viewer left, took nothing for `idle`, or the server stops first;
/// false then.
async fn send(
    tx: &Tx,
    m: WatchMessage,
    stopping: &mut watch::Receiver<bool>,
    idle: Duration,
) -> bool {
    tokio::select! {
        r = tx.send(Ok(m)) => r.is_ok(),
        _ = stopped(stopping) => false,
        _ = tokio::time::sleep(idle) => false,
    }
}

/// How far a viewer may fall behind before it skips frames, and how long it may take no
/// message at all before it is let go.
#[derive(Clone, Copy)]
struct Pace {
    max_lag: Duration,
    idle: Duration,
}

/// One viewer's stream: the hello, the frames after `cursor` the history holds (caught up once
/// they are sent), then each new frame, until the viewer leaves or the server stops.
async fn stream(
    tx: Tx,
    hello: Hello,
    hub: Arc<Hub>,
    mut cursor: u64,
    mut stopping: watch::Receiver<bool>,
    _watching: Watching,
    pace: Pace,
) {
    let mut head = hub.head();
    let backlog_end = hub.newest();
    if !send(&tx, message(Body::Hello(hello)), &mut stopping, pace.idle).await {
        return;
    }
    // What the viewer had: the counts through its last frame, and that frame's end.
    let (mut through, mut t_last) = match hub.after(cursor, 1).first() {
        Some(f) if cursor > 0 => {
            let before = Hole {
                samples: f.through.samples.saturating_sub(f.kinds.samples),
                spans: f.through.spans.saturating_sub(f.kinds.spans),
                other: f.through.other.saturating_sub(f.kinds.other),
                ..Hole::default()
            };
            (before, f.kinds.from)
        }
        _ => (Hole::default(), 0),
    };
    let mut caught_up = false;
    // What the viewer skipped and has not been told yet.
    let mut skipped: Option<Hole> = None;
    loop {
        if !caught_up && cursor >= backlog_end {
            caught_up = true;
            if !send(
                &tx,
                message(Body::CaughtUp(CaughtUp {})),
                &mut stopping,
                pace.idle,
            )
            .await
            {
                return;
            }
        }
        let frames = hub.after(cursor, BATCH);
        let Some(first) = frames.first() else {
            if let Some(h) = skipped.take() {
                if !send(&tx, hole_frame(h), &mut stopping, pace.idle).await {
                    return;
                }
            }
            tokio::select! {
                r = head.changed() => if r.is_err() { return },
                _ = stopped(&mut stopping) => {
                    // Not awaited: a viewer that reads nothing must not hold up the stop.
                    let _ = tx.try_send(Err(Status::unavailable("the server is stopping")));
                    return;
                }
                _ = tx.closed() => return,
            }
            continue;
        };
        // Frames that left the history before the viewer read them.
        if cursor > 0 && first.seq > cursor + 1 {
            add(&mut skipped, hub::missed(&through, t_last, first));
        }
        for f in &frames {
            (cursor, through, t_last) = (f.seq, f.through, f.kinds.to);
            // Far behind the newest frames (not the history sent on connecting): skipped.
            if f.seq > backlog_end && f.made.elapsed() > pace.max_lag {
                add(&mut skipped, f.kinds);
                continue;
            }
            if let Some(h) = skipped.take() {
                if !send(&tx, hole_frame(h), &mut stopping, pace.idle).await {
                    return;
                }
            }
            let m = message(Body::Frame(Frame {
                data: f.data.clone(),
                seq: f.seq,
            }));
            if !send(&tx, m, &mut stopping, pace.idle).await {
                return;
            }
        }
    }
}

/// Adds `h` to the hole `into` (its times widened, its counts added).
fn add(into: &mut Option<Hole>, h: Hole) {
    match into {
        None => *into = Some(h),
        Some(x) => {
            x.from = x.from.min(h.from);
            x.to = x.to.max(h.to);
            x.add_counts(&h);
        }
    }
}

#[tonic::async_trait]
impl Telemetry for Viewers {
    type WatchStream = tokio_stream::wrappers::ReceiverStream<Result<WatchMessage, Status>>;

    async fn watch(
        &self,
        req: Request<WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let peer = req
            .remote_addr()
            .map_or_else(|| "a local socket".to_string(), |a| a.to_string());
        let r = req.into_inner();
        let name = viewer_name(&r.name).map_err(Status::invalid_argument)?;
        let Some(hub) = &self.hub else {
            return Err(Status::unavailable(
                "this server runs with --telemetry off: there is nothing to watch",
            ));
        };
        let by = format!("attach:{name}");
        let (control, control_note) = access(self.token.as_ref(), &r.token, &by);
        let watching = admit(&self.watching, control).map_err(Status::resource_exhausted)?;
        let resumed =
            r.session_id == self.session_id && r.after_seq > 0 && hub.holds_from(r.after_seq + 1);
        let cursor = if resumed { r.after_seq } else { 0 };
        let access = if control { "with control" } else { "read-only" };
        tracing::info!(
            "attach: {name} watching from {peer}, {access}{}",
            if resumed { ", resumed" } else { "" }
        );
        if !control && !r.token.is_empty() {
            refusals::warn(|| format!("attach: {name} from {peer}: {control_note}"));
        }
        let hello = Hello {
            header: self.header(hub),
            session_id: self.session_id.clone(),
            control,
            control_note,
            resumed,
            now: self.engine.clock().now(),
            history_seconds: self.history.as_secs(),
        };
        let (tx, rx) = mpsc::channel(IN_FLIGHT);
        tokio::spawn(stream(
            tx,
            hello,
            hub.clone(),
            cursor,
            self.stopping.clone(),
            watching,
            Pace {
                max_lag: MAX_LAG,
                idle: VIEWER_IDLE,
            },
        ));
        Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(
            rx,
        )))
    }

    async fn control(
        &self,
        req: Request<ControlRequest>,
    ) -> Result<Response<ControlResponse>, Status> {
        let r = req.into_inner();
        let name = viewer_name(&r.name).map_err(Status::invalid_argument)?;
        let by = format!("attach:{name}");
        let (ok, note) = access(self.token.as_ref(), &r.token, &by);
        if !ok {
            refusals::warn(|| format!("attach: a change from {name} refused: {note}"));
            return Err(Status::permission_denied(note));
        }
        let too_long = |s: &str| s.len() > MAX_TEXT;
        let engine = &self.engine;
        let (message, job) = match r.action {
            None => return Err(Status::invalid_argument("ControlRequest has no action")),
            Some(Action::Reconfigure(c)) => {
                if c.changes.len() > MAX_CHANGES
                    || c.changes
                        .iter()
                        .any(|c| too_long(&c.key) || too_long(&c.value))
                {
                    return Err(Status::invalid_argument(format!(
                        "at most {MAX_CHANGES} changes of {MAX_TEXT} bytes each"
                    )));
                }
                let changes: Vec<_> = c.changes.into_iter().map(|c| (c.key, c.value)).collect();
                match engine.reconfigure(&changes, &by) {
                    Ok(applied) if applied.is_empty() => ("no change".to_string(), 0),
                    Ok(applied) => {
                        let what: Vec<String> = applied
                            .iter()
                            .map(|c| format!("{}: {} → {}", c.key, c.from, c.to))
                            .collect();
                        (format!("applied {}", what.join(", ")), 0)
                    }
                    Err(e) => return Err(Status::invalid_argument(format!("refused: {e}"))),
                }
            }
            Some(Action::Submit(s)) => {
                let (engine, spec) = (engine.clone(), self.spec.clone());
                let spec = JobSpec {
                    partitions: s.partitions,
                    ..spec
                };
                let submitted = tokio::task::spawn_blocking(move || engine.submit(spec))
                    .await
                    .map_err(|e| Status::internal(format!("submitting: {e}")))?;
                let job = submitted
                    .map_err(|e| Status::invalid_argument(format!("submitting a job: {e:#}")))?;
                self.log(format!("job {job} submitted (by {by})"));
                (format!("submitted job {job}"), job)
            }
            Some(Action::Cancel(c)) => {
                if !engine.cancel(c.job) {
                    return Err(Status::not_found(format!("job {} is not open", c.job)));
                }
                self.log(format!("job {} cancelled (by {by})", c.job));
                (format!("job {} cancelled", c.job), c.job)
            }
            Some(Action::Mark(m)) => {
                if too_long(&m.label) {
                    return Err(Status::invalid_argument(format!(
                        "a mark has at most {MAX_TEXT} bytes"
                    )));
                }
                engine.mark(&m.label);
                tracing::info!("mark {:?} (by {by})", m.label);
                ("marked".to_string(), 0)
            }
        };
        Ok(Response::new(ControlResponse { message, job }))
    }
}

#[cfg(test)]
mod tests;
