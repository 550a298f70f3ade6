//! What the dashboard (or any other front end) asks of the engine. The UI never calls into
//! the prover: it sends `Control`s, and sees their effects as telemetry events (a refused
//! change comes back as a `Config` event with its error).

use std::path::PathBuf;

use crate::Nanos;

/// A front end's request; the engine's answer comes back as events.
#[derive(Clone, Debug, PartialEq)]
pub enum Control {
    /// Change `[engine]` fields at the next safe point; all or nothing.
    Reconfigure {
        /// `(key, value)` pairs in `EngineConfig::set`'s text form.
        changes: Vec<(String, String)>,
    },
    /// Submit a job of the session's workload.
    Submit {
        /// Partitions in the job, at least 1.
        partitions: u32,
    },
    /// Cancel a job: partitions not started are dropped, the others at their next safe point.
    Cancel {
        /// The job's id, as in `JobEvent::job`.
        job: u64,
    },
    /// A user annotation on the timeline.
    Mark {
        /// The text to show, as the user typed it.
        label: String,
    },
    /// Start recording to `path`, or stop with `None`.
    Record {
        /// The recording's file; `None` stops the recording in progress.
        path: Option<PathBuf>,
    },
    /// Transport of a replay; ignored by a live engine.
    Replay(Transport),
    /// Leave the dashboard.
    Quit,
}

/// What a replay's player is asked to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    /// Play on from where it is.
    Play,
    /// Hold at the current time.
    Pause,
    /// Playback speed, 0.25 to 64.
    Speed(f64),
    /// Go to a time (nanoseconds since session start).
    SeekTo(Nanos),
    /// Go to the first mark after the current time, if any.
    NextMark,
    /// Go to the first configuration change after the current time, if any.
    NextConfig,
}
