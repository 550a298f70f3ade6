//! Numbers as an operator reads them.

use provetop_telemetry::Nanos;

/// Session time: `m:ss`, `h:mm:ss` past an hour; `m:ss.s` when `fine`.
pub fn clock(t: Nanos, fine: bool) -> String {
    let s = t / 1_000_000_000;
    let (h, m, sec) = (s / 3600, (s / 60) % 60, s % 60);
    let tenth = (t / 100_000_000) % 10;
    match (h, fine) {
        (0, false) => format!("{m}:{sec:02}"),
        (0, true) => format!("{m}:{sec:02}.{tenth}"),
        (_, false) => format!("{h}:{m:02}:{sec:02}"),
        (_, true) => format!("{h}:{m:02}:{sec:02}.{tenth}"),
    }
}

/// A duration in seconds: `1.23 s`, `412 ms`, `87 µs`.
pub fn secs(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0} s")
    } else if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

/// A duration in nanoseconds, as `secs` writes it: `1.25 s`, `40 ms`.
pub fn nanos(n: Nanos) -> String {
    secs(n as f64 / 1e9)
}

/// Window lengths: `1 s`, `30 s`, `2 min`.
pub fn window(n: Nanos) -> String {
    let s = n / 1_000_000_000;
    if s >= 60 {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

/// Binary sizes: `84.1 GiB`.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// A part of a whole in the whole's unit: `88.7/140.4 GiB`.
pub fn bytes_of(part: f64, whole: f64) -> String {
    let w = bytes(whole);
    let (num, unit) = w.split_once(' ').unwrap_or((&w, ""));
    let scale = whole / num.parse::<f64>().unwrap_or(whole).max(f64::MIN_POSITIVE);
    format!("{:.1}/{num} {unit}", part / scale)
}

/// Decimal rates, as link speeds are quoted: `22.1 GB/s`.
pub fn rate(b: f64) -> String {
    const UNITS: [&str; 5] = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s"];
    let mut v = b;
    let mut i = 0;
    while v >= 1000.0 && i < UNITS.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    format!("{v:.1} {}", UNITS[i])
}

/// A ratio as a whole percentage (`0.25` is `25%`), clamped to 0–999 %.
pub fn pct(r: f64) -> String {
    format!("{:.0}%", (r * 100.0).clamp(0.0, 999.0))
}

/// `1 gap`, `49 gaps`.
pub fn plural(n: u64, what: &str) -> String {
    match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    }
}

/// Counts with thousands separated: `4,408`.
pub fn count(n: f64) -> String {
    let n = n.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Cuts `s` to `w` columns, with an ellipsis when cut.
pub fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(w - 1).collect();
    out.push('…');
    out
}

/// As many whole `items` as fit in `w` columns, joined by `sep`, with `…` when some were left
/// out: a value never loses its unit to the edge of a pane.
pub fn items(items: &[String], sep: &str, w: usize) -> String {
    let all = items.join(sep);
    if width(&all) <= w {
        return all;
    }
    // Some are left out: keep a column for the ellipsis.
    let mut out = String::new();
    for it in items {
        let more = if out.is_empty() {
            width(it)
        } else {
            width(sep) + width(it)
        };
        if width(&out) + more + 1 > w {
            break;
        }
        if !out.is_empty() {
            out.push_str(sep);
        }
        out.push_str(it);
    }
    if w > 0 {
        out.push('…');
    }
    out
}

/// `items` packed greedily into lines of at most `w` columns, whole items only (one too wide
/// for a line is cut with [`fit`]).
pub fn pack(items: &[String], sep: &str, w: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    for it in items {
        match lines.last_mut() {
            Some(l) if width(l) + width(sep) + width(it) <= w => {
                l.push_str(sep);
                l.push_str(it);
            }
            _ => lines.push(fit(it, w)),
        }
    }
    lines
}

fn width(s: &str) -> usize {
    s.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(clock(83_456_000_000, true), "1:23.4");
        assert_eq!(clock(3_723_000_000_000, false), "1:02:03");
        assert_eq!(secs(0.412), "412 ms");
        assert_eq!(bytes(84.1 * (1u64 << 30) as f64), "84.1 GiB");
        assert_eq!(rate(22.1e9), "22.1 GB/s");
        assert_eq!(
            bytes_of(88.7 * 1073741824.0, 140.4 * 1073741824.0),
            "88.7/140.4 GiB"
        );
        assert_eq!(count(4408.2), "4,408");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(window(600_000_000_000), "10 min");
    }

    #[test]
    fn items_are_kept_whole() {
        let v: Vec<String> = ["abc 1.0 GiB", "buckets 2.1 GiB", "srs 1.1 GiB"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            items(&v, " · ", 80),
            "abc 1.0 GiB · buckets 2.1 GiB · srs 1.1 GiB"
        );
        // Exactly the width: nothing left out, no ellipsis.
        assert_eq!(
            items(&v, " · ", 43),
            "abc 1.0 GiB · buckets 2.1 GiB · srs 1.1 GiB"
        );
        assert_eq!(items(&v, " · ", 40), "abc 1.0 GiB · buckets 2.1 GiB…");
        assert_eq!(items(&v, " · ", 12), "abc 1.0 GiB…");
        assert_eq!(items(&v, " · ", 5), "…");
        assert_eq!(
            pack(&v, " · ", 30),
            ["abc 1.0 GiB · buckets 2.1 GiB", "srs 1.1 GiB"]
        );
        assert_eq!(pack(&v, " · ", 8), ["abc 1.0…", "buckets…", "srs 1.1…"]);
    }
}
