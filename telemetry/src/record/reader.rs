//! Reading a recording: the header, an index of its frames (from the end frame of a cleanly
//! closed file, or by reading frame headers only), and any frame on demand. A damaged frame
//! is skipped and reported; a file cut short is read up to the cut, which is reported too.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::codec::decode_block;
use super::frame::{
    parse_fixed, parse_header_json, parse_trailer, unpack, EndPayload, Fixed, FrameHeader, Header,
    FILE_FIXED, FRAME_HEADER, FRAME_MAGIC, KIND_END, KIND_EVENTS, MAX_STORED, TRAILER,
    TRAILER_MAGIC,
};
use super::Record;
use crate::Nanos;

/// Why a file cannot be replayed at all (the CLI exits with 2).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The file has no bytes.
    #[error("an empty file, not a provetop recording")]
    Empty,
    /// The file does not start with the recording's magic bytes.
    #[error("not a provetop recording (it does not start with provetop's magic bytes)")]
    NotRecording,
    /// The file's format version is newer than `VERSION`.
    #[error(
        "a recording in format {found}, newer than this provetop reads (up to {supported}): \
         replay it with a newer provetop"
    )]
    Newer {
        /// The file's version.
        found: u16,
        /// The newest version this reader reads.
        supported: u16,
    },
    /// The header fails its checksum or its JSON does not parse; the text says which.
    #[error("the recording's header is damaged: {0}")]
    DamagedHeader(String),
    /// The file ends before its header does.
    #[error("the recording is cut inside its header: {len} bytes, the header needs {need}")]
    TruncatedHeader {
        /// The file's length (bytes).
        len: u64,
        /// The bytes the header needs.
        need: u64,
    },
}

/// An events frame: where it is and what it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    /// Where its header starts in the file (bytes).
    pub offset: u64,
    /// Its length, header and stored payload (bytes).
    pub len: u64,
    /// Its first record's time (nanoseconds since session start).
    pub t_first: Nanos,
    /// Its last record's time (nanoseconds since session start).
    pub t_last: Nanos,
    /// The records it holds, as its header claims.
    pub count: u32,
}

/// A stretch of the file that could not be read; reading went on after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Where it starts in the file (bytes).
    pub at: u64,
    /// Its length (bytes).
    pub len: u64,
    /// What was wrong, for a note.
    pub why: String,
}

/// Where reading stopped before the end of the file, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    /// The file offset reading stopped at (bytes).
    pub at: u64,
    /// Why: a cut, or the bound on decoded memory.
    pub why: String,
}

/// What a full read found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadReport {
    /// The file's length (bytes).
    pub len: u64,
    /// Events frames decoded.
    pub frames: usize,
    /// Records decoded from them.
    pub records: u64,
    /// Stretches skipped, in file order.
    pub damage: Vec<Damage>,
    /// Where reading stopped before the end; `None` when it reached it.
    pub stop: Option<Stop>,
}

impl ReadReport {
    /// One line per problem, for stderr, a log pane or a summary: empty when the file is whole.
    pub fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .damage
            .iter()
            .map(|d| {
                format!(
                    "bytes {}..{} of the recording are damaged ({}): their events are lost",
                    d.at,
                    d.at + d.len,
                    d.why
                )
            })
            .collect();
        if let Some(s) = &self.stop {
            out.push(stop_note(s, self.len));
        }
        out
    }
}

/// The note for `s` in a file of `len` bytes, as `ReadReport::notes` gives it.
pub fn stop_note(s: &Stop, len: u64) -> String {
    format!(
        "the recording stops at byte {} of {len}: {}; replaying what comes before",
        s.at, s.why
    )
}

/// The decoded state a reader takes on by default (`--max-memory` raises it): the records of
/// every frame decoded so far, their strings as they expand and their maps, each frame counted
/// once however often it is read again.
pub const DEFAULT_MAX_MEMORY: u64 = 512 << 20;

/// A recording opened for reading: its header, its frames' index, frames decoded on demand
/// under a bound on decoded memory.
pub struct Recording<R = File> {
    src: R,
    max_memory: u64,
    /// How many times over the reader's consumer holds each decoded byte.
    held_times: u64,
    decoded: u64,
    /// Frames whose cost is in `decoded`.
    counted: Vec<bool>,
    len: u64,
    /// The file header: the session, `t0` and the writer.
    pub header: Header,
    data_start: u64,
    frames: Vec<FrameInfo>,
    end: Option<EndPayload>,
    damage: Vec<Damage>,
    stop: Option<Stop>,
    /// The index came from the end frame (no scan was needed).
    pub indexed_by_trailer: bool,
}

