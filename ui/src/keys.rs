//! Key bindings: actions named as in the `[ui.keys]` table, the keys of common TUIs by
//! default, each rebindable to one key or a list.

use std::collections::HashMap;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key does; [`ACTIONS`] names each for `[ui.keys]` and gives its default keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Quits; with jobs in flight on a live engine, only when pressed again.
    Quit,
    /// Opens the help overlay.
    Help,
    /// Pauses or resumes the timeline (a replay's playback, when replaying).
    Pause,
    /// Back to live: unpauses and drops the gap and cell selections.
    Live,
    /// Focus to the next pane of the ring.
    FocusNext,
    /// Focus to the previous pane of the ring.
    FocusPrev,
    /// Back in time on the lanes; a value down in the settings form.
    Left,
    /// On in time on the lanes; a value up in the settings form.
    Right,
    /// Up a lane, row or line in the focused pane.
    Up,
    /// Down a lane, row or line in the focused pane.
    Down,
    /// A page up: a whole window earlier on the lanes, several rows elsewhere.
    PageUp,
    /// A page down: a whole window later on the lanes, several rows elsewhere.
    PageDown,
    /// A shorter timeline window (down to 1 s).
    ZoomIn,
    /// A longer timeline window (up to 10 min).
    ZoomOut,
    /// Selects the previous idle gap of the device under the lane cursor.
    PrevGap,
    /// Selects the next idle gap of the device under the lane cursor.
    NextGap,
    /// In the settings form: edits the row, applies pending values, or saves.
    Enter,
    /// Cancels, discards pending values, or closes, by pane.
    Back,
    /// Submits a job to the live engine.
    Submit,
    /// Cancels the job under the pipeline table's cursor.
    CancelJob,
    /// Opens the prompt for a mark's label.
    Mark,
    /// Switches to the next built-in theme.
    Theme,
    /// Saves `[ui]` to the config file.
    Save,
    /// Saves the `[engine]` values changed from the dashboard to the config file.
    SaveEngine,
    /// Shows the timeline view.
    ViewTimeline,
    /// Shows the pipeline view.
    ViewPipeline,
    /// Shows the metrics view.
    ViewMetrics,
    /// Shows the settings view.
    ViewSettings,
    /// Shows the log view.
    ViewLog,
    /// Starts or stops recording the live session.
    Record,
    /// Replay: halves the speed (down to 0.25×).
    Slower,
    /// Replay: doubles the speed (up to 64×).
    Faster,
    /// Replay: opens the prompt for a time to go to.
    Seek,
    /// Replay: goes to the next mark.
    NextMark,
    /// Replay: goes to the next config change.
    NextConfig,
    /// Applies the advisor's first recommendation to the live engine.
    ApplyAdvice,
}

