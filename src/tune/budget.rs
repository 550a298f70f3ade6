//! `tune --budget`: a time from the first job or a number of proofs.

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
        let (n, unit) = [("s", 1.0), ("m", 60.0), ("h", 3600.0)]
            .iter()
            .find_map(|(suf, m)| t.strip_suffix(suf).map(|n| (n, *m)))
            .ok_or_else(bad)?;
        match n.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 && x * unit <= 7.0 * 86400.0 => Ok(TuneBudget::Time(
                std::time::Duration::from_secs_f64(x * unit),
            )),
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for TuneBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TuneBudget::Time(d) => write!(f, "{}s", d.as_secs_f64()),
            TuneBudget::Proofs(n) => write!(f, "{n}p"),
        }
    }
}
