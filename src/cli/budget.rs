//! `tune --budget`: a time from the first job or a number of proofs; and the times other
//! flags take (`serve --history`).

/// `--budget`: how long `tune` searches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TuneBudget {
    /// Wall time from the first job.
    Time(std::time::Duration),
    /// Finished partitions (each one proof).
    Proofs(u64),
}

impl std::str::FromStr for TuneBudget {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let bad = || {
            format!(
                "expected a time such as 90s, 5m or 1h, or a number of proofs such as 200p, got `{s}`"
            )
        };
        if let Some(n) = t.strip_suffix('p') {
            return match n.trim().parse::<u64>() {
                Ok(n) if n >= 1 => Ok(TuneBudget::Proofs(n)),
                _ => Err(bad()),
            };
        }
        match seconds(t) {
            Some(x) if x > 0.0 => Ok(TuneBudget::Time(std::time::Duration::from_secs_f64(x))),
            _ => Err(bad()),
        }
    }
}

/// Seconds of `90s`, `5m`, `1.5h` (0 to a week); `None` for anything else.
fn seconds(t: &str) -> Option<f64> {
    let (n, unit) = [("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .iter()
        .find_map(|(suf, m)| t.trim().strip_suffix(suf).map(|n| (n, *m)))?;
    let x = n.trim().parse::<f64>().ok()? * unit;
    (x.is_finite() && (0.0..=7.0 * 86400.0).contains(&x)).then_some(x)
}

/// A time such as `90s`, `10m` or `1.5h` (0 to a week).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    seconds(s)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("expected a time such as 90s, 10m or 1h, got `{s}`"))
}

impl std::fmt::Display for TuneBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TuneBudget::Time(d) => write!(f, "{}s", d.as_secs_f64()),
            TuneBudget::Proofs(n) => write!(f, "{n}p"),
        }
    }
}
