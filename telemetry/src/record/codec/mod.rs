//! The records inside one frame, before compression: a tag byte per record, then its fields.
//! Integers are LEB128 varints, times zigzag deltas from the frame's previous time, floats
//! 8 bytes, strings references into a table built as the frame goes (0 = a new string follows:
//! its length and bytes; n = the n-th string so far). Enums are written by name or by an
//! explicit number here, never by declaration order, so reordering a Rust enum cannot change
//! the format.
//!
//! `encode` writes a frame's records, `decode` reads them back under the caps below.

mod decode;
mod encode;
#[cfg(test)]
mod tests;

pub use decode::decode_block;
pub use encode::BlockEncoder;

use crate::{JobState, Stage};

/// Longest string written; longer ones (a huge log message) are cut at a char boundary.
pub const MAX_STRING: usize = 64 * 1024;
/// Strings one frame may define.
pub const MAX_STRINGS: usize = 1 << 16;
/// Bytes of strings one frame may expand to once every reference is copied out: what bounds
/// a decoder's memory when a frame refers to one long string many times.
pub const MAX_STRING_BYTES: usize = 16 << 20;

const SPAN: u8 = 1;
const SAMPLE: u8 = 2;
const CONFIG: u8 = 3;
const JOB: u8 = 4;
const PROOF: u8 = 5;
const LOG: u8 = 6;
const MARK: u8 = 7;
/// A job event with its kind: `JOB`'s fields, then the kind (format version 2).
const JOB_KIND: u8 = 8;
/// A job event with a name (a served request's id): `JOB`'s fields, then the kind if any, then
/// the name (format version 3).
const JOB_NAMED: u8 = 9;
const HOLE: u8 = 16;
const RUN: u8 = 17;

fn job_state_code(s: JobState) -> u8 {
    match s {
        JobState::Submitted => 0,
        JobState::Synthesized => 1,
        JobState::Proving => 2,
        JobState::Verified => 3,
        JobState::Failed => 4,
        JobState::Cancelled => 5,
    }
}

fn job_state(c: u8) -> Option<JobState> {
    Some(match c {
        0 => JobState::Submitted,
        1 => JobState::Synthesized,
        2 => JobState::Proving,
        3 => JobState::Verified,
        4 => JobState::Failed,
        5 => JobState::Cancelled,
        _ => return None,
    })
}

fn stage_named(key: &str) -> Option<Stage> {
    Stage::ALL.iter().copied().find(|s| s.key() == key)
}

/// LEB128 helpers for the end frame's index.
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

pub fn get_varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}
