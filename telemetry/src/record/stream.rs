//! A recording as a stream of messages: the file header, then frames, each sent on its own (the
//! telemetry service of `provetop serve` sends them, `provetop attach` receives them). The
//! bytes are a file's: `FrameEncoder` makes the frames the recorder writes, `decode_frame` and
//! `parse_header` check and read them under the reader's bounds, and `Relay` writes what
//! arrived into a file that `provetop replay` opens like any recording.

use std::io::{self, Write};

use super::codec::{decode_block, BlockEncoder};
use super::frame::{
    encode_end, encode_file_header, encode_frame, parse_fixed, parse_header_json, unpack, Fixed,
    FrameHeader, Header, IndexEntry, FILE_FIXED, FRAME_HEADER, KIND_EVENTS,
};
use super::{Hole, Record};
use crate::{Event, Nanos};

/// Records gathered into one frame, compressed with zstd when that helps.
pub struct FrameEncoder {
    block: BlockEncoder,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// Records in the block by kind, as a hole would count them if the frame were lost.
    kinds: Hole,
}

/// A frame's bytes and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedFrame {
    /// The frame as a file holds it: header and payload.
    pub bytes: Vec<u8>,
    /// Records in it.
    pub count: u32,
    /// Its records by kind and the times they cover: the hole its loss would leave.
    pub kinds: Hole,
}

impl FrameEncoder {
    /// An empty frame, compressed at zstd `level` (the recorder uses 3).
    pub fn new(level: i32) -> FrameEncoder {
        FrameEncoder {
            block: BlockEncoder::default(),
            zstd: zstd::bulk::Compressor::new(level).ok(),
            kinds: Hole::default(),
        }
    }

    /// Adds a record to the frame being built.
    pub fn push(&mut self, r: &Record) {
        self.block.push(r);
        let k = &mut self.kinds;
        match r {
            Record::Event(Event::Sample(_)) => k.samples += 1,
            Record::Event(Event::Span(_)) => k.spans += 1,
            _ => k.other += 1,
        }
    }

    /// Records waiting.
    pub fn count(&self) -> u32 {
        self.block.count
    }

    /// Bytes of records waiting, before compression.
    pub fn raw_bytes(&self) -> usize {
        self.block.buf.len()
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.block.is_empty()
    }

    /// The frame of every record pushed since the last one; `None` when there were none.
    pub fn frame(&mut self) -> Option<EncodedFrame> {
        if self.block.is_empty() {
            return None;
        }
        let b = &self.block;
        let bytes = encode_frame(
            KIND_EVENTS,
            &b.buf,
            b.count,
            (b.t_first, b.t_last),
            self.zstd.as_mut(),
        );
        let kinds = Hole {
            from: b.t_first,
            to: b.t_last,
            ..std::mem::take(&mut self.kinds)
        };
        let count = b.count;
        self.block.clear();
        Some(EncodedFrame {
            bytes,
            count,
            kinds,
        })
    }

    /// The compressor, for an end frame.
    pub(super) fn zstd(&mut self) -> Option<&mut zstd::bulk::Compressor<'static>> {
        self.zstd.as_mut()
    }
}

/// A recording's file header: magic, version and JSON.
pub fn header_bytes(h: &Header) -> Vec<u8> {
    encode_file_header(h)
}

/// Reads a file header sent on its own: the magic, a version this build reads, the checksum
/// and the JSON, with nothing after it.
pub fn parse_header(b: &[u8]) -> Result<Header, String> {
    let fixed: &[u8; FILE_FIXED] = b
        .get(..FILE_FIXED)
        .and_then(|f| f.try_into().ok())
        .ok_or_else(|| format!("a header of {} bytes, shorter than its fixed part", b.len()))?;
    let (version, json_len, crc) = match parse_fixed(fixed) {
        Fixed::Ok {
            version,
            json_len,
            crc,
        } => (version, json_len, crc),
        Fixed::NotRecording => return Err("not a provetop recording's header".into()),
        Fixed::Newer(v) => {
            return Err(format!(
                "format {v}, newer than this provetop reads (up to {}): use a newer provetop",
                super::VERSION
            ))
        }
        Fixed::Damaged(why) => return Err(why),
    };
    if b.len() != FILE_FIXED + json_len as usize {
        return Err(format!(
            "a header of {} bytes where its fixed part says {}",
            b.len(),
            FILE_FIXED + json_len as usize
        ));
    }
    let mut h = parse_header_json(fixed, &b[FILE_FIXED..], crc)?;
    h.version = version;
    Ok(h)
}

/// Checks and decodes one events frame sent on its own (header and payload, nothing else), under
/// the bounds a file's frames are read with.
pub fn decode_frame(b: &[u8]) -> Result<Vec<Record>, String> {
    let h = FrameHeader::parse(b).map_err(str::to_string)?;
    if h.kind != KIND_EVENTS {
        return Err(format!("a frame of kind {}, not events", h.kind));
    }
    if b.len() as u64 != h.len() {
        return Err(format!(
            "a frame of {} bytes where its header says {}",
            b.len(),
            h.len()
        ));
    }
    let raw = unpack(&h, &b[FRAME_HEADER..])?;
    let mut out = vec![];
    decode_block(&raw, h.count, &mut out)?;
    Ok(out)
}

