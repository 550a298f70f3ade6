//! The file header, frame headers, the end frame and the trailer: byte layouts, checksums and
//! the bounds every length is checked against.

use serde::{Deserialize, Serialize};

use super::codec::{get_varint, put_varint};
use crate::{Nanos, SessionInfo};

pub const MAGIC: &[u8; 16] = b"PROVETOP-REC\r\n\x1a\n";
/// The format this build writes and the newest it reads. 2 added a job's kind (a record of
/// its own, `JOB_KIND`), 3 a job's name (`JOB_NAMED`: a served request's id); older files
/// read as before, their jobs without a kind or name.
pub const VERSION: u16 = 3;
/// Magic, version, flags, JSON length, CRC.
pub const FILE_FIXED: usize = 28;
pub const MAX_HEADER_JSON: u32 = 1 << 20;

pub const FRAME_MAGIC: &[u8; 4] = b"PTRF";
pub const FRAME_HEADER: usize = 44;
pub const MAX_RAW: u32 = 4 << 20;
/// zstd can expand incompressible input a little; such a block is stored instead.
pub const MAX_STORED: u32 = MAX_RAW + (64 << 10);
pub const MAX_RECORDS: u32 = 1 << 16;

pub const KIND_EVENTS: u8 = 1;
pub const KIND_END: u8 = 2;
pub const CODEC_STORED: u8 = 0;
pub const CODEC_ZSTD: u8 = 1;

pub const TRAILER_MAGIC: &[u8; 4] = b"PTRX";
pub const TRAILER: usize = 16;

/// The JSON of the file header: what the session was about when the recording began.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The machine, its devices and the configuration at the start of the recording.
    pub session: SessionInfo,
    /// Session time at which recording began (a recording started from the dashboard begins
    /// mid-session).
    pub t0: Nanos,
    /// `provetop 0.1.0`.
    pub writer: String,
    /// Filled in by the reader from the fixed part.
    #[serde(skip)]
    pub version: u16,
}

pub fn encode_file_header(h: &Header) -> Vec<u8> {
    let json = serde_json::to_vec(h).expect("a header serialises");
    assert!(json.len() <= MAX_HEADER_JSON as usize, "header too large");
    let mut out = Vec::with_capacity(FILE_FIXED + json.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out[16..24]);
    crc.update(&json);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&json);
    out
}

/// The fixed part of the file header: (version, JSON length, CRC), or why it is not one.
pub enum Fixed {
    Ok {
        version: u16,
        json_len: u32,
        crc: u32,
    },
    NotRecording,
    Newer(u16),
    Damaged(String),
}

pub fn parse_fixed(b: &[u8; FILE_FIXED]) -> Fixed {
    if &b[..16] != MAGIC {
        return Fixed::NotRecording;
    }
    let version = u16::from_le_bytes([b[16], b[17]]);
    let json_len = u32::from_le_bytes(b[20..24].try_into().expect("4"));
    let crc = u32::from_le_bytes(b[24..28].try_into().expect("4"));
    if version == 0 {
        return Fixed::Damaged("version 0".into());
    }
    if version > VERSION {
        return Fixed::Newer(version);
    }
    if json_len > MAX_HEADER_JSON {
        return Fixed::Damaged(format!("a header of {json_len} bytes"));
    }
    Fixed::Ok {
        version,
        json_len,
        crc,
    }
}

