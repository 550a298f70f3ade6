//! What the dashboard (or any other front end) asks of the engine. The UI never calls into
//! the prover: it sends `Control`s, and sees their effects as telemetry events (a refused
//! change comes back as a `Config` event with its error).

use std::path::PathBuf;

use crate::Nanos;

#[derive(Clone, Debug, PartialEq)]
pub enum Control {
    /// Change `[engine]` fields at the next safe point; all or nothing.
    Reconfigure {
        changes: Vec<(String, String)>,
    },
    /// Submit a job of the session's workload.
    Submit {
        partitions: u32,
    },
    Cancel {
        job: u64,
    },
    /// A user annotation on the timeline.
    Mark {
        label: String,
    },
    /// Start recording to `path`, or stop with `None`.
    Record {
        path: Option<PathBuf>,
    },
    /// Transport of a replay; ignored by a live engine.
    Replay(Transport),
    Quit,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    Play,
    Pause,
    /// Playback speed, 0.25 to 64.
    Speed(f64),
    SeekTo(Nanos),
    NextMark,
    NextConfig,
}