/// `(action, name in [ui.keys], default keys, what it does)`; the help overlay lists these.
pub const ACTIONS: [(Action, &str, &[&str], &str); 36] = [
    (Action::Quit, "quit", &["q"], "quit (ctrl-c too)"),
    (Action::Help, "help", &["?", "f1"], "this help"),
    (Action::Pause, "pause", &["space"], "pause / resume"),
    (Action::Live, "live", &["end"], "back to live"),
    (Action::FocusNext, "focus_next", &["tab"], "next pane"),
    (
        Action::FocusPrev,
        "focus_prev",
        &["backtab"],
        "previous pane",
    ),
    (Action::Left, "left", &["left", "h"], "back in time / less"),
    (Action::Right, "right", &["right", "l"], "on in time / more"),
    (Action::Up, "up", &["up", "k"], "up a lane, row, line"),
    (
        Action::Down,
        "down",
        &["down", "j"],
        "down a lane, row, line",
    ),
    (Action::PageUp, "page_up", &["pageup"], "a page up"),
    (Action::PageDown, "page_down", &["pagedown"], "a page down"),
    (
        Action::ZoomIn,
        "zoom_in",
        &["+", "="],
        "zoom in (down to 1 s)",
    ),
    (
        Action::ZoomOut,
        "zoom_out",
        &["-", "_"],
        "zoom out (up to 10 min)",
    ),
    (Action::PrevGap, "prev_gap", &["["], "previous idle gap"),
    (Action::NextGap, "next_gap", &["]"], "next idle gap"),
    (Action::Enter, "enter", &["enter"], "edit / apply changes"),
    (Action::Back, "back", &["esc"], "cancel / discard / close"),
    (Action::Submit, "submit", &["n"], "submit a job"),
    (
        Action::CancelJob,
        "cancel_job",
        &["x"],
        "cancel the selected job",
    ),
    (Action::Mark, "mark", &["m"], "add a mark"),
    (
        Action::ApplyAdvice,
        "apply_advice",
        &["a"],
        "apply the advisor's first advice",
    ),
    (Action::Record, "record", &["R"], "start / stop recording"),
    (Action::Theme, "theme", &["t"], "next theme"),
    (Action::Save, "save", &["w"], "save [ui] to config file"),
    (
        Action::SaveEngine,
        "save_engine",
        &["W"],
        "save changed [engine] values",
    ),
    (
        Action::ViewTimeline,
        "view_timeline",
        &["1"],
        "timeline view",
    ),
    (
        Action::ViewPipeline,
        "view_pipeline",
        &["2"],
        "pipeline view",
    ),
    (Action::ViewMetrics, "view_metrics", &["3"], "metrics view"),
    (
        Action::ViewSettings,
        "view_settings",
        &["4", "s"],
        "settings view",
    ),
    (Action::ViewLog, "view_log", &["5"], "log view"),
    (Action::Slower, "slower", &["<", ","], "replay: slower"),
    (Action::Faster, "faster", &[">", "."], "replay: faster"),
    (Action::Seek, "seek", &["g"], "replay: go to a time"),
    (Action::NextMark, "next_mark", &["M"], "replay: next mark"),
    (
        Action::NextConfig,
        "next_config",
        &["C"],
        "replay: next config change",
    ),
];

/// A key as the config file spells it: `q`, `space`, `ctrl-x`, `f1`, `pageup`, …
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// The key itself, with shift already applied to characters.
    pub code: KeyCode,
    /// Whether Control is held.
    pub ctrl: bool,
    /// Whether Alt is held.
    pub alt: bool,
}

impl Key {
    /// The key of a terminal event, shift left out.
    pub fn of(e: &KeyEvent) -> Key {
        // Terminals report shift+tab as BackTab and upper-case letters with shift already
        // applied, so shift is not part of a key.
        Key {
            code: e.code,
            ctrl: e.modifiers.contains(KeyModifiers::CONTROL),
            alt: e.modifiers.contains(KeyModifiers::ALT),
        }
    }

    /// Reads a key as `[ui.keys]` spells it (`q`, `ctrl-x`, `f1`); the error lists the names.
    pub fn parse(s: &str) -> Result<Key, String> {
        let mut rest = s;
        let (mut ctrl, mut alt) = (false, false);
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-").filter(|r| !r.is_empty()) {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-").filter(|r| !r.is_empty()) {
                alt = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = match rest {
            "space" => KeyCode::Char(' '),
            "tab" => KeyCode::Tab,
            "backtab" | "shift-tab" => KeyCode::BackTab,
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "backspace" => KeyCode::Backspace,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "delete" => KeyCode::Delete,
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                let n: u8 = f[1..].parse().unwrap_or(0);
                if !(1..=12).contains(&n) {
                    return Err(format!("no key `{s}`"));
                }
                KeyCode::F(n)
            }
            c if c.chars().count() == 1 => KeyCode::Char(c.chars().next().unwrap_or(' ')),
            _ => {
                return Err(format!(
                    "no key `{s}`; keys are one character, space, tab, backtab, enter, esc, \
                 backspace, arrows (left…), home, end, pageup, pagedown, delete, f1-f12, \
                 with ctrl- or alt- before them"
                ))
            }
        };
        Ok(Key { code, ctrl, alt })
    }

    /// The key as hints and the help show it: `ctrl-x`, `space`, `←`.
    pub fn name(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Tab => "tab".into(),
            KeyCode::BackTab => "shift-tab".into(),
            KeyCode::Enter => "enter".into(),
            KeyCode::Esc => "esc".into(),
            KeyCode::Backspace => "backspace".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Home => "home".into(),
            KeyCode::End => "end".into(),
            KeyCode::PageUp => "pgup".into(),
            KeyCode::PageDown => "pgdn".into(),
            KeyCode::Delete => "del".into(),
            KeyCode::F(n) => format!("f{n}"),
            _ => "?".into(),
        };
        match (self.ctrl, self.alt) {
            (true, _) => format!("ctrl-{base}"),
            (_, true) => format!("alt-{base}"),
            _ => base,
        }
    }
}

