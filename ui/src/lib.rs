//! provetop's dashboard. It knows the telemetry and control types only: `state` folds one
//! stream of `Event`s (from a live engine or, later, a replay file) into what the views read,
//! `view` draws that state as a pure function of (state, theme, UI state), and `app` turns
//! keys and mouse into UI changes and `Control`s for whoever drives the engine.
//!
//! Where this crate sits among the others, and the data flow: docs/architecture.md.

#![warn(missing_docs)]

pub mod app;
pub mod colours;
pub mod config_edit;
pub mod fleet;
pub mod fmt;
pub mod keys;
pub mod replay;
pub mod settings;
pub mod state;
pub mod terminal;
pub mod theme;
pub mod view;

pub use app::{App, AppOptions};
pub use colours::Colours;
pub use ratatui;
pub use settings::UiSettings;
pub use state::State;
pub use theme::Theme;
