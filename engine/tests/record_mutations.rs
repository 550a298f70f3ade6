//! 1,000 mutated recordings: bit flips, overwritten, deleted, inserted, duplicated and
//! swapped ranges, cuts, and frame headers rewritten with their checksums fixed up (so the
//! bounds, not the checksums, must catch the lengths they claim). None may panic, none may
//! make the decoder allocate past a fixed bound, and nothing damaged may come out as a record:
//! every record read is one the original holds.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

use provetop_engine::telemetry::fixture::{self, Spec};
use provetop_engine::telemetry::record::{Header, Record, RecorderOptions, Recording, Writer};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::io::Cursor;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts live heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                let now = LIVE.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

/// What one decode may allocate at most: a frame's stored and raw payloads (4 MiB each), its
/// records (65,536) with their strings (16 MiB), with room to spare.
const BOUND: usize = 96 << 20;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn original() -> Vec<u8> {
    let header = Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "test".into(),
        version: 1,
    };
    let mut w = Writer::new(vec![], &header, RecorderOptions::default()).unwrap();
    let mut next = 500_000_000;
    for r in fixture::records(&Spec::busy_gpu(6, 3)) {
        if r.time() >= next {
            w.flush_frame().unwrap();
            next += 500_000_000;
        }
        w.push(&r).unwrap();
    }
    w.finish().unwrap()
}

/// Offsets of frame headers (found by their magic) in `b`.
fn frame_starts(b: &[u8]) -> Vec<usize> {
    (0..b.len().saturating_sub(44))
        .filter(|&i| &b[i..i + 4] == b"PTRF")
        .collect()
}

fn mutate(b: &mut Vec<u8>, rng: &mut Rng) -> &'static str {
    let len = b.len();
    match rng.below(9) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(len);
                b[i] ^= 1 << rng.below(8);
            }
            "bit flips"
        }
        1 => {
            let (i, n) = (rng.below(len), 1 + rng.below(300));
            for x in &mut b[i..(i + n).min(len)] {
                *x = rng.next() as u8;
            }
            "overwritten range"
        }
        2 => {
            let (i, n) = (rng.below(len), 1 + rng.below(2000));
            b.drain(i..(i + n).min(len));
            "deleted range"
        }
        3 => {
            let i = rng.below(len);
            let junk: Vec<u8> = (0..1 + rng.below(500)).map(|_| rng.next() as u8).collect();
            b.splice(i..i, junk);
            "inserted bytes"
        }
        4 => {
            let (i, n) = (rng.below(len), 1 + rng.below(5000));
            let chunk = b[i..(i + n).min(len)].to_vec();
            let at = rng.below(len);
            b.splice(at..at, chunk);
            "duplicated range"
        }
        5 => {
            let n = 1 + rng.below(len / 4);
            let (i, j) = (rng.below(len - n), rng.below(len - n));
            let (x, y) = (b[i..i + n].to_vec(), b[j..j + n].to_vec());
            b[i..i + n].copy_from_slice(&y);
            b[j..j + n].copy_from_slice(&x);
            "swapped ranges"
        }
        6 => {
            b.truncate(rng.below(len));
            "cut"
        }
        7 => {
            // A frame header claiming other lengths, counts or times, its checksum fixed up.
            let starts = frame_starts(b);
            if starts.is_empty() {
                return "no frame to rewrite";
            }
            let h = starts[rng.below(starts.len())];
            let field = [8usize, 12, 16, 20, 28][rng.below(5)];
            let value: u32 = match rng.below(4) {
                0 => u32::MAX,
                1 => 4 << 20,
                2 => 0,
                _ => rng.next() as u32,
            };
            b[h + field..h + field + 4].copy_from_slice(&value.to_le_bytes());
            let crc = crc32(&b[h..h + 40]);
            b[h + 40..h + 44].copy_from_slice(&crc.to_le_bytes());
            "rewritten frame header"
        }
        _ => {
            // The file header's JSON length rewritten, its checksum left alone.
            let v = [u32::MAX, 1 << 20, 0, rng.next() as u32][rng.below(4)];
            b[20..24].copy_from_slice(&v.to_le_bytes());
            "header length"
        }
    }
}

/// CRC-32 (IEEE), bit by bit: the test checks the format's checksums independently.
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &x in data {
        c ^= u32::from(x);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn a_thousand_mutated_files() {
    let orig = original();
    let known: HashSet<String> = {
        let mut rec = Recording::from_reader(Cursor::new(orig.clone())).unwrap();
        let mut set = HashSet::new();
        rec.for_each(|r| {
            set.insert(format!("{r:?}"));
        });
        set
    };
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let (mut opened, mut refused, mut records_read) = (0, 0, 0u64);
    let mut peak_over = 0usize;
    let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
    for n in 0..1000 {
        let mut b = orig.clone();
        let kind = mutate(&mut b, &mut rng);
        if rng.below(4) == 0 {
            mutate(&mut b, &mut rng);
        }
        *kinds.entry(kind).or_default() += 1;
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let mut read: Vec<Record> = vec![];
        match Recording::from_reader(Cursor::new(&b[..])) {
            Ok(mut rec) => {
                opened += 1;
                let report = rec.for_each(|r| read.push(r.clone()));
                let _ = report.notes();
            }
            Err(e) => {
                refused += 1;
                assert!(!e.to_string().is_empty());
            }
        }
        let used = PEAK.load(Ordering::Relaxed).saturating_sub(base);
        peak_over = peak_over.max(used);
        assert!(used < BOUND, "file {n} ({kind}): {used} bytes allocated");
        for r in &read {
            assert!(
                known.contains(&format!("{r:?}")),
                "file {n} ({kind}): a record that is not in the original: {r:?}"
            );
        }
        records_read += read.len() as u64;
    }
    eprintln!(
        "1000 mutated files: {opened} opened, {refused} refused, {records_read} records read, \
         peak decode allocation {:.1} MiB; mutations {kinds:?}",
        peak_over as f64 / (1 << 20) as f64
    );
    assert!(opened > 500 && refused > 50);
}
