//! Logs: a rotating file under `$XDG_STATE_HOME/provetop/` for everything at info and above
//! (a file a day, the last 7 kept, each capped at `MAX_FILE_BYTES`), and warnings on stderr for headless runs, or in the dashboard's log pane when it owns the
//! terminal. `PROVETOP_LOG` overrides the filter.

use crossbeam_channel::{bounded, Receiver, Sender};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::{fmt, layer::SubscriberExt, util::SubscriberInitExt, EnvFilter, Layer};

/// Bytes a day's log file takes at most: past it, lines are dropped until the next day's file
/// (one line says so), so a flood of lines cannot fill the disk.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// A writer that stops at `cap` bytes a day (UTC days, as the daily files turn).
struct Capped<W> {
    inner: W,
    cap: u64,
    day: u64,
    written: u64,
    today: fn() -> u64,
}

fn utc_day() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400)
}

impl<W: std::io::Write> std::io::Write for Capped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let day = (self.today)();
        if day != self.day {
            (self.day, self.written) = (day, 0);
        }
        let len = buf.len() as u64;
        if self.written + len <= self.cap {
            self.written += len;
            self.inner.write_all(buf)?;
        } else if self.written <= self.cap {
            // Past the cap: said once, then nothing more today.
            self.written = self.cap + 1;
            let note = format!(
                "provetop: this log file reached {} bytes; lines are dropped until the next \
                 day's file\n",
                self.cap
            );
            self.inner.write_all(note.as_bytes())?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A warning or error for the dashboard's log pane.
pub struct PaneLine {
    pub at: Instant,
    pub level: String,
    pub message: String,
}

/// Lines for the pane; bounded, and a full channel drops lines rather than block a thread.
static PANE: OnceLock<(Sender<PaneLine>, Receiver<PaneLine>)> = OnceLock::new();

/// The pane's lines, when the dashboard owns the terminal.
pub fn pane() -> Option<Receiver<PaneLine>> {
    PANE.get().map(|(_, rx)| rx.clone())
}

struct PaneLayer;

#[derive(Default)]
struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for PaneLayer {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let Some((tx, _)) = PANE.get() else { return };
        let mut m = Message::default();
        event.record(&mut m);
        let _ = tx.try_send(PaneLine {
            at: Instant::now(),
            level: event.metadata().level().to_string(),
            // A message may quote a file (a recording's strings): the pane draws it escaped,
            // as tracing's own writers escape what they print.
            message: provetop_telemetry::text::printable(&m.0).into_owned(),
        });
    }
}

pub fn log_dir() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("provetop")
}

/// Installs the subscriber; the guard flushes the file on drop. `stderr` adds a warning layer;
/// without it (the dashboard) warnings go to the log pane instead.
pub fn init(stderr: bool) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let filter =
        || EnvFilter::try_from_env("PROVETOP_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let dir = log_dir();
    let file = std::fs::create_dir_all(&dir).ok().and_then(|_| {
        tracing_appender::rolling::Builder::new()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix("provetop.log")
            .max_log_files(7)
            .build(&dir)
            .ok()
    });
    let (file_layer, guard) = match file {
        Some(appender) => {
            let capped = Capped {
                inner: appender,
                cap: MAX_FILE_BYTES,
                day: utc_day(),
                written: 0,
                today: utc_day,
            };
            let (writer, guard) = tracing_appender::non_blocking(capped);
            (
                Some(
                    fmt::layer()
                        .with_writer(writer)
                        .with_ansi(false)
                        .with_filter(filter()),
                ),
                Some(guard),
            )
        }
        None => (None, None),
    };
    // Colour only for a person at a terminal: files and journald get plain text.
    let ansi = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let stderr_layer = stderr.then(|| {
        fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .without_time()
            .with_target(false)
            .with_filter(EnvFilter::new("warn"))
    });
    let pane_layer = (!stderr).then(|| {
        PANE.get_or_init(|| bounded(1024));
        PaneLayer.with_filter(LevelFilter::WARN)
    });
    let _ = tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .with(pane_layer)
        .try_init();
    guard
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_day_s_file_stops_at_its_cap_and_says_so_once() {
        let mut w = Capped {
            inner: vec![],
            cap: 1000,
            day: utc_day(),
            written: 0,
            today: utc_day,
        };
        let line = [b'x'; 99];
        for _ in 0..10_000 {
            assert_eq!(w.write(&line).unwrap(), 99);
        }
        let text = String::from_utf8(w.inner.clone()).unwrap();
        assert!(text.len() < 1000 + 200, "{} bytes", text.len());
        assert_eq!(text.matches("lines are dropped").count(), 1);
        // The next day's file starts again.
        w.today = || utc_day() + 1;
        w.inner.clear();
        w.write_all(&line).unwrap();
        assert_eq!(w.inner.len(), 99);
    }
}
