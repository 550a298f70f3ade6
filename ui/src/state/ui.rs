//! The dashboard's UI state: which view and pane has focus, the timeline's window (live or
//! paused, zoom), selections, the settings form, what the source reports each frame. `app`
//! changes it from keys and mouse; `view` reads it and never changes it.

use std::path::PathBuf;

use provetop_telemetry::Nanos;

use super::form::Form;
use super::{LaneRef, State};
use crate::settings::UiSettings;

/// One second in session time (nanoseconds).
pub const SECOND: Nanos = 1_000_000_000;

/// Timeline windows, from 1 s to 10 min.
pub const ZOOMS: [Nanos; 9] = [
    SECOND,
    2 * SECOND,
    5 * SECOND,
    10 * SECOND,
    30 * SECOND,
    60 * SECOND,
    120 * SECOND,
    300 * SECOND,
    600 * SECOND,
];
/// The zoom a session starts at: an index into [`ZOOMS`] (30 s).
pub const DEFAULT_ZOOM: usize = 4;

/// A view of the dashboard: one screen, chosen by its tab or by moving the focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Lanes of spans against time, per device and pool, with the log strip below.
    Timeline,
    /// Jobs and their partitions through the stages.
    Pipeline,
    /// Per-device and host metrics over time.
    Metrics,
    /// The settings form and the history of config changes.
    Settings,
    /// The whole log.
    Log,
}

/// Every view with its tab's title, in tab order.
pub const VIEWS: [(View, &str); 5] = [
    (View::Timeline, "Timeline"),
    (View::Pipeline, "Pipeline"),
    (View::Metrics, "Metrics"),
    (View::Settings, "Settings"),
    (View::Log, "Log"),
];

/// What has the keyboard. Tab walks this ring in order; the view follows the pane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// The timeline's lanes.
    Lanes,
    /// The log strip under the timeline.
    LogStrip,
    /// The pipeline's table of jobs.
    Jobs,
    /// The metrics view's device cards.
    Devices,
    /// The settings form's rows.
    Form,
    /// The settings view's history of config changes.
    History,
    /// The log view's lines.
    LogLines,
}

/// Every pane, in the order Tab walks them.
pub const PANES: [Pane; 7] = [
    Pane::Lanes,
    Pane::LogStrip,
    Pane::Jobs,
    Pane::Devices,
    Pane::Form,
    Pane::History,
    Pane::LogLines,
];

impl Pane {
    /// The view this pane is part of.
    pub fn view(self) -> View {
        match self {
            Pane::Lanes | Pane::LogStrip => View::Timeline,
            Pane::Jobs => View::Pipeline,
            Pane::Devices => View::Metrics,
            Pane::Form | Pane::History => View::Settings,
            Pane::LogLines => View::Log,
        }
    }
}

impl View {
    /// The first pane of this view in [`PANES`]: where focus goes when the view is picked.
    pub fn first_pane(self) -> Pane {
        PANES
            .iter()
            .copied()
            .find(|p| p.view() == self)
            .unwrap_or(Pane::Lanes)
    }
}

/// The selected idle gap: the device and the gap's start, which stays put while it grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapSel {
    /// Index of the device in `State::timelines.devices`.
    pub device: usize,
    /// Session time the gap starts at (nanoseconds).
    pub start: Nanos,
}

/// A message on the bottom line, shown until `until`.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    /// The message, one line.
    pub text: String,
    /// Drawn in the theme's error colour when set.
    pub error: bool,
    /// Session time it stops being shown (nanoseconds): 6 s after it was raised.
    pub until: Nanos,
}

/// What a prompt's text is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PromptKind {
    /// A mark's label.
    #[default]
    Mark,
    /// A replay's time to go to.
    Seek,
}

/// Text being typed at the bottom line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prompt {
    /// What has been typed so far.
    pub text: String,
    /// What the text is for once Enter is pressed.
    pub kind: PromptKind,
}