impl Recording<File> {
    /// Opens the file at `path`, reads its header and indexes its frames.
    pub fn open(path: &Path) -> Result<Recording<File>, OpenError> {
        Recording::from_reader(crate::input::open_regular(path)?)
    }
}

impl<R: Read + Seek> Recording<R> {
    /// Reads the header and indexes the frames.
    pub fn from_reader(mut src: R) -> Result<Recording<R>, OpenError> {
        let len = src.seek(SeekFrom::End(0))?;
        if len == 0 {
            return Err(OpenError::Empty);
        }
        let mut fixed = [0u8; FILE_FIXED];
        let n = read_at(&mut src, 0, &mut fixed)?;
        if n < FILE_FIXED {
            let m = n.min(16);
            return Err(if fixed[..m] == super::frame::MAGIC[..m] {
                OpenError::TruncatedHeader {
                    len,
                    need: FILE_FIXED as u64,
                }
            } else {
                OpenError::NotRecording
            });
        }
        let (version, json_len, crc) = match parse_fixed(&fixed) {
            Fixed::Ok {
                version,
                json_len,
                crc,
            } => (version, json_len, crc),
            Fixed::NotRecording => return Err(OpenError::NotRecording),
            Fixed::Newer(v) => {
                return Err(OpenError::Newer {
                    found: v,
                    supported: super::VERSION,
                })
            }
            Fixed::Damaged(why) => return Err(OpenError::DamagedHeader(why)),
        };
        let data_start = FILE_FIXED as u64 + u64::from(json_len);
        if len < data_start {
            return Err(OpenError::TruncatedHeader {
                len,
                need: data_start,
            });
        }
        let mut json = vec![0u8; json_len as usize];
        read_at(&mut src, FILE_FIXED as u64, &mut json)?;
        let mut header = parse_header_json(&fixed, &json, crc).map_err(OpenError::DamagedHeader)?;
        header.version = version;
        let mut rec = Recording {
            src,
            max_memory: DEFAULT_MAX_MEMORY,
            held_times: 1,
            decoded: 0,
            counted: vec![],
            len,
            header,
            data_start,
            frames: vec![],
            end: None,
            damage: vec![],
            stop: None,
            indexed_by_trailer: false,
        };
        if !rec.index_from_trailer()? {
            rec.scan()?;
        }
        rec.counted = vec![false; rec.frames.len()];
        Ok(rec)
    }

    /// Bounds the decoded state (bytes); reading stops, as at a cut, at the first frame past it.
    pub fn set_max_memory(&mut self, bytes: u64) {
        self.max_memory = bytes;
    }

    /// A consumer that keeps `k` bytes of its own state for each decoded byte (a summary's
    /// report) has the bound apply to the whole: each frame is charged `k` times its cost.
    pub fn set_held_times(&mut self, k: u64) {
        self.held_times = k.max(1);
    }

    /// The decoded state taken on so far (bytes).
    pub fn decoded_bytes(&self) -> u64 {
        self.decoded
    }

    /// Counts frame `i`'s cost the first time it is decoded; past the bound the recording ends
    /// before frame `i`, with a stop that says why.
    fn charge(&mut self, i: usize, cost: u64) -> Result<(), String> {
        if self.counted[i] {
            return Ok(());
        }
        let total = self.decoded.saturating_add(cost);
        if total.saturating_mul(self.held_times) > self.max_memory {
            let why = format!(
                "the events from here on would take the decoded state past {} MiB (the bound \
                 on a recording's memory; raise it with --max-memory)",
                self.max_memory >> 20
            );
            let at = self.frames[i].offset;
            self.stop = Some(Stop {
                at,
                why: why.clone(),
            });
            self.frames.truncate(i);
            self.counted.truncate(i);
            // What lies past the stop is not read.
            self.damage.retain(|d| d.at < at);
            return Err(why);
        }
        self.decoded = total;
        self.counted[i] = true;
        Ok(())
    }

    /// The file's length (bytes).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no events frame was found.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The events frames in file order, as far as reading goes.
    pub fn frames(&self) -> &[FrameInfo] {
        &self.frames
    }

