//! The recorder: a bus subscriber on its own thread that encodes events into frames, and a
//! writer thread that puts frames on disk. The engine only ever pays the bus's `try_send`.
//!
//! Between the two threads is a queue bounded by bytes, not by waiting: when the disk falls
//! behind and the queue grows past `soft_backlog` the encoder drops samples, past
//! `hard_backlog` spans too, and past `max_backlog` everything; whatever it drops is counted
//! and written as a hole in the next frame, so a replay shows where the recording is blind.
//! Events the bus dropped because the encoder itself fell behind are counted the same way.

use crossbeam_channel::{select, unbounded, Receiver, Sender};
use parking_lot::Mutex;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::frame::{encode_end, encode_file_header, Header, IndexEntry};
use super::stream::FrameEncoder;
use super::{Hole, Record};
use crate::{Bus, Event, Nanos, SessionInfo, Subscription};

/// How a recorder frames, compresses and sheds load; `Default` is what `--record` uses.
#[derive(Clone, Debug)]
pub struct RecorderOptions {
    /// A frame at least this often while events arrive: what a killed recorder loses at most.
    pub flush_every: Duration,
    /// A frame once this many bytes of records are waiting.
    pub block_bytes: usize,
    /// A frame once this many records are waiting (at most the format's 65,536).
    pub block_records: u32,
    /// Bytes queued for the disk past which samples are dropped, then spans, then everything.
    pub soft_backlog: u64,
    /// Bytes queued for the disk past which spans are dropped too.
    pub hard_backlog: u64,
    /// Bytes queued for the disk past which every event is dropped.
    pub max_backlog: u64,
    /// zstd level.
    pub level: i32,
    /// Events the bus holds for the recorder before it drops them.
    pub bus_capacity: usize,
    /// Whether an existing file may be overwritten (`--force`); never through a symbolic link.
    pub overwrite: bool,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            // Half the one second a killed recorder may lose: the other half covers encoding,
            // the write and a loaded machine's scheduling.
            flush_every: Duration::from_millis(500),
            block_bytes: 1 << 20,
            block_records: 32 << 10,
            soft_backlog: 4 << 20,
            hard_backlog: 16 << 20,
            max_backlog: 64 << 20,
            level: 3,
            bus_capacity: 1 << 16,
            overwrite: false,
        }
    }
}

/// What the recorder has done so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecorderStatus {
    /// The file; `None` for a recorder into another sink (`Recorder::start_with`).
    pub path: Option<PathBuf>,
    /// Bytes on disk.
    pub bytes: u64,
    /// Records written into frames (events, holes, run windows).
    pub records: u64,
    /// Everything dropped, by kind (`from`/`to` unused).
    pub dropped: Hole,
    /// The first write error; nothing is written after it.
    pub error: Option<String>,
}

/// What a stopped recorder did, as `Recorder::stop` returns it.
pub type RecorderSummary = RecorderStatus;

#[derive(Default)]
struct Shared {
    written: AtomicU64,
    backlog: AtomicU64,
    records: AtomicU64,
    samples: AtomicU64,
    spans: AtomicU64,
    other: AtomicU64,
    error: Mutex<Option<String>>,
}

enum Ctl {
    Run { start: Nanos, end: Nanos },
    Stop,
}

/// A subscription taken before the session is known (subscribing before the engine starts is
/// how a recording sees every event); the file is opened only when recording begins, once
/// everything else was checked.
pub struct PendingRecorder {
    path: PathBuf,
    sub: Subscription,
    opts: RecorderOptions,
}