/// A replay's transport, as its source reports it each frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayStatus {
    /// The recording's path, as it was given.
    pub file: String,
    /// Whether playback advances; false while paused.
    pub playing: bool,
    /// Playback rate as a multiple of real time (0.25 to 64).
    pub speed: f64,
    /// Session time the recording starts at (nanoseconds).
    pub start: Nanos,
    /// The latest session time the recording covers (nanoseconds).
    pub end: Nanos,
}

/// A running server watched over the network (`provetop attach`), as its source reports it each
/// frame.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteStatus {
    /// The server's address, as it was given.
    pub addr: String,
    /// Whether the stream is up, and if not why.
    pub link: Link,
    /// Whether the server takes this viewer's changes (it holds the control token).
    pub control: bool,
}

/// The state of a watched server's stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Link {
    /// Receiving the server's history; live once it is through.
    CatchingUp,
    /// Live.
    Live,
    /// The stream was lost: why, how long ago, and when the next attempt is (seconds).
    Lost {
        /// The error, in words.
        why: String,
        /// Seconds since the stream was lost.
        for_s: u64,
        /// Seconds to the next attempt to reconnect.
        retry_in_s: u64,
    },
}

/// A recording in progress, as the live source reports it each frame.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordingStatus {
    /// The recording's path.
    pub file: String,
    /// Bytes written so far.
    pub bytes: u64,
    /// Events the recorder could not write (the disk fell behind).
    pub dropped: u64,
}

/// The dashboard's UI state: focus, the timeline's window, selections, prompt and notice; input
/// changes it, drawing only reads it.
pub struct Ui {
    /// The pane that has the keyboard; it also picks the view.
    pub focus: Pane,
    /// Whether the help overlay is shown.
    pub help: bool,
    /// Lines the help overlay is scrolled down, where it is taller than the terminal.
    pub help_scroll: usize,
    /// The end of the timeline's window while paused; `None` follows the clock.
    pub paused_at: Option<Nanos>,
    /// The timeline's window length: an index into [`ZOOMS`] (clamped where read).
    pub zoom: usize,
    /// Index into `State::timelines.lanes()`.
    pub lane: usize,
    /// The idle gap selected on the timeline; `None` when none is.
    pub gap: Option<GapSel>,
    /// The job under the pipeline table's cursor, by id; `None` puts the cursor on the first row.
    pub job: Option<u64>,
    /// Lines scrolled up from the newest, in the log strip and the log view.
    pub log_scroll: usize,
    /// Lines scrolled up from the newest in the settings view's history of config changes.
    pub history_scroll: usize,
    /// Device cards scrolled past at the top of the metrics view.
    pub device_scroll: usize,
    /// The settings form: selected row, pending engine values, text being typed.
    pub form: Form,
    /// Text being typed at the bottom line; `None` when no prompt is open.
    pub prompt: Option<Prompt>,
    /// The bottom line's message; `None`, or one past its `until`, shows the pane's keys.
    pub notice: Option<Notice>,
    /// The `[ui]` settings in effect, saved back from the settings form.
    pub settings: UiSettings,
    /// The spec of the theme in use: a built-in name, a user theme's name or a path.
    pub theme_name: String,
    /// Where `[ui]` is saved; `None` when there is nowhere (no HOME, no --config).
    pub config_path: Option<PathBuf>,
    /// Partitions of a job submitted from the dashboard.
    pub partitions: u32,
    /// The terminal's size at the last draw, for mapping mouse positions.
    pub size: (u16, u16),
    /// Set when the source is a recording: its transport.
    pub replay: Option<ReplayStatus>,
    /// Set while the live session is being recorded.
    pub recording: Option<RecordingStatus>,
    /// Set when the session is a server's, watched over the network.
    pub remote: Option<RemoteStatus>,
    /// Until when a second quit key quits although jobs are in flight.
    pub confirm_quit: Option<Nanos>,
    /// Esc with nothing to cancel leaves, as quit does: a rig's dashboard opened from the
    /// fleet goes back to it.
    pub esc_leaves: bool,
    /// The session time under the mouse on the lanes (the last click or hover): the cell
    /// whose exact figures the timeline shows.
    pub cell: Option<Nanos>,
    /// Where the live session's run is (setup, proving, finished), as its source says.
    pub run: RunPhase,
}