/// Checks the header's CRC over the fixed fields and the JSON, then parses the JSON.
pub fn parse_header_json(
    fixed: &[u8; FILE_FIXED],
    json: &[u8],
    crc: u32,
) -> Result<Header, String> {
    let mut h = crc32fast::Hasher::new();
    h.update(&fixed[16..24]);
    h.update(json);
    if h.finalize() != crc {
        return Err("its checksum does not match".into());
    }
    serde_json::from_slice(json).map_err(|e| format!("its JSON does not parse: {e}"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub kind: u8,
    pub codec: u8,
    pub stored: u32,
    pub raw: u32,
    pub count: u32,
    pub t_first: Nanos,
    pub t_last: Nanos,
    pub payload_crc: u32,
}

impl FrameHeader {
    pub fn encode(&self) -> [u8; FRAME_HEADER] {
        let mut b = [0u8; FRAME_HEADER];
        b[..4].copy_from_slice(FRAME_MAGIC);
        b[4] = self.kind;
        b[5] = self.codec;
        b[8..12].copy_from_slice(&self.stored.to_le_bytes());
        b[12..16].copy_from_slice(&self.raw.to_le_bytes());
        b[16..20].copy_from_slice(&self.count.to_le_bytes());
        b[20..28].copy_from_slice(&self.t_first.to_le_bytes());
        b[28..36].copy_from_slice(&self.t_last.to_le_bytes());
        b[36..40].copy_from_slice(&self.payload_crc.to_le_bytes());
        let crc = crc32fast::hash(&b[..40]);
        b[40..44].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// A frame header whose checksum and bounds hold, or why not.
    pub fn parse(b: &[u8]) -> Result<FrameHeader, &'static str> {
        if b.len() < FRAME_HEADER || &b[..4] != FRAME_MAGIC {
            return Err("no frame starts here");
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8"));
        if crc32fast::hash(&b[..40]) != u32_at(40) {
            return Err("the frame header's checksum does not match");
        }
        let h = FrameHeader {
            kind: b[4],
            codec: b[5],
            stored: u32_at(8),
            raw: u32_at(12),
            count: u32_at(16),
            t_first: u64_at(20),
            t_last: u64_at(28),
            payload_crc: u32_at(36),
        };
        let ok = matches!(h.kind, KIND_EVENTS | KIND_END)
            && matches!(h.codec, CODEC_STORED | CODEC_ZSTD)
            && b[6] == 0
            && b[7] == 0
            && h.stored <= MAX_STORED
            && h.raw <= MAX_RAW
            && h.count <= MAX_RECORDS
            && h.t_first <= h.t_last
            && (h.codec != CODEC_STORED || h.stored == h.raw);
        if ok {
            Ok(h)
        } else {
            Err("a frame header out of bounds")
        }
    }

    /// Bytes of the whole frame in the file.
    pub fn len(&self) -> u64 {
        FRAME_HEADER as u64 + u64::from(self.stored)
    }
}

/// A frame: header and (compressed when that helps) payload.
pub fn encode_frame(
    kind: u8,
    raw: &[u8],
    count: u32,
    t: (Nanos, Nanos),
    zstd: Option<&mut zstd::bulk::Compressor<'static>>,
) -> Vec<u8> {
    assert!(raw.len() <= MAX_RAW as usize, "a block past MAX_RAW");
    let packed = zstd
        .and_then(|z| z.compress(raw).ok())
        .filter(|p| p.len() < raw.len());
    let (codec, payload) = match &packed {
        Some(p) => (CODEC_ZSTD, p.as_slice()),
        None => (CODEC_STORED, raw),
    };
    let h = FrameHeader {
        kind,
        codec,
        stored: payload.len() as u32,
        raw: raw.len() as u32,
        count,
        t_first: t.0,
        t_last: t.1,
        payload_crc: crc32fast::hash(payload),
    };
    let mut out = Vec::with_capacity(FRAME_HEADER + payload.len());
    out.extend_from_slice(&h.encode());
    out.extend_from_slice(payload);
    out
}

/// The payload of a frame, checked and decompressed (never past `raw` bytes).
pub fn unpack(h: &FrameHeader, payload: &[u8]) -> Result<Vec<u8>, String> {
    if crc32fast::hash(payload) != h.payload_crc {
        return Err("its checksum does not match".into());
    }
    match h.codec {
        CODEC_STORED => Ok(payload.to_vec()),
        _ => {
            let out = zstd::bulk::decompress(payload, h.raw as usize)
                .map_err(|e| format!("it does not decompress: {e}"))?;
            if out.len() != h.raw as usize {
                return Err(format!(
                    "it decompresses to {} bytes, not {}",
                    out.len(),
                    h.raw
                ));
            }
            Ok(out)
        }
    }
}

pub fn encode_trailer(end_frame_offset: u64) -> [u8; TRAILER] {
    let mut b = [0u8; TRAILER];
    b[..4].copy_from_slice(TRAILER_MAGIC);
    b[8..16].copy_from_slice(&end_frame_offset.to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(TRAILER_MAGIC);
    h.update(&b[8..16]);
    b[4..8].copy_from_slice(&h.finalize().to_le_bytes());
    b
}

pub fn parse_trailer(b: &[u8]) -> Option<u64> {
    if b.len() != TRAILER || &b[..4] != TRAILER_MAGIC {
        return None;
    }
    let mut h = crc32fast::Hasher::new();
    h.update(TRAILER_MAGIC);
    h.update(&b[8..16]);
    if h.finalize().to_le_bytes() != b[4..8] {
        return None;
    }
    Some(u64::from_le_bytes(b[8..16].try_into().ok()?))
}

/// The end frame (counts and index) and the trailer that points at it, for a file whose end
/// frame starts at byte `at`: what a recorder and a relay write last.
pub fn encode_end(
    at: u64,
    t_end: Nanos,
    records: u64,
    dropped: super::Hole,
    index: Vec<IndexEntry>,
    zstd: Option<&mut zstd::bulk::Compressor<'static>>,
) -> Vec<u8> {
    let end = EndPayload {
        t_end,
        records,
        dropped: super::Hole {
            from: 0,
            to: t_end,
            ..dropped
        },
        index: (index.len() <= MAX_INDEX).then_some(index),
    };
    let mut out = encode_frame(KIND_END, &end.encode(), 1, (t_end, t_end), zstd);
    out.extend_from_slice(&encode_trailer(at));
    out
}

/// What the end frame says: the recorder's counts and where every events frame is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndPayload {
    pub t_end: Nanos,
    pub records: u64,
    pub dropped: super::Hole,
    /// `None` when the recording had too many frames for one end frame: readers scan.
    pub index: Option<Vec<IndexEntry>>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndexEntry {
    pub offset: u64,
    pub len: u64,
    pub t_first: Nanos,
    pub t_last: Nanos,
    pub count: u32,
}

/// Index entries one end frame holds at most (each takes at most about 40 bytes).
pub const MAX_INDEX: usize = (MAX_RAW as usize - 64) / 48;

impl EndPayload {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![];
        for v in [
            self.t_end,
            self.records,
            self.dropped.samples,
            self.dropped.spans,
            self.dropped.other,
        ] {
            put_varint(&mut b, v);
        }
        match &self.index {
            Some(ix) if ix.len() <= MAX_INDEX => {
                b.push(1);
                put_varint(&mut b, ix.len() as u64);
                for e in ix {
                    put_varint(&mut b, e.offset);
                    put_varint(&mut b, e.len);
                    put_varint(&mut b, e.t_first);
                    put_varint(&mut b, e.t_last - e.t_first);
                    put_varint(&mut b, u64::from(e.count));
                }
            }
            _ => b.push(0),
        }
        b
    }

    pub fn decode(data: &[u8]) -> Option<EndPayload> {
        let mut pos = 0;
        let mut next = || get_varint(data, &mut pos);
        let (t_end, records) = (next()?, next()?);
        let dropped = super::Hole {
            from: 0,
            to: t_end,
            samples: next()?,
            spans: next()?,
            other: next()?,
        };
        let has_index = *data.get(pos)?;
        pos += 1;
        let index = if has_index == 1 {
            let n = get_varint(data, &mut pos)?;
            // Five varints of at least a byte each: `n` cannot outrun the payload.
            if n > (data.len() - pos) as u64 / 5 {
                return None;
            }
            let mut ix = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let mut v = || get_varint(data, &mut pos);
                let (offset, len, t_first, dt, count) = (v()?, v()?, v()?, v()?, v()?);
                ix.push(IndexEntry {
                    offset,
                    len,
                    t_first,
                    t_last: t_first.checked_add(dt)?,
                    count: u32::try_from(count).ok()?,
                });
            }
            Some(ix)
        } else {
            None
        };
        (pos == data.len()).then_some(EndPayload {
            t_end,
            records,
            dropped,
            index,
        })
    }
}
