//! Writes a seed corpus for the decode target: small real-shaped recordings, whole, without
//! their trailer, and cut inside a frame.
//!   cargo run --manifest-path fuzz/Cargo.toml --bin seeds -- fuzz/corpus/decode

use provetop_telemetry::fixture::{self, Spec};
use provetop_telemetry::record::{Header, RecorderOptions, Writer};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "corpus/decode".into());
    std::fs::create_dir_all(&dir).expect("creating the corpus folder");
    let header = Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "seeds".into(),
        version: 1,
    };
    for (name, seconds, every) in [("tiny", 1, 250_000_000), ("small", 3, 500_000_000)] {
        let mut w = Writer::new(vec![], &header, RecorderOptions::default()).expect("a writer");
        let mut next = every;
        for r in fixture::records(&Spec::busy_gpu(seconds, 7)) {
            if r.time() >= next {
                w.flush_frame().expect("a frame");
                next += every;
            }
            w.push(&r).expect("a record");
        }
        let bytes = w.finish().expect("the end");
        let write = |suffix: &str, b: &[u8]| {
            std::fs::write(format!("{dir}/{name}-{suffix}.ptrec"), b).expect("writing a seed")
        };
        write("whole", &bytes);
        write("no-trailer", &bytes[..bytes.len() - 16]);
        write("cut", &bytes[..bytes.len() * 2 / 3]);
    }
}