/// Where a live session's run is: the header shows it, so a run that is setting up or has
/// finished never reads as an idle engine.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum RunPhase {
    /// The source says nothing (a replay, a server).
    #[default]
    Unknown,
    /// Setting up before the first job: what (`parameters for k14: G1 queries`), done 0..1,
    /// and seconds spent and left (None until there is a rate to tell).
    Setup {
        /// What is being set up.
        what: String,
        /// The share done, 0 to 1.
        done: f64,
        /// Seconds spent on it so far.
        elapsed: f64,
        /// Seconds left at the rate so far.
        left: Option<f64>,
    },
    /// Proving: until quit (`None`), or `--proofs N` jobs, `done` of them finished.
    Proving {
        /// Jobs finished so far.
        done: u64,
        /// The run's bound; None proves until quit.
        bound: Option<u64>,
    },
    /// A bounded run has finished every job it had.
    Finished {
        /// Its jobs.
        jobs: u64,
    },
}

impl Ui {
    /// UI state at its start: live, the lanes focused, the default zoom, nothing selected.
    pub fn new(settings: UiSettings, theme_name: &str) -> Ui {
        Ui {
            focus: Pane::Lanes,
            help: false,
            help_scroll: 0,
            paused_at: None,
            zoom: DEFAULT_ZOOM,
            lane: 0,
            gap: None,
            job: None,
            log_scroll: 0,
            history_scroll: 0,
            device_scroll: 0,
            form: Form::default(),
            prompt: None,
            notice: None,
            settings,
            theme_name: theme_name.to_string(),
            config_path: None,
            partitions: 1,
            size: (0, 0),
            replay: None,
            recording: None,
            remote: None,
            confirm_quit: None,
            esc_leaves: false,
            cell: None,
            run: RunPhase::Unknown,
        }
    }

    /// The view of the focused pane.
    pub fn view(&self) -> View {
        self.focus.view()
    }

    /// The timeline's window length in nanoseconds.
    pub fn zoom_len(&self) -> Nanos {
        ZOOMS[self.zoom.min(ZOOMS.len() - 1)]
    }

    /// Where the timeline was paused, never after `now`; `None` when live. In the first
    /// window of a session it lies before the window's end, which cannot be earlier than a
    /// whole zoom.
    pub fn paused_point(&self, now: Nanos) -> Option<Nanos> {
        self.paused_at.map(|p| p.min(now))
    }

    /// The timeline's window `[t0, t1)`: always a whole zoom long, ending now when live.
    pub fn window(&self, now: Nanos) -> (Nanos, Nanos) {
        let len = self.zoom_len();
        let end = self.paused_at.unwrap_or(now).min(now).max(len);
        (end - len, end)
    }

    /// The lane under the lane cursor (clamped to the last lane); `None` when there are no lanes.
    pub fn selected_lane(&self, state: &State) -> Option<LaneRef> {
        let lanes = state.timelines.lanes();
        lanes
            .get(self.lane.min(lanes.len().saturating_sub(1)))
            .copied()
    }

    /// The device under the lane cursor (a pool lane means the first device).
    pub fn selected_device(&self, state: &State) -> Option<usize> {
        match self.selected_lane(state) {
            Some(LaneRef::Device(d, _)) => Some(d),
            _ => (!state.timelines.devices.is_empty()).then_some(0),
        }
    }

    /// Shows `text` on the bottom line for 6 s from `now`, in the error colour if `error`.
    pub fn notify(&mut self, now: Nanos, text: impl Into<String>, error: bool) {
        self.notice = Some(Notice {
            text: text.into(),
            error,
            until: now + 6 * SECOND,
        });
    }
}
