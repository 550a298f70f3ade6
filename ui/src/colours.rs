//! The colours a terminal shows: 24-bit, the 256-colour palette, the 16 basic colours, or none
//! (`NO_COLOR`). A theme written in `#rrggbb` is fitted to what the terminal has, so a
//! 256-colour terminal never gets 24-bit escapes it would misdraw.

use ratatui::style::Color;

use crate::theme::Theme;

/// What the terminal can show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Colours {
    /// 24-bit colour (`COLORTERM=truecolor` or `24bit`).
    #[default]
    Rgb,
    /// The xterm 256-colour palette (`TERM=*-256color`).
    Indexed,
    /// The 16 basic colours.
    Basic,
    /// None: `NO_COLOR` is set (text attributes and glyphs still tell things apart).
    None,
}

impl Colours {
    /// From the environment, as <https://no-color.org> and terminals set it.
    pub fn detect() -> Colours {
        let var = |k: &str| std::env::var(k).ok();
        Colours::from_env(
            var("NO_COLOR").as_deref(),
            var("COLORTERM").as_deref(),
            var("TERM").as_deref(),
        )
    }

    /// From the values of `NO_COLOR`, `COLORTERM` and `TERM`.
    pub fn from_env(
        no_color: Option<&str>,
        colorterm: Option<&str>,
        term: Option<&str>,
    ) -> Colours {
        if no_color.is_some_and(|v| !v.is_empty()) {
            return Colours::None;
        }
        if matches!(colorterm, Some("truecolor" | "24bit")) {
            return Colours::Rgb;
        }
        match term {
            Some(t) if t.contains("256color") => Colours::Indexed,
            Some("dumb") => Colours::None,
            _ => Colours::Basic,
        }
    }

    /// `c` as this terminal can show it: the nearest palette entry, or the terminal's own.
    pub fn fit(self, c: Color) -> Color {
        match (self, c) {
            (Colours::None, _) => Color::Reset,
            (Colours::Rgb, c) => c,
            (Colours::Indexed, Color::Rgb(r, g, b)) => Color::Indexed(cube(r, g, b)),
            (Colours::Basic, Color::Rgb(r, g, b)) => basic(r, g, b),
            (Colours::Basic, Color::Indexed(i)) if i >= 16 => {
                let (r, g, b) = of_index(i);
                basic(r, g, b)
            }
            (_, c) => c,
        }
    }

    /// `theme` with every colour fitted.
    pub fn theme(self, theme: &Theme) -> Theme {
        let mut t = theme.clone();
        t.map_colours(|c| self.fit(c));
        t
    }
}

/// The nearest entry of the 256-colour palette: its 6×6×6 cube or its grey ramp.
fn cube(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| {
        (0..6)
            .min_by_key(|i| (i32::from(LEVELS[*i]) - i32::from(v)).abs())
            .unwrap_or(0) as u8
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let in_cube = 16 + 36 * ri + 6 * gi + bi;
    let grey_avg = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let grey = (grey_avg.saturating_sub(8) / 10).min(23) as u8;
    let dist = |(x, y, z): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    match dist(of_index(232 + grey)) < dist(of_index(in_cube)) {
        true => 232 + grey,
        false => in_cube,
    }
}

/// The RGB of a 256-palette entry from 16 up.
fn of_index(i: u8) -> (u8, u8, u8) {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match i {
        232.. => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
        16.. => {
            let n = i - 16;
            (
                LEVELS[(n / 36) as usize],
                LEVELS[(n / 6 % 6) as usize],
                LEVELS[(n % 6) as usize],
            )
        }
        _ => (128, 128, 128),
    }
}

/// The nearest of the 16 basic colours, by hue and brightness.
fn basic(r: u8, g: u8, b: u8) -> Color {
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let bright = max > 170;
    if max - min < 40 {
        return match max {
            0..=60 => Color::Black,
            61..=150 => Color::DarkGray,
            151..=210 => Color::Gray,
            _ => Color::White,
        };
    }
    let on = |v: u8| u16::from(v) * 2 > u16::from(max) + u16::from(min);
    match (on(r), on(g), on(b), bright) {
        (true, false, false, false) => Color::Red,
        (true, false, false, true) => Color::LightRed,
        (false, true, false, false) => Color::Green,
        (false, true, false, true) => Color::LightGreen,
        (true, true, false, false) => Color::Yellow,
        (true, true, false, true) => Color::LightYellow,
        (false, false, true, false) => Color::Blue,
        (false, false, true, true) => Color::LightBlue,
        (true, false, true, false) => Color::Magenta,
        (true, false, true, true) => Color::LightMagenta,
        (false, true, true, false) => Color::Cyan,
        (false, true, true, true) => Color::LightCyan,
        _ => Color::Gray,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_says_what_it_shows() {
        assert_eq!(
            Colours::from_env(Some("1"), Some("truecolor"), None),
            Colours::None
        );
        assert_eq!(
            Colours::from_env(Some(""), Some("truecolor"), None),
            Colours::Rgb
        );
        assert_eq!(
            Colours::from_env(None, None, Some("xterm-256color")),
            Colours::Indexed
        );
        assert_eq!(Colours::from_env(None, None, Some("xterm")), Colours::Basic);
        assert_eq!(Colours::from_env(None, None, Some("dumb")), Colours::None);
    }

    #[test]
    fn colours_are_fitted_to_the_palette() {
        let blue = Color::Rgb(0x61, 0xaf, 0xef);
        assert_eq!(Colours::Rgb.fit(blue), blue);
        assert_eq!(Colours::Indexed.fit(blue), Color::Indexed(75));
        assert_eq!(
            Colours::Indexed.fit(Color::Rgb(0x80, 0x80, 0x80)),
            Color::Indexed(244)
        );
        assert_eq!(Colours::Basic.fit(blue), Color::LightCyan);
        assert_eq!(Colours::Basic.fit(Color::Rgb(200, 30, 30)), Color::LightRed);
        assert_eq!(Colours::None.fit(Color::Red), Color::Reset);
        // Every colour of every theme is one the terminal has.
        let t = Colours::Indexed.theme(&Theme::default());
        let mut seen = vec![];
        let mut t2 = t.clone();
        t2.map_colours(|c| {
            seen.push(c);
            c
        });
        assert!(!seen.is_empty());
        assert!(
            seen.iter().all(|c| !matches!(c, Color::Rgb(..))),
            "{seen:?}"
        );
    }
}
