//! Colour themes as data: `themes/*.toml`, three built in (dark, light, high-contrast), or a
//! user's file by path. A theme that fails to load is reported and the default used.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use provetop_telemetry::Stage;
use ratatui::style::{Color, Modifier, Style};

/// The built-in themes: (name, TOML text), the default first.
pub const BUILTIN: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

/// The theme used when none is set or the set one fails to load.
pub const DEFAULT: &str = "dark";

/// Every span kind, for themes and legends.
pub const ALL_STAGES: [Stage; 22] = Stage::ALL;

/// A theme as loaded: `[ui]` colours, a colour and a glyph per stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    /// The theme's `name`; for a file without one, the spec it was loaded by.
    pub name: String,
    /// Text, and the spans of stages the theme gives no colour.
    pub fg: Color,
    /// Background; `Reset` is the terminal's own.
    pub bg: Color,
    /// Secondary text: labels, separators, figures that are zero.
    pub dim: Color,
    /// Highlights: key names in hints and help, values being edited, a playing replay.
    pub accent: Color,
    /// Titles of panes and the header's name.
    pub title: Color,
    /// Pane borders and the timeline's axis.
    pub border: Color,
    /// The border of the focused pane.
    pub border_focus: Color,
    /// Background of the selected row.
    pub selection_bg: Color,
    /// Good news: live, verified counts, notices that are not errors.
    pub ok: Color,
    /// Warnings and what needs attention: paused, events dropped or not recorded.
    pub warn: Color,
    /// Errors and failures.
    pub error: Color,
    /// Idle gaps on a compute lane.
    pub gap: Color,
    /// The selected idle gap.
    pub gap_selected: Color,
    /// Marks (`▼`) on the timeline and in the log.
    pub mark: Color,
    /// Config changes (`◆`) on the timeline and in the header.
    pub config: Color,
    /// The filled part of a gauge.
    pub gauge: Color,
    /// The empty part of a gauge.
    pub gauge_empty: Color,
    /// Sparklines and charts.
    pub chart: Color,
    /// The cell drawn for an idle gap on a compute lane (`[glyphs] idle`).
    pub idle_glyph: char,
    stages: HashMap<Stage, Color>,
    glyphs: HashMap<Stage, char>,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::builtin(DEFAULT).expect("the default theme parses")
    }
}