impl PendingRecorder {
    /// Opens the file (in place, so a killed recorder keeps what it wrote), writes the header
    /// and starts recording.
    pub fn begin(self, session: SessionInfo, t0: Nanos) -> io::Result<Recorder> {
        let file =
            crate::output::create_in_place(&self.path, self.opts.overwrite).map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    io::Error::new(e.kind(), "the file exists (--force overwrites it)")
                } else {
                    e
                }
            })?;
        let sync = file.try_clone().ok();
        let header = Header {
            session,
            t0,
            writer: format!("provetop {}", env!("CARGO_PKG_VERSION")),
            version: super::VERSION,
        };
        let mut r = Recorder::start_with(Box::new(file), sync, self.sub, header, self.opts);
        r.path = Some(self.path);
        Ok(r)
    }
}

/// A recording in progress: its encoder and writer threads; dropping it stops it as `stop`
/// does.
pub struct Recorder {
    path: Option<PathBuf>,
    ctl: Sender<Ctl>,
    shared: Arc<Shared>,
    encoder: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Subscribes to `bus` for a recording into `path`, opened by `begin`.
    pub fn create(path: &Path, bus: &Bus, opts: RecorderOptions) -> PendingRecorder {
        PendingRecorder {
            path: path.to_path_buf(),
            sub: bus.subscribe(opts.bus_capacity),
            opts,
        }
    }

    /// Starts recording `bus` to a new file `path` now, with `session` in the header.
    pub fn start(path: &Path, bus: &Bus, session: SessionInfo, t0: Nanos) -> io::Result<Recorder> {
        Recorder::create(path, bus, RecorderOptions::default()).begin(session, t0)
    }

    /// Records `sub` into any sink (tests use a slow one); `sync` is flushed to disk at stop.
    pub fn start_with(
        sink: Box<dyn Write + Send>,
        sync: Option<File>,
        sub: Subscription,
        header: Header,
        opts: RecorderOptions,
    ) -> Recorder {
        let shared = Arc::new(Shared::default());
        let (ctl, ctl_rx) = unbounded();
        let (frames, frames_rx) = unbounded::<Vec<u8>>();
        let writer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("record-write".into())
                .spawn(move || write_loop(sink, sync, frames_rx, &shared))
                .expect("spawning the recorder's writer")
        };
        let encoder = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("record-encode".into())
                .spawn(move || {
                    let mut e = Encoder::new(header, opts, shared, frames);
                    e.run(&sub, &ctl_rx);
                    drop(e);
                    let _ = writer.join();
                })
                .expect("spawning the recorder")
        };
        Recorder {
            path: None,
            ctl,
            shared,
            encoder: Some(encoder),
        }
    }

    /// The file being written; `None` for another sink.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// What it has done so far; its counters are read without waiting for the threads.
    pub fn status(&self) -> RecorderStatus {
        let s = &self.shared;
        RecorderStatus {
            path: self.path.clone(),
            bytes: s.written.load(Ordering::Relaxed),
            records: s.records.load(Ordering::Relaxed),
            dropped: Hole {
                samples: s.samples.load(Ordering::Relaxed),
                spans: s.spans.load(Ordering::Relaxed),
                other: s.other.load(Ordering::Relaxed),
                ..Hole::default()
            },
            error: s.error.lock().clone(),
        }
    }

    /// Notes the window a run reports on, so a summary of the file uses the same one.
    pub fn run_window(&self, start: Nanos, end: Nanos) {
        let _ = self.ctl.send(Ctl::Run { start, end });
    }

    /// Writes what is queued, the end frame and the trailer, and closes the file.
    pub fn stop(mut self) -> RecorderStatus {
        self.finish();
        self.status()
    }

    fn finish(&mut self) {
        if let Some(h) = self.encoder.take() {
            let _ = self.ctl.send(Ctl::Stop);
            let _ = h.join();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.finish();
    }
}

fn write_loop(
    mut sink: Box<dyn Write + Send>,
    sync: Option<File>,
    frames: Receiver<Vec<u8>>,
    shared: &Shared,
) {
    let mut failed = false;
    for f in frames {
        let n = f.len() as u64;
        if !failed {
            match sink.write_all(&f) {
                Ok(()) => {
                    shared.written.fetch_add(n, Ordering::Relaxed);
                }
                Err(e) => {
                    failed = true;
                    *shared.error.lock() = Some(format!("writing the recording: {e}"));
                }
            }
        }
        shared.backlog.fetch_sub(n, Ordering::Relaxed);
    }
    if !failed {
        let _ = sink.flush();
        if let Some(f) = sync {
            let _ = f.sync_data();
        }
    }
}