    /// Where reading stops before the end of the file, if it does.
    pub fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    /// Damage found so far (while indexing, and in frames read since).
    pub fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// The session time the recording starts at.
    pub fn start(&self) -> Nanos {
        self.frames
            .first()
            .map_or(self.header.t0, |f| f.t_first.min(self.header.t0))
    }

    /// The latest time any frame covers.
    pub fn end_time(&self) -> Nanos {
        let last = self.frames.iter().map(|f| f.t_last).max().unwrap_or(0);
        last.max(self.end.as_ref().map_or(0, |e| e.t_end))
            .max(self.start())
    }

    /// The index from the end frame, when the trailer and the end frame check out.
    fn index_from_trailer(&mut self) -> io::Result<bool> {
        let min = self.data_start + (FRAME_HEADER + TRAILER) as u64;
        if self.len < min {
            return Ok(false);
        }
        let mut t = [0u8; TRAILER];
        read_at(&mut self.src, self.len - TRAILER as u64, &mut t)?;
        let Some(at) = parse_trailer(&t) else {
            return Ok(false);
        };
        if at < self.data_start || at > self.len - (FRAME_HEADER + TRAILER) as u64 {
            return Ok(false);
        }
        let Ok((h, raw)) = self.read_frame_at(at) else {
            return Ok(false);
        };
        if h.kind != KIND_END || at + h.len() != self.len - TRAILER as u64 {
            return Ok(false);
        }
        let Some(end) = EndPayload::decode(&raw) else {
            return Ok(false);
        };
        let Some(index) = &end.index else {
            return Ok(false);
        };
        let mut next = self.data_start;
        let mut frames = Vec::with_capacity(index.len());
        for e in index {
            let ok = e.offset >= next
                && e.len >= FRAME_HEADER as u64
                && e.len <= (FRAME_HEADER as u64) + u64::from(MAX_STORED)
                && e.offset + e.len <= at;
            if !ok {
                return Ok(false);
            }
            next = e.offset + e.len;
            frames.push(FrameInfo {
                offset: e.offset,
                len: e.len,
                t_first: e.t_first,
                t_last: e.t_last,
                count: e.count,
            });
        }
        self.frames = frames;
        self.end = Some(end);
        self.indexed_by_trailer = true;
        Ok(true)
    }

    /// Indexes by reading frame headers only, resynchronising after damage.
    fn scan(&mut self) -> io::Result<()> {
        let mut off = self.data_start;
        let mut hb = [0u8; FRAME_HEADER];
        while off < self.len {
            let left = self.len - off;
            if left == TRAILER as u64 {
                let mut t = [0u8; TRAILER];
                read_at(&mut self.src, off, &mut t)?;
                if parse_trailer(&t).is_some() {
                    break;
                }
            }
            if left < FRAME_HEADER as u64 {
                let mut tail = vec![0u8; left as usize];
                read_at(&mut self.src, off, &mut tail)?;
                let why = if tail.starts_with(TRAILER_MAGIC) {
                    "the trailer is cut or damaged (every frame before it is whole)"
                } else {
                    "it is cut inside a frame header"
                };
                self.stop = Some(Stop {
                    at: off,
                    why: why.into(),
                });
                break;
            }
            read_at(&mut self.src, off, &mut hb)?;
            match FrameHeader::parse(&hb) {
                Ok(h) if off + h.len() <= self.len => {
                    if h.kind == KIND_EVENTS {
                        self.frames.push(FrameInfo {
                            offset: off,
                            len: h.len(),
                            t_first: h.t_first,
                            t_last: h.t_last,
                            count: h.count,
                        });
                    } else if h.kind == KIND_END {
                        self.end = self
                            .read_frame_at(off)
                            .ok()
                            .and_then(|(_, raw)| EndPayload::decode(&raw));
                    }
                    off += h.len();
                }
                Ok(h) => {
                    self.stop = Some(Stop {
                        at: off,
                        why: format!(
                            "its last frame is cut short ({} of {} bytes; the recorder did not finish)",
                            self.len - off,
                            h.len()
                        ),
                    });
                    break;
                }
                Err(why) => match self.resync(off + 1)? {
                    Some(next) => {
                        self.damage.push(Damage {
                            at: off,
                            len: next - off,
                            why: why.into(),
                        });
                        off = next;
                    }
                    None => {
                        self.stop = Some(Stop {
                            at: off,
                            why: format!("no readable frame follows ({why})"),
                        });
                        break;
                    }
                },
            }
        }
        if self.end.is_none() && self.stop.is_none() {
            self.stop = Some(Stop {
                at: off,
                why: "it has no end frame: its recorder did not finish (it was killed, or the \
                      file was cut)"
                    .into(),
            });
        }
        Ok(())
    }