impl Theme {
    /// The built-in theme `name`; `None` for a name that is not built in.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Some(Theme::parse(text, None).expect("built-in themes are tested"))
    }

    /// The colour of spans of stage `s`; text colour for a stage the theme leaves out.
    pub fn stage(&self, s: Stage) -> Color {
        self.stages.get(&s).copied().unwrap_or(self.fg)
    }

    /// The cell drawn for a busy lane of stage `s`; `█` where the theme gives none.
    pub fn glyph(&self, s: Stage) -> char {
        self.glyphs.get(&s).copied().unwrap_or('█')
    }

    /// Text on an accent background: the theme's background, or black where it is the
    /// terminal's own (unknown) colour.
    pub fn bg_or_black(&self) -> Color {
        match self.bg {
            Color::Reset => Color::Black,
            c => c,
        }
    }

    /// Text on the theme's background.
    pub fn base(&self) -> Style {
        Style::default().fg(self.fg).bg(self.bg)
    }

    /// Secondary text: labels, separators.
    pub fn dim(&self) -> Style {
        Style::default().fg(self.dim)
    }

    /// A title: bold, in the title colour.
    pub fn title(&self) -> Style {
        Style::default().fg(self.title).add_modifier(Modifier::BOLD)
    }

    /// A pane's border, in the focus colour when `focused`.
    pub fn border(&self, focused: bool) -> Style {
        Style::default().fg(if focused {
            self.border_focus
        } else {
            self.border
        })
    }

    /// The selected row's background.
    pub fn selected(&self) -> Style {
        Style::default().bg(self.selection_bg)
    }

    /// Every colour of the theme through `f` (fitting it to a terminal's palette).
    pub fn map_colours(&mut self, mut f: impl FnMut(Color) -> Color) {
        for c in [
            &mut self.fg,
            &mut self.bg,
            &mut self.dim,
            &mut self.accent,
            &mut self.title,
            &mut self.border,
            &mut self.border_focus,
            &mut self.selection_bg,
            &mut self.ok,
            &mut self.warn,
            &mut self.error,
            &mut self.gap,
            &mut self.gap_selected,
            &mut self.mark,
            &mut self.config,
            &mut self.gauge,
            &mut self.gauge_empty,
            &mut self.chart,
        ] {
            *c = f(*c);
        }
        for c in self.stages.values_mut() {
            *c = f(*c);
        }
    }

    /// Parses a theme; keys left out take `base`'s values (the default theme when `None`).
    pub fn parse(text: &str, base: Option<&Theme>) -> Result<Theme, String> {
        let doc: toml::Table = toml::from_str(text).map_err(|e| format!("not valid TOML: {e}"))?;
        let default_base;
        let mut t = match base {
            Some(b) => b.clone(),
            None => {
                default_base = Theme::bootstrap();
                default_base
            }
        };
        for (key, value) in &doc {
            match (key.as_str(), value) {
                ("name", toml::Value::String(s)) => t.name = s.clone(),
                ("ui", toml::Value::Table(ui)) => {
                    for (k, v) in ui {
                        let c = colour(v).map_err(|e| format!("ui.{k}: {e}"))?;
                        *t.ui_slot(k).ok_or_else(|| format!("ui.{k}: unknown key"))? = c;
                    }
                }
                ("stages", toml::Value::Table(st)) => {
                    for (k, v) in st {
                        let stage =
                            stage_of(k).ok_or_else(|| format!("stages.{k}: unknown stage"))?;
                        t.stages
                            .insert(stage, colour(v).map_err(|e| format!("stages.{k}: {e}"))?);
                    }
                }
                ("glyphs", toml::Value::Table(gl)) => {
                    for (k, v) in gl {
                        let g = glyph(v).map_err(|e| format!("glyphs.{k}: {e}"))?;
                        if k == "idle" {
                            t.idle_glyph = g;
                        } else {
                            let stage =
                                stage_of(k).ok_or_else(|| format!("glyphs.{k}: unknown stage"))?;
                            t.glyphs.insert(stage, g);
                        }
                    }
                }
                (k, _) => {
                    return Err(format!(
                        "{k}: unknown key or wrong type; a theme has name, [ui], [stages], [glyphs]"
                    ))
                }
            }
        }
        Ok(t)
    }

    /// The starting point of the built-in default itself: plain terminal colours.
    fn bootstrap() -> Theme {
        let mut t = Theme {
            name: String::new(),
            fg: Color::Reset,
            bg: Color::Reset,
            dim: Color::DarkGray,
            accent: Color::Blue,
            title: Color::Yellow,
            border: Color::DarkGray,
            border_focus: Color::Blue,
            selection_bg: Color::DarkGray,
            ok: Color::Green,
            warn: Color::Yellow,
            error: Color::Red,
            gap: Color::Red,
            gap_selected: Color::Yellow,
            mark: Color::Cyan,
            config: Color::Magenta,
            gauge: Color::Blue,
            gauge_empty: Color::DarkGray,
            chart: Color::Green,
            idle_glyph: '░',
            stages: HashMap::new(),
            glyphs: HashMap::new(),
        };
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == DEFAULT) {
            // The default names every key; parse it over the plain colours.
            if let Ok(d) = Theme::parse(text, Some(&t.clone())) {
                t = d;
            }
        }
        t
    }

    fn ui_slot(&mut self, key: &str) -> Option<&mut Color> {
        Some(match key {
            "fg" => &mut self.fg,
            "bg" => &mut self.bg,
            "dim" => &mut self.dim,
            "accent" => &mut self.accent,
            "title" => &mut self.title,
            "border" => &mut self.border,
            "border_focus" => &mut self.border_focus,
            "selection_bg" => &mut self.selection_bg,
            "ok" => &mut self.ok,
            "warn" => &mut self.warn,
            "error" => &mut self.error,
            "gap" => &mut self.gap,
            "gap_selected" => &mut self.gap_selected,
            "mark" => &mut self.mark,
            "config" => &mut self.config,
            "gauge" => &mut self.gauge,
            "gauge_empty" => &mut self.gauge_empty,
            "chart" => &mut self.chart,
            _ => return None,
        })
    }
}

/// The stage whose `[stages]` key is `key` (`msm_h`); `None` for no stage.
pub fn stage_of(key: &str) -> Option<Stage> {
    ALL_STAGES.iter().copied().find(|s| s.key() == key)
}

fn glyph(v: &toml::Value) -> Result<char, String> {
    let s = v.as_str().ok_or("expected a one-character string")?;
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(format!("expected one character, got `{s}`")),
    }
}

