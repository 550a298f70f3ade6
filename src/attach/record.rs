//! `attach --record FILE` (and R in its dashboard): what the viewer received, written as it came
//! into a recording that `provetop replay` opens. One file per server session: when the server
//! restarts, the new session goes on in FILE-2.ptrec, then -3, and so on.

use provetop_telemetry::record::stream::Relay;
use provetop_telemetry::record::{Hole, Record};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Frames are flushed at least this often, so a viewer killed keeps what it had.
const FLUSH: Duration = Duration::from_millis(500);

/// A recording of what arrived, one file per session.
pub struct Recorder {
    base: PathBuf,
    overwrite: bool,
    part: u32,
    current: PathBuf,
    relay: Option<Relay<File>>,
    flushed: Instant,
}

/// What a finished file holds.
pub struct Written {
    pub path: PathBuf,
    pub bytes: u64,
    /// Events the viewer did not receive (holes), by kind.
    pub lost: Hole,
}

impl Recorder {
    /// A recording into `path` (checked by the caller), begun with the next session.
    pub fn new(path: &Path, overwrite: bool) -> Recorder {
        Recorder {
            base: path.to_path_buf(),
            overwrite,
            part: 0,
            current: path.to_path_buf(),
            relay: None,
            flushed: Instant::now(),
        }
    }

    /// A session begins (`header` its file header): the first goes into the file given, each
    /// later one into the next numbered file. Returns the file finished, if any.
    pub fn session(&mut self, header: &[u8]) -> io::Result<Option<Written>> {
        let done = self.finish_part()?;
        self.part += 1;
        self.current = numbered(&self.base, self.part);
        let file = provetop_telemetry::output::create_in_place(&self.current, self.overwrite)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.current.display())))?;
        self.relay = Some(Relay::new(file, header)?);
        Ok(done)
    }

    /// Appends a frame as it came, with its decoded records.
    pub fn frame(&mut self, bytes: &[u8], records: &[Record]) -> io::Result<()> {
        if let Some(r) = &mut self.relay {
            r.push(bytes, records)?;
            if self.flushed.elapsed() >= FLUSH {
                r.flush()?;
                self.flushed = Instant::now();
            }
        }
        Ok(())
    }

    /// The file being written and its bytes so far.
    pub fn status(&self) -> (PathBuf, u64, Hole) {
        let (bytes, lost) = self
            .relay
            .as_ref()
            .map_or((0, Hole::default()), |r| (r.bytes(), r.holes()));
        (self.current.clone(), bytes, lost)
    }

    /// Closes the file being written (its end frame and index).
    pub fn finish(mut self) -> io::Result<Option<Written>> {
        self.finish_part()
    }

    fn finish_part(&mut self) -> io::Result<Option<Written>> {
        let Some(r) = self.relay.take() else {
            return Ok(None);
        };
        let (bytes, lost) = (r.bytes(), r.holes());
        let f = r.finish()?;
        f.sync_data()?;
        Ok(Some(Written {
            path: self.current.clone(),
            bytes,
            lost,
        }))
    }
}

/// `FILE` for the first part, `FILE-2.ptrec` (before the extension) for the second, and so on.
fn numbered(base: &Path, part: u32) -> PathBuf {
    if part <= 1 {
        return base.to_path_buf();
    }
    let stem = base.file_stem().unwrap_or_default().to_string_lossy();
    let name = match base.extension() {
        Some(ext) => format!("{stem}-{part}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{part}"),
    };
    base.with_file_name(name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn later_sessions_go_into_numbered_files() {
        use std::path::Path;
        assert_eq!(
            super::numbered(Path::new("/a/s.ptrec"), 1),
            Path::new("/a/s.ptrec")
        );
        assert_eq!(
            super::numbered(Path::new("/a/s.ptrec"), 3),
            Path::new("/a/s-3.ptrec")
        );
        assert_eq!(super::numbered(Path::new("s"), 2), Path::new("s-2"));
    }
}
