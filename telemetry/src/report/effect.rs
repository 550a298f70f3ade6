//! Whether a change had an effect: the proofs per hour after it against before, with the
//! proof counts and the noise model `tune` keeps or sets back a change by. A window's noise is
//! the relative difference of its two halves' rates; a difference is an effect only beyond
//! twice the windows' mean noise (at least 3 %, at most 25 %).

use serde::Serialize;

use super::segments::{signed, thousands};
use crate::Nanos;

/// The fewest proofs a side that tell anything: a spread needs two halves of two.
pub const MIN_SIDE: usize = 4;
/// The least difference ever called an effect.
pub const MIN_NOISE: f64 = 0.03;
/// The most: beyond this any difference counts.
pub const MAX_NOISE: f64 = 0.25;

/// The relative difference of the two halves' rates of proofs finished at `times` (sorted)
/// in a window opened at `opened`: what one window's rate may be off by. None under
/// [`MIN_SIDE`] proofs.
pub fn spread(opened: Nanos, times: &[Nanos]) -> Option<f64> {
    let n = times.len();
    if n < MIN_SIDE {
        return None;
    }
    let mid = times[n / 2 - 1];
    let a = (n / 2) as f64 / (mid.saturating_sub(opened).max(1)) as f64;
    let b = (n - n / 2) as f64 / (times[n - 1].saturating_sub(mid).max(1)) as f64;
    Some((a - b).abs() / (a + b))
}

/// The relative difference that is more than noise: twice the mean of `spreads`, within
/// [`MIN_NOISE`] and [`MAX_NOISE`].
pub fn threshold(spreads: &[f64]) -> f64 {
    let mean = match spreads.is_empty() {
        true => 0.0,
        false => spreads.iter().sum::<f64>() / spreads.len() as f64,
    };
    (2.0 * mean).clamp(MIN_NOISE, MAX_NOISE)
}

/// Proofs per hour after a change against before.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Effect {
    /// Verified proofs per hour before, and how many proofs that counts.
    pub before: f64,
    /// Proofs finished before (inside the stretch compared).
    pub before_proofs: usize,
    /// Verified proofs per hour since.
    pub after: f64,
    /// Proofs finished since.
    pub after_proofs: usize,
    /// The relative difference that would be more than noise (0.03 = 3 %).
    pub noise: f64,
    /// Whether the difference is inside the noise, or a side has too few proofs to tell.
    pub within_noise: bool,
}

/// One side of a comparison: its stretch and the finish times of its verified proofs.
pub struct Side<'a> {
    /// Where the stretch starts and ends.
    pub start: Nanos,
    /// Where it ends (exclusive).
    pub end: Nanos,
    /// Verified proofs' finish times inside, sorted.
    pub times: &'a [Nanos],
}

impl Side<'_> {
    fn rate(&self) -> f64 {
        let secs = self.end.saturating_sub(self.start) as f64 / 1e9;
        match secs > 0.0 {
            true => self.times.len() as f64 * 3600.0 / secs,
            false => 0.0,
        }
    }
}

impl Effect {
    /// `after` against `before`, by the noise of both.
    pub fn between(before: &Side, after: &Side) -> Effect {
        let spreads: Vec<f64> = [before, after]
            .iter()
            .filter_map(|s| spread(s.start, s.times))
            .collect();
        let noise = threshold(&spreads);
        let (b, a) = (before.rate(), after.rate());
        let enough = before.times.len() >= MIN_SIDE && after.times.len() >= MIN_SIDE;
        let within = !enough || b <= 0.0 || (a / b - 1.0).abs() <= noise;
        Effect {
            before: b,
            before_proofs: before.times.len(),
            after: a,
            after_proofs: after.times.len(),
            noise,
            within_noise: within,
        }
    }

    /// Relative change in percent; None where there was no rate before.
    pub fn pct(&self) -> Option<f64> {
        (self.before > 0.0).then(|| (self.after / self.before - 1.0) * 100.0)
    }

    /// Whether both sides have proofs enough to tell an effect from noise.
    pub fn enough(&self) -> bool {
        self.before_proofs >= MIN_SIDE && self.after_proofs >= MIN_SIDE
    }