/// Frames received from a stream, written into a recording as they came: the header, each
/// frame's bytes unchanged, and on `finish` the end frame with the index and the trailer.
pub struct Relay<W: Write> {
    out: W,
    offset: u64,
    index: Vec<IndexEntry>,
    records: u64,
    last_t: Nanos,
    holes: Hole,
    end: FrameEncoder,
}

impl<W: Write> Relay<W> {
    /// Writes `header` (a file header, as `header_bytes` makes it) to `out`.
    pub fn new(mut out: W, header: &[u8]) -> io::Result<Relay<W>> {
        let t0 = parse_header(header)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
            .t0;
        out.write_all(header)?;
        Ok(Relay {
            out,
            offset: header.len() as u64,
            index: vec![],
            records: 0,
            last_t: t0,
            holes: Hole::default(),
            end: FrameEncoder::new(3),
        })
    }

    /// Appends a frame, as received; `records` are its records as decoded (their holes are
    /// counted in the end frame). A frame whose header does not check out is refused.
    pub fn push(&mut self, frame: &[u8], records: &[Record]) -> io::Result<()> {
        let h =
            FrameHeader::parse(frame).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        self.out.write_all(frame)?;
        self.index.push(IndexEntry {
            offset: self.offset,
            len: frame.len() as u64,
            t_first: h.t_first,
            t_last: h.t_last,
            count: h.count,
        });
        self.offset += frame.len() as u64;
        self.records += u64::from(h.count);
        self.last_t = self.last_t.max(h.t_last);
        for r in records {
            if let Record::Hole(x) = r {
                self.holes.add_counts(x);
            }
        }
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.offset
    }

    /// Events lost on the way, by kind, as the holes received say.
    pub fn holes(&self) -> Hole {
        self.holes
    }

    /// Flushes what was written, so a reader sees it (the file stays open).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The end frame and the trailer; returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        let end = encode_end(
            self.offset,
            self.last_t,
            self.records,
            self.holes,
            std::mem::take(&mut self.index),
            self.end.zstd(),
        );
        self.out.write_all(&end)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Recording;
    use crate::{LogLine, Mark};

    fn log(t: Nanos) -> Record {
        Record::Event(Event::Log(LogLine {
            t,
            level: "WARN".into(),
            message: format!("line at {t}"),
        }))
    }

    fn header() -> Header {
        Header {
            session: crate::fixture::session(&crate::fixture::Spec::cpu()),
            t0: 5,
            writer: "test".into(),
            version: super::super::VERSION,
        }
    }

    #[test]
    fn frames_round_trip_and_a_relay_makes_a_file_that_replays() {
        let mut enc = FrameEncoder::new(3);
        assert!(enc.frame().is_none());
        let mut frames = vec![];
        for k in 0..3u64 {
            for i in 0..100 {
                enc.push(&log(k * 1000 + i));
            }
            if k == 1 {
                enc.push(&Record::Hole(Hole {
                    from: 1000,
                    to: 1099,
                    samples: 7,
                    ..Hole::default()
                }));
            }
            enc.push(&Record::Event(Event::Mark(Mark {
                t: k * 1000 + 500,
                label: "m".into(),
            })));
            frames.push(enc.frame().expect("a frame"));
        }
        assert_eq!(frames[1].count, 102);
        assert_eq!(
            (
                frames[1].kinds.other,
                frames[1].kinds.from,
                frames[1].kinds.to
            ),
            (102, 1000, 1500)
        );
        let h = header_bytes(&header());
        assert_eq!(parse_header(&h).expect("a header").t0, 5);
        let mut relay = Relay::new(vec![], &h).expect("a relay");
        for f in &frames {
            let rs = decode_frame(&f.bytes).expect("decodes");
            assert_eq!(rs.len(), f.count as usize);
            relay.push(&f.bytes, &rs).expect("pushed");
        }
        assert_eq!(relay.holes().samples, 7);
        let file = relay.finish().expect("finished");
        let mut rec = Recording::from_reader(std::io::Cursor::new(file)).expect("opens");
        assert_eq!(rec.frames().len(), 3);
        let report = rec.for_each(|_| {});
        assert_eq!(report.records, 304);
        assert!(report.damage.is_empty() && report.stop.is_none());
    }

    #[test]
    fn damaged_or_foreign_messages_are_refused() {
        let mut enc = FrameEncoder::new(3);
        enc.push(&log(1));
        let f = enc.frame().expect("a frame").bytes;
        let mut bad = f.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(decode_frame(&bad).unwrap_err().contains("checksum"));
        assert!(decode_frame(&f[..f.len() - 1]).is_err());
        let mut long = f.clone();
        long.push(0);
        assert!(decode_frame(&long).is_err());
        assert!(decode_frame(b"nonsense").is_err());
        let h = header_bytes(&header());
        assert!(parse_header(&h[..h.len() - 1]).is_err());
        assert!(parse_header(&f).is_err());
        let mut bad = h.clone();
        bad[40] ^= 1;
        assert!(parse_header(&bad).is_err());
    }
}