/// Records into frames: the frame being built, offsets and the index.
struct Framer {
    enc: FrameEncoder,
    offset: u64,
    index: Vec<IndexEntry>,
    records: u64,
    last_t: Nanos,
}

impl Framer {
    /// The framer and the file header to write first.
    fn new(header: &Header, level: i32) -> (Framer, Vec<u8>) {
        let bytes = encode_file_header(header);
        let f = Framer {
            enc: FrameEncoder::new(level),
            offset: bytes.len() as u64,
            index: vec![],
            records: 0,
            last_t: header.t0,
        };
        (f, bytes)
    }

    fn push(&mut self, r: &Record) {
        self.last_t = self.last_t.max(r.time());
        self.enc.push(r);
    }

    fn full(&self, opts: &RecorderOptions) -> bool {
        self.enc.count() >= opts.block_records || self.enc.raw_bytes() >= opts.block_bytes
    }

    /// The block as a frame, if it holds anything.
    fn frame(&mut self) -> Option<Vec<u8>> {
        let f = self.enc.frame()?;
        self.index.push(IndexEntry {
            offset: self.offset,
            len: f.bytes.len() as u64,
            t_first: f.kinds.from,
            t_last: f.kinds.to,
            count: f.count,
        });
        self.records += u64::from(f.count);
        self.offset += f.bytes.len() as u64;
        Some(f.bytes)
    }

    /// The end frame (counts and index) and the trailer that points at it.
    fn end(&mut self, dropped: Hole) -> Vec<u8> {
        let index = std::mem::take(&mut self.index);
        let out = encode_end(
            self.offset,
            self.last_t,
            self.records,
            dropped,
            index,
            self.enc.zstd(),
        );
        self.offset += out.len() as u64;
        out
    }
}

/// Writes records to a file on the caller's thread, a frame whenever a block fills or the
/// caller asks: for tools and tests that make recordings without a bus.
pub struct Writer<W: Write> {
    out: W,
    framer: Framer,
    opts: RecorderOptions,
}

impl<W: Write> Writer<W> {
    /// Writes the file header to `out`; `opts` gives the frames' bounds and zstd level.
    pub fn new(mut out: W, header: &Header, opts: RecorderOptions) -> io::Result<Writer<W>> {
        let (framer, bytes) = Framer::new(header, opts.level);
        out.write_all(&bytes)?;
        Ok(Writer { out, framer, opts })
    }

    /// Adds a record to the current frame, writing the frame when it is full.
    pub fn push(&mut self, r: &Record) -> io::Result<()> {
        self.framer.push(r);
        if self.framer.full(&self.opts) {
            self.flush_frame()?;
        }
        Ok(())
    }

    /// Ends the current frame (as a recorder does once a second).
    pub fn flush_frame(&mut self) -> io::Result<()> {
        match self.framer.frame() {
            Some(f) => self.out.write_all(&f),
            None => Ok(()),
        }
    }

    /// The last frame, the end frame and the trailer.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_frame()?;
        let end = self.framer.end(Hole::default());
        self.out.write_all(&end)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

struct Encoder {
    framer: Framer,
    opts: RecorderOptions,
    shared: Arc<Shared>,
    frames: Sender<Vec<u8>>,
    /// What was dropped since the last frame.
    hole: Option<Hole>,
    bus_lost: u64,
}

impl Encoder {
    fn new(
        header: Header,
        opts: RecorderOptions,
        shared: Arc<Shared>,
        frames: Sender<Vec<u8>>,
    ) -> Encoder {
        let (framer, bytes) = Framer::new(&header, opts.level);
        let e = Encoder {
            framer,
            opts,
            shared,
            frames,
            hole: None,
            bus_lost: 0,
        };
        e.send(bytes);
        e
    }