    /// `+8.9 % within noise · 3,920/h (12) vs 3,600/h (10)`: the line for a narrow pane.
    pub fn short(&self) -> String {
        let verdict = match (self.enough(), self.pct()) {
            (false, _) => "too few proofs to tell".to_string(),
            (true, None) => "none before".to_string(),
            (true, Some(p)) => format!(
                "{} {}",
                signed(p, " %"),
                match self.within_noise {
                    true => "within noise",
                    false => "beyond noise",
                }
            ),
        };
        format!(
            "{verdict} · {}/h ({}) vs {}/h ({})",
            thousands(self.after),
            self.after_proofs,
            thousands(self.before),
            self.before_proofs
        )
    }

    /// `since 3,920/h (12 proofs) vs before 3,600/h (10 proofs): +8.9 %, within noise (±12 %)`.
    pub fn line(&self) -> String {
        let side = |rate: f64, n: usize| format!("{}/h ({n} proofs)", thousands(rate));
        let verdict = match (self.enough(), self.pct()) {
            (false, _) => format!("too few proofs to tell ({MIN_SIDE} a side needed)"),
            (true, None) => "none before".to_string(),
            (true, Some(p)) => format!(
                "{}, {} (±{:.0} %)",
                signed(p, " %"),
                match self.within_noise {
                    true => "within noise",
                    false => "beyond noise",
                },
                self.noise * 100.0
            ),
        };
        format!(
            "since {} vs before {}: {verdict}",
            side(self.after, self.after_proofs),
            side(self.before, self.before_proofs)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn even(start: Nanos, n: u64, every: Nanos) -> Vec<Nanos> {
        (1..=n).map(|i| start + i * every).collect()
    }

    #[test]
    fn a_steady_rate_has_no_spread_and_an_uneven_one_has() {
        assert_eq!(spread(0, &even(0, 8, S)), Some(0.0));
        // First half at one a second, second half at one every three: (1 − 1/3) / (4/3).
        let mut t = even(0, 4, S);
        t.extend(even(4 * S, 4, 3 * S));
        assert!((spread(0, &t).unwrap_or(0.0) - 0.5).abs() < 1e-9);
        assert_eq!(spread(0, &even(0, 3, S)), None);
        assert_eq!(threshold(&[]), MIN_NOISE);
        assert!((threshold(&[0.05, 0.07]) - 0.12).abs() < 1e-12);
        assert_eq!(threshold(&[0.5]), MAX_NOISE);
    }

    #[test]
    fn a_difference_inside_the_noise_is_said_to_be() {
        let before = even(0, 10, S);
        let after = even(10 * S, 10, S + S / 50);
        let e = Effect::between(
            &Side {
                start: 0,
                end: 10 * S,
                times: &before,
            },
            &Side {
                start: 10 * S,
                end: 20 * S + S / 5,
                times: &after,
            },
        );
        assert!(e.within_noise, "{e:?}");
        assert!(e.line().contains("within noise (±3 %)"), "{}", e.line());
        assert!(
            e.line()
                .starts_with("since 3,529/h (10 proofs) vs before 3,600/h (10 proofs): −2.0 %"),
            "{}",
            e.line()
        );
        // Twice as fast is an effect.
        let after = even(10 * S, 20, S / 2);
        let e = Effect::between(
            &Side {
                start: 0,
                end: 10 * S,
                times: &before,
            },
            &Side {
                start: 10 * S,
                end: 20 * S,
                times: &after,
            },
        );
        assert!(
            !e.within_noise && e.line().contains("+100.0 %, beyond noise"),
            "{}",
            e.line()
        );
        // Three proofs tell nothing.
        let e = Effect::between(
            &Side {
                start: 0,
                end: 10 * S,
                times: &before,
            },
            &Side {
                start: 10 * S,
                end: 13 * S,
                times: &after[..3],
            },
        );
        assert!(
            e.within_noise
                && e.line()
                    .ends_with("too few proofs to tell (4 a side needed)")
        );
    }
}