/// Bindings both ways: the action of each key and the keys of each action.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyMap {
    by_key: HashMap<Key, Action>,
    by_action: HashMap<Action, Vec<Key>>,
}

impl Default for KeyMap {
    fn default() -> Self {
        KeyMap::with(&[]).expect("the default bindings parse")
    }
}

impl KeyMap {
    /// The defaults with `overrides` (`action name`, keys) replacing an action's keys.
    pub fn with(overrides: &[(String, Vec<String>)]) -> Result<KeyMap, String> {
        let mut by_action: HashMap<Action, Vec<Key>> = HashMap::new();
        for (a, _, keys, _) in ACTIONS {
            let keys = keys
                .iter()
                .map(|k| Key::parse(k))
                .collect::<Result<_, _>>()?;
            by_action.insert(a, keys);
        }
        for (name, keys) in overrides {
            let action = action_named(name).ok_or_else(|| {
                format!(
                    "keys.{name}: unknown action; the actions are {}",
                    ACTIONS.map(|a| a.1).join(", ")
                )
            })?;
            let keys = keys
                .iter()
                .map(|k| Key::parse(k).map_err(|e| format!("keys.{name}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            by_action.insert(action, keys);
        }
        let mut by_key = HashMap::new();
        for (a, _, _, _) in ACTIONS {
            for k in &by_action[&a] {
                if let Some(other) = by_key.insert(*k, a) {
                    return Err(format!(
                        "keys: `{}` is bound to both {} and {}",
                        k.name(),
                        name_of(other),
                        name_of(a)
                    ));
                }
            }
        }
        Ok(KeyMap { by_key, by_action })
    }

    /// The action bound to a key event; `None` when the key is unbound.
    pub fn action(&self, e: &KeyEvent) -> Option<Action> {
        let k = Key::of(e);
        self.by_key.get(&k).copied().or_else(|| {
            // Terminals differ on whether shifted symbols carry SHIFT; ignore it for chars.
            matches!(k.code, KeyCode::Char(_))
                .then(|| self.by_key.get(&Key { ctrl: k.ctrl, ..k }))
                .flatten()
                .copied()
        })
    }

    /// The first key of an action, for hints: `q`, `space`, `←`.
    pub fn key(&self, a: Action) -> String {
        self.by_action
            .get(&a)
            .and_then(|k| k.first())
            .map_or_else(|| "—".into(), Key::name)
    }

    /// Every key of an action, space-separated, for the help overlay; empty when unbound.
    pub fn keys(&self, a: Action) -> String {
        self.by_action
            .get(&a)
            .map(|k| k.iter().map(Key::name).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    }
}

/// The action `name` names in `[ui.keys]`; `None` for a name that is none.
pub fn action_named(name: &str) -> Option<Action> {
    ACTIONS.iter().find(|a| a.1 == name).map(|a| a.0)
}

/// The `[ui.keys]` name of an action.
pub fn name_of(a: Action) -> &'static str {
    ACTIONS.iter().find(|x| x.0 == a).map_or("?", |x| x.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let m = KeyMap::default();
        let ev = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(m.action(&ev(KeyCode::Char('q'))), Some(Action::Quit));
        assert_eq!(m.action(&ev(KeyCode::Char(' '))), Some(Action::Pause));
        assert_eq!(m.action(&ev(KeyCode::Char('j'))), Some(Action::Down));
        let m = KeyMap::with(&[("quit".into(), vec!["ctrl-q".into(), "Q".into()])]).unwrap();
        assert_eq!(m.action(&ev(KeyCode::Char('q'))), None);
        assert_eq!(
            m.action(&KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert!(KeyMap::with(&[("qiut".into(), vec!["q".into()])])
            .unwrap_err()
            .contains("keys.qiut"));
        assert!(KeyMap::with(&[("help".into(), vec!["j".into()])])
            .unwrap_err()
            .contains("bound to both"));
        assert!(Key::parse("f13").is_err() && Key::parse("hyper-x").is_err());
    }
}