    /// The first offset at or after `from` where a frame header checks out.
    fn resync(&mut self, from: u64) -> io::Result<Option<u64>> {
        const CHUNK: usize = 64 << 10;
        let mut buf = vec![0u8; CHUNK + FRAME_HEADER];
        let mut base = from;
        while base + (FRAME_HEADER as u64) <= self.len {
            let n = read_at(&mut self.src, base, &mut buf)?;
            if n < FRAME_HEADER {
                break;
            }
            let last = n - FRAME_HEADER;
            for i in 0..=last {
                if &buf[i..i + 4] == FRAME_MAGIC
                    && FrameHeader::parse(&buf[i..i + FRAME_HEADER]).is_ok()
                {
                    return Ok(Some(base + i as u64));
                }
            }
            base += last as u64 + 1;
        }
        Ok(None)
    }

    /// A frame's header and decompressed payload, checked.
    fn read_frame_at(&mut self, at: u64) -> Result<(FrameHeader, Vec<u8>), String> {
        let mut hb = [0u8; FRAME_HEADER];
        let n = read_at(&mut self.src, at, &mut hb).map_err(|e| e.to_string())?;
        if n < FRAME_HEADER {
            return Err("the file ends inside the frame header".into());
        }
        let h = FrameHeader::parse(&hb)?;
        let mut payload = vec![0u8; h.stored as usize];
        let n = read_at(&mut self.src, at + FRAME_HEADER as u64, &mut payload)
            .map_err(|e| e.to_string())?;
        if n < payload.len() {
            return Err("the file ends inside the frame".into());
        }
        let raw = unpack(&h, &payload)?;
        Ok((h, raw))
    }

    /// The records of events frame `i`; a damaged frame is noted and yields an error.
    /// Past the bound on decoded state the recording ends before the frame (see `stop`), and
    /// the error is not damage.
    pub fn read_frame(&mut self, i: usize) -> Result<Vec<Record>, Damage> {
        let Some(&f) = self.frames.get(i) else {
            return Err(Damage {
                at: self.len,
                len: 0,
                why: "past the last frame read".into(),
            });
        };
        let result = self.read_frame_at(f.offset).and_then(|(h, raw)| {
            if h.kind != KIND_EVENTS || h.len() != f.len {
                return Err("the frame disagrees with the index".to_string());
            }
            let mut out = vec![];
            let cost = decode_block(&raw, h.count, &mut out)?;
            Ok((out, cost as u64))
        });
        let result = match result {
            Ok((out, cost)) => match self.charge(i, cost) {
                Ok(()) => Ok(out),
                Err(why) => {
                    return Err(Damage {
                        at: f.offset,
                        len: f.len,
                        why,
                    })
                }
            },
            Err(e) => Err(e),
        };
        result.map_err(|why| {
            let d = Damage {
                at: f.offset,
                len: f.len,
                why,
            };
            if !self.damage.iter().any(|x| x.at == d.at) {
                self.damage.push(d.clone());
                self.damage.sort_by_key(|d| d.at);
            }
            d
        })
    }

    /// Every record in file order; damaged frames are skipped and reported.
    pub fn for_each(&mut self, mut f: impl FnMut(&Record)) -> ReadReport {
        let mut records = 0;
        let mut frames = 0;
        // `frames` shrinks if the bound on decoded state is reached.
        let mut i = 0;
        while i < self.frames.len() {
            let read = self.read_frame(i);
            i += 1;
            if let Ok(rs) = read {
                frames += 1;
                records += rs.len() as u64;
                rs.iter().for_each(&mut f);
            }
        }
        ReadReport {
            len: self.len,
            frames,
            records,
            damage: self.damage.clone(),
            stop: self.stop.clone(),
        }
    }
}

/// Reads up to `buf.len()` bytes at `at`; fewer only at the end of the file.
fn read_at<R: Read + Seek>(src: &mut R, at: u64, buf: &mut [u8]) -> io::Result<usize> {
    src.seek(SeekFrom::Start(at))?;
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
