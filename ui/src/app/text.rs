//! Text typed at the bottom line or into a settings field: a mark's label, a time to seek to,
//! a value for an engine key.

use provetop_telemetry::control::{Control, Transport};
use provetop_telemetry::Nanos;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::input::apply;
use super::{App, PromptKind, Row};

fn text_key(text: &mut String, k: &KeyEvent) {
    match k.code {
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
        _ => {}
    }
}

pub(super) fn prompt_key(app: &mut App, k: &KeyEvent) -> Vec<Control> {
    match k.code {
        KeyCode::Esc => app.ui.prompt = None,
        KeyCode::Enter => {
            let Some(p) = app.ui.prompt.take() else {
                return vec![];
            };
            let text = p.text;
            if p.kind == PromptKind::Seek {
                return match parse_time(&text) {
                    Some(t) => vec![Control::Replay(Transport::SeekTo(t))],
                    None => {
                        let msg = format!(
                            "`{}`: a time is 1:30, 1:02:03, 90s, 2.5m or 1h",
                            text.trim()
                        );
                        app.ui.notify(app.state.now, msg, true);
                        vec![]
                    }
                };
            }
            let label = if text.trim().is_empty() {
                format!("mark {}", app.state.logs.marks.len() + 1)
            } else {
                text.trim().to_string()
            };
            return vec![Control::Mark { label }];
        }
        _ => {
            if let Some(p) = app.ui.prompt.as_mut() {
                text_key(&mut p.text, k);
            }
        }
    }
    vec![]
}

pub(super) fn edit_key(app: &mut App, k: &KeyEvent) -> Vec<Control> {
    match k.code {
        KeyCode::Esc => app.ui.form.editing = None,
        KeyCode::Enter => {
            let text = app.ui.form.editing.take().unwrap_or_default();
            if let Row::Engine(key) = app.ui.form.current_row() {
                let cfg = app.state.config.current.clone();
                app.ui.form.set_pending(key, text.trim().to_string(), &cfg);
            }
            return apply(app);
        }
        _ => {
            if let Some(t) = app.ui.form.editing.as_mut() {
                text_key(t, k);
            }
        }
    }
    vec![]
}

/// A session time as typed: `1:30`, `1:02:03`, `90`, `90s`, `2.5m`, `1h`.
pub fn parse_time(s: &str) -> Option<Nanos> {
    let s = s.trim();
    let secs = if s.contains(':') {
        let mut total = 0.0;
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() > 3 {
            return None;
        }
        for (i, p) in parts.iter().enumerate() {
            let v: f64 = p.parse().ok()?;
            // Every part but the last is a whole number; minutes and seconds below 60.
            if v.is_nan()
                || v < 0.0
                || (i + 1 < parts.len() && v.fract() != 0.0)
                || (i > 0 && v >= 60.0)
            {
                return None;
            }
            total = total * 60.0 + v;
        }
        total
    } else {
        let (num, unit) = match s.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
            Some((i, _)) => (&s[..i], &s[i..]),
            None => (s, "s"),
        };
        let v: f64 = num.trim().parse().ok()?;
        let scale = match unit.trim() {
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "ms" => 1e-3,
            _ => return None,
        };
        if v.is_nan() || v < 0.0 {
            return None;
        }
        v * scale
    };
    (secs.is_finite() && secs < 1e9).then_some((secs * 1e9) as Nanos)
}