    fn send(&self, bytes: Vec<u8>) {
        self.shared
            .backlog
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let _ = self.frames.send(bytes);
    }

    fn run(&mut self, sub: &Subscription, ctl: &Receiver<Ctl>) {
        let mut deadline = Instant::now() + self.opts.flush_every;
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let mut stop = false;
            select! {
                recv(sub.rx) -> m => match m {
                    Ok(e) => self.take(e),
                    Err(_) => stop = true,
                },
                recv(ctl) -> m => match m {
                    Ok(Ctl::Run { start, end }) => {
                        // After what the bus delivered before the run ended.
                        for e in sub.rx.try_iter() {
                            self.take(e);
                        }
                        self.framer.push(&Record::Run { start, end });
                    }
                    Ok(Ctl::Stop) | Err(_) => {
                        for e in sub.rx.try_iter() {
                            self.take(e);
                        }
                        stop = true;
                    }
                },
                default(wait) => {}
            }
            self.note_bus_loss(sub.dropped());
            if stop {
                break;
            }
            let now = Instant::now();
            if self.framer.full(&self.opts) || now >= deadline {
                self.flush();
                deadline = now + self.opts.flush_every;
            }
        }
        self.flush();
        let s = &self.shared;
        let dropped = Hole {
            samples: s.samples.load(Ordering::Relaxed),
            spans: s.spans.load(Ordering::Relaxed),
            other: s.other.load(Ordering::Relaxed),
            ..Hole::default()
        };
        let end = self.framer.end(dropped);
        self.send(end);
    }

    /// Records an event, or drops it when the disk is behind: samples first, then spans.
    fn take(&mut self, e: Event) {
        let backlog = self.shared.backlog.load(Ordering::Relaxed);
        let (limit, counter, range) = match &e {
            Event::Sample(s) => (self.opts.soft_backlog, &self.shared.samples, (s.t, s.t)),
            Event::Span(s) => (self.opts.hard_backlog, &self.shared.spans, (s.start, s.end)),
            other => (
                self.opts.max_backlog,
                &self.shared.other,
                (other.time(), other.time()),
            ),
        };
        if backlog < limit {
            self.framer.push(&Record::Event(e));
            return;
        }
        counter.fetch_add(1, Ordering::Relaxed);
        let h = self.hole.get_or_insert(Hole {
            from: range.0,
            to: range.1,
            ..Hole::default()
        });
        h.from = h.from.min(range.0);
        h.to = h.to.max(range.1);
        match e {
            Event::Sample(_) => h.samples += 1,
            Event::Span(_) => h.spans += 1,
            _ => h.other += 1,
        }
    }

    /// Events the bus could not hand over: a hole of unknown kinds at the current time.
    fn note_bus_loss(&mut self, lost: u64) {
        if lost > self.bus_lost {
            let n = lost - self.bus_lost;
            self.bus_lost = lost;
            self.shared.other.fetch_add(n, Ordering::Relaxed);
            let t = self.framer.last_t;
            let h = self.hole.get_or_insert(Hole {
                from: t,
                to: t,
                ..Hole::default()
            });
            h.to = h.to.max(t);
            h.other += n;
        }
    }

    /// The hole since the last frame (unless even that cannot be queued) and the block.
    fn flush(&mut self) {
        if self.shared.backlog.load(Ordering::Relaxed) < self.opts.max_backlog {
            if let Some(h) = self.hole.take() {
                self.framer.push(&Record::Hole(h));
            }
        }
        let count = u64::from(self.framer.enc.count());
        if let Some(f) = self.framer.frame() {
            self.shared.records.fetch_add(count, Ordering::Relaxed);
            self.send(f);
        }
    }
}