fn colour(v: &toml::Value) -> Result<Color, String> {
    if let Some(i) = v.as_integer() {
        return u8::try_from(i)
            .map(Color::Indexed)
            .map_err(|_| format!("palette index {i} is not 0-255"));
    }
    let s = v
        .as_str()
        .ok_or("expected a colour such as \"#61afef\", \"red\" or \"reset\"")?;
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() == 6 {
            if let Ok(n) = u32::from_str_radix(hex, 16) {
                return Ok(Color::Rgb((n >> 16) as u8, (n >> 8) as u8, n as u8));
            }
        }
        return Err(format!("`{s}` is not #rrggbb"));
    }
    let named = match s.to_ascii_lowercase().replace(['-', '_', ' '], "").as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return Err(format!("unknown colour `{s}`")),
    };
    Ok(named)
}

/// Where a theme spec points: a built-in name, a file path, or a name under `user_dir`.
fn locate(spec: &str, user_dir: Option<&Path>) -> Result<PathBuf, String> {
    let p = Path::new(spec);
    if spec.contains('/') || spec.ends_with(".toml") || p.is_file() {
        return Ok(p.to_path_buf());
    }
    if let Some(f) = user_dir
        .map(|d| d.join(format!("{spec}.toml")))
        .filter(|f| f.is_file())
    {
        return Ok(f);
    }
    Err(format!(
        "unknown theme `{spec}`; the themes are {}, or a path to a .toml file",
        names().join(", ")
    ))
}

/// Loads a theme by built-in name, path, or name of a file in `user_dir`.
pub fn load(spec: &str, user_dir: Option<&Path>) -> Result<Theme, String> {
    if let Some(t) = Theme::builtin(spec) {
        return Ok(t);
    }
    let path = locate(spec, user_dir)?;
    let text =
        provetop_telemetry::input::read_regular_text(&path, provetop_telemetry::input::SMALL_FILE)
            .map_err(|e| format!("theme {}: {e}", path.display()))?;
    let mut t = Theme::parse(&text, None).map_err(|e| format!("theme {}: {e}", path.display()))?;
    if t.name.is_empty() || t.name == DEFAULT {
        t.name = spec.to_string();
    }
    Ok(t)
}

/// Loads `spec`, or the default with the reason it was not used.
pub fn load_or_default(spec: &str, user_dir: Option<&Path>) -> (Theme, Option<String>) {
    match load(spec, user_dir) {
        Ok(t) => (t, None),
        Err(e) => (
            Theme::default(),
            Some(format!("{e}; using the {DEFAULT} theme")),
        ),
    }
}

/// The built-in themes' names, the default first.
pub fn names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_name_every_key() {
        for (name, text) in BUILTIN {
            let doc: toml::Table = toml::from_str(text).unwrap();
            let ui = doc["ui"].as_table().unwrap();
            let stages = doc["stages"].as_table().unwrap();
            assert_eq!(ui.len(), 18, "{name}: every [ui] colour");
            for s in ALL_STAGES {
                assert!(stages.contains_key(s.key()), "{name}: stages.{}", s.key());
            }
            assert_eq!(Theme::builtin(name).unwrap().name, name);
        }
    }

    #[test]
    fn malformed_themes_are_reported_and_the_default_used() {
        let dir = tempfile::tempdir().unwrap();
        for (text, want) in [
            ("[ui]\nfg = \"#12345\"", "ui.fg"),
            ("[ui]\nfgg = \"red\"", "ui.fgg"),
            ("[stages]\nmsm_z = \"red\"", "stages.msm_z"),
            ("[glyphs]\nidle = \"ab\"", "glyphs.idle"),
            ("[ui\n", "not valid TOML"),
        ] {
            let f = dir.path().join("bad.toml");
            std::fs::write(&f, text).unwrap();
            let (t, err) = load_or_default(f.to_str().unwrap(), None);
            assert_eq!(t, Theme::default());
            assert!(err.unwrap().contains(want), "{text}");
        }
        let (_, err) = load_or_default("no-such-theme", None);
        assert!(err.unwrap().contains("unknown theme"));
        let f = dir.path().join("mine.toml");
        std::fs::write(&f, "[ui]\nfg = \"red\"\n").unwrap();
        let t = load("mine", Some(dir.path())).unwrap();
        assert_eq!((t.fg, t.bg), (Color::Red, Theme::default().bg));
    }
}
